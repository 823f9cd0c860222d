"""Benchmarks of mdchunks: one command, every stage, figures and ratios.

    COCOINDEX_DISABLE_USAGE_TRACKING=1 .venv/bin/python -m benchmarks [--quick] [--only ...]

Not shipped and imported by nothing: it may import `flow`, `heading_index`
and `cocoindex`. Each stage compares us with a baseline measured in the same
run on the same machine (the splitter alone, a bare cocoindex app or the
peer script in the same PostgreSQL), so the ratios mean something on a shared, noisy machine
where absolute times do not. Modules:

- `corpora`: the real corpora (bundled in `corpora/`, or folders given) and
  the generated ones (50,000 files, a 50 MB document, rust-book copies);
- `bench_heading_index`: stage 1, `build_index` vs the splitter;
- `bare_app`: the baseline cocoindex app (the upstream example's shape);
- `postgres`: a throwaway embedded PostgreSQL and per-trial databases;
- `worker`: one measured job in a fresh subprocess (time and peak memory);
- `peer`: the script a user would write instead (LangChain's splitters, rows
  COPYed into a table with a generated tsvector and a GIN index), stage 7;
- `breakdown`: timers around each step of one ingest, stage 8;
- `stages`: the eight stages; `report`: the tables and the JSON.
"""

import os

# Before any benchmark imports cocoindex (search_latency, row_cost and the
# others run as `python -m benchmarks.<name>`): no telemetry call home.
os.environ.setdefault("COCOINDEX_DISABLE_USAGE_TRACKING", "1")
