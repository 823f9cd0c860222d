-- What `backfill` and `status` need to remember between runs: each source's
-- root folder and the recipe options it was last ingested with, and a
-- readable description of every recipe fingerprint seen.

CREATE TABLE mdchunks_sources (
    source        text        PRIMARY KEY,
    root          text        NOT NULL,
    recipe        text        NOT NULL,
    recipe_spec   jsonb       NOT NULL,
    max_doc_bytes bigint      NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE mdchunks_recipes (
    recipe     text        PRIMARY KEY,
    spec       jsonb       NOT NULL,
    first_seen timestamptz NOT NULL DEFAULT now()
);
