-- A source remembers which files its walk takes (docs/recipe.md, "What a
-- re-run does"): the largest document it reads (max_doc_bytes, stored since
-- migration 0004) and now whether it follows symlinks that lead outside its
-- folder. A plain `ingest` takes both from the source's last run, as it takes
-- the recipe: a run without `--follow-outside-links` no longer deletes the
-- rows of the linked documents an earlier run was told to read. Sources from
-- before did not record it: they are taken as not following such links (the
-- default, which reads nothing outside the folder).

ALTER TABLE mdchunks_sources
    ADD COLUMN follow_outside_links boolean NOT NULL DEFAULT false;

COMMENT ON COLUMN mdchunks_sources.follow_outside_links IS
    'Whether the last run of the source followed symlinks that lead outside its folder (ingest --follow-outside-links); later runs do as it did unless told otherwise.';
