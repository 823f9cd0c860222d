-- A section table made by the `section_table_sql` of a release before
-- migration 0017 (docs/plugin.md), brought up to date: the title column, and
-- the check that lets a section before the first heading have the title as
-- its breadcrumb. Rows keep their values; running it twice changes nothing more.

ALTER TABLE {table} ADD COLUMN IF NOT EXISTS title text;

ALTER TABLE {table} DROP CONSTRAINT IF EXISTS "{prefix}_headings_together_check";
ALTER TABLE {table}
    ADD CONSTRAINT "{prefix}_headings_together_check" CHECK (
        (heading_text IS NULL) = (heading_level IS NULL)
        AND (heading_text IS NULL) = (cardinality(heading_path) = 0)
        AND (breadcrumb IS NULL) = (cardinality(heading_path) = 0 AND title IS NULL)
    );
