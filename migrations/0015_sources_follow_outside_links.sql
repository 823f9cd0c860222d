-- A source remembers which files its walk takes (docs/recipe.md, "What a
-- re-run does"): the largest document it reads (max_doc_bytes, stored since
-- migration 0004, now taken by the next run too) and whether it follows
-- symlinks that lead outside its folder. A plain `ingest` takes both from the
-- source's last run, as it takes the recipe: a run without
-- `--follow-outside-links` no longer deletes the rows of the linked
-- documents an earlier run was told to read.
--
-- Sources from before did not record it: NULL. Their next run takes it from
-- their rows (flow/source/catalog.py, followed_outside_links): a document row
-- that a link leads to from outside the folder means the last run followed
-- such links; then it is recorded.

ALTER TABLE mdchunks_sources
    ADD COLUMN follow_outside_links boolean;

COMMENT ON COLUMN mdchunks_sources.follow_outside_links IS
    'Whether the last run of the source followed symlinks that lead outside its folder (ingest --follow-outside-links); later runs do as it did unless told otherwise. NULL: not recorded (before migration 0015): the next run takes it from the rows.';
COMMENT ON COLUMN mdchunks_sources.max_doc_bytes IS
    'The size limit of the last run (ingest --max-doc-bytes): larger documents were skipped, and later runs keep the limit unless told otherwise.';
