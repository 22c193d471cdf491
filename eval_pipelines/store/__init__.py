"""Storage: a DuckDB file or a PostgreSQL database (`postgres`) chosen by the connection string; the schema, row codecs, atomic partition writes, reads and the documented views."""
