"""DuckDB storage: the schema, row codecs, atomic partition writes, reads and the documented views."""
