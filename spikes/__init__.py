"""The re-runnable evaluation harness (docs/harness.md).

Measures how truthful heading breadcrumbs are over chunks, per corpus and per
chunker ("mode"), and answers the memo questions of the original spike with
our own flow. Nothing imports this package; it imports heading_index, the
splitter of cocoindex and (for the memo probe only) flow.

Modules, one job each:
- `spikes.metrics`: pure functions over a HeadingIndex and chunk spans;
- `spikes.corpus`: markdown documents under a path, decoded like the flow;
- `spikes.modes`: mode name -> chunker (text -> spans);
- `spikes.report`: rows -> fixed-width table and JSON;
- `spikes.heading_eval`: the command `python -m spikes.heading_eval`;
- `spikes.memo_probe`: the command `python -m spikes.memo_probe`;
- `spikes.recall`: retrieval recall, pure: the hit rule, recall@k, first-hit
  ranks, reciprocal-rank fusion (issue #8; the fusion itself is
  `flow.fusion`, which the product's hybrid search uses);
- `spikes.retrieval_eval`: the command `python -m spikes.retrieval_eval`:
  recall@k per chunker x text x method over a golden set, with rows ingested
  by the flow into a throwaway embedded PostgreSQL;
- `spikes.golden`: golden sets of queries (JSON Lines; the rust-book one is
  `spikes/golden/rust-book.jsonl`) and their verifier,
  `python -m spikes.golden --corpus PATH --golden FILE`.
"""

import os

# Before anything in this package imports cocoindex: no telemetry call home.
os.environ.setdefault("COCOINDEX_DISABLE_USAGE_TRACKING", "1")
