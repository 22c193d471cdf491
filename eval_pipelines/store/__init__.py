"""DuckDB storage: the schema, atomic partition writes, and reads."""
