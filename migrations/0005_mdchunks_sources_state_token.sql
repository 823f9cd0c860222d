-- Which engine state made a source's rows. Each successful run writes a new
-- random token here and next to its engine state (<data dir>/state/...); a
-- run whose engine state carries another token (another data dir ingested
-- the source since, or a restored database or state) starts from an empty
-- state instead of trusting memos that describe other rows.

ALTER TABLE mdchunks_sources ADD COLUMN state_token text;
