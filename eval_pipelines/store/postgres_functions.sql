-- The DuckDB functions the store's readers call (reports, queries), defined in
-- PostgreSQL with DuckDB's meaning, so one SQL text reads both stores.
-- Statements are separated by a line holding only ';;'.

-- json_extract_string(doc, '$.a.b'): the value at that path as text (NULL when absent).
CREATE OR REPLACE FUNCTION json_extract_string(doc json, path text) RETURNS text
LANGUAGE sql IMMUTABLE AS $fn$
    SELECT doc #>> string_to_array(regexp_replace(path, '^\$\.?', ''), '.')
$fn$
;;

-- list(x): DuckDB's list aggregate (DISTINCT and ORDER BY work as for any aggregate).
DO $do$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_proc WHERE proname = 'list' AND prokind = 'a') THEN
        CREATE AGGREGATE list(anycompatible) (SFUNC = array_append, STYPE = anycompatiblearray, INITCOND = '{}');
    END IF;
END
$do$
;;
