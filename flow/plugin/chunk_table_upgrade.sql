-- A chunk table made by the `chunk_table_sql` of mdchunks 0.1 before
-- migration 0010 (docs/plugin.md), brought up to date: the line columns
-- and their check (migration 0009), table_header and section_ids (migration
-- 0011) if it lacks them, title and unsearched with the breadcrumb check that
-- allows a title alone (migration 0017), and the trigger that
-- also sets embed_text (migration 0010) in place of the one that set only the
-- search columns. Rows keep their values. (`chunk_table_upgrade_sql` puts
-- flow/plugin/chunk_columns.sql, the trigger's function, before it.)

ALTER TABLE {table}
    ADD COLUMN IF NOT EXISTS start_line integer,
    ADD COLUMN IF NOT EXISTS end_line integer,
    ADD COLUMN IF NOT EXISTS table_header text,
    ADD COLUMN IF NOT EXISTS section_ids uuid[] NOT NULL DEFAULT '{{}}',
    ADD COLUMN IF NOT EXISTS title text,
    ADD COLUMN IF NOT EXISTS unsearched integer[] NOT NULL DEFAULT '{{}}';

ALTER TABLE {table} DROP CONSTRAINT IF EXISTS "{prefix}_breadcrumb_check";
ALTER TABLE {table}
    ADD CONSTRAINT "{prefix}_breadcrumb_check"
    CHECK ((breadcrumb IS NULL) = (cardinality(heading_path) = 0 AND title IS NULL));

DO $do$
BEGIN
    IF NOT EXISTS (
        SELECT 1 FROM pg_catalog.pg_constraint
        WHERE conrelid = {table_literal}::regclass AND conname = {lines_check_literal}
    ) THEN
        ALTER TABLE {table}
            ADD CONSTRAINT "{prefix}_lines_check" CHECK (start_line >= 1 AND end_line >= start_line);
    END IF;
END
$do$;

DROP TRIGGER IF EXISTS "{prefix}_search_columns" ON {table};
DROP TRIGGER IF EXISTS "{prefix}_chunk_columns" ON {table};
CREATE TRIGGER "{prefix}_chunk_columns"
    BEFORE INSERT OR UPDATE ON {table}
    FOR EACH ROW EXECUTE FUNCTION {chunk_columns}();
