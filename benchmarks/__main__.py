"""`python -m benchmarks`: run the stages, print the table, write the results.

    COCOINDEX_DISABLE_USAGE_TRACKING=1 .venv/bin/python -m benchmarks
    .venv/bin/python -m benchmarks --quick --only index,memory

A full run takes about 35 minutes on 2 cores (stages 7 and 8, the peer
and the breakdown, about 10 of them: `--only peer,breakdown`); `--quick` uses small corpora
and one run per figure (a smoke test, its figures mean little). Results go
to `benchmarks/results/` (`--out`): `<plan>.json` and `<plan>.txt`.
The real corpora are the bundled ones (`corpora/`) unless `--rust-book DIR`
or `--tldr DIR` name others.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

os.environ.setdefault("COCOINDEX_DISABLE_USAGE_TRACKING", "1")

from benchmarks import corpora, jobs, report
from benchmarks.context import Context, log
from benchmarks.plan import FULL, QUICK, STAGES
from benchmarks.stages import STAGES as RUNNERS

RESULTS = Path(__file__).resolve().parent / "results"


def _stages(value: str) -> list[str]:
    chosen = [name.strip() for name in value.split(",") if name.strip()]
    unknown = [name for name in chosen if name not in STAGES]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown stage(s) {', '.join(unknown)} (known: {', '.join(STAGES)})"
        )
    return chosen


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description="mdchunks benchmarks (issues #6, #16)"
    )
    parser.add_argument("--quick", action="store_true", help="small sizes, one run each")
    parser.add_argument(
        "--only", type=_stages, default=list(STAGES), help=f"comma-separated: {','.join(STAGES)}"
    )
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder for the results")
    parser.add_argument("--no-save", action="store_true", help="print only, write no files")
    parser.add_argument("--work-dir", type=Path, help="where corpora and databases go (kept)")
    parser.add_argument(
        "--admin-url",
        help="use this PostgreSQL (a role that may CREATE DATABASE), not an embedded one",
    )
    parser.add_argument("--trials", type=int, help="override: fresh ingests per app")
    parser.add_argument("--reruns", type=int, help="override: no-op re-runs and edits per app")
    parser.add_argument(
        "--generated-files", type=int, help="override: size of the many-files corpus"
    )
    parser.add_argument(
        "--rust-book",
        type=Path,
        default=corpora.RUST_BOOK,
        metavar="DIR",
        help="the rust-book's markdown (default: the bundled corpora/rust-book)",
    )
    parser.add_argument(
        "--tldr",
        type=Path,
        default=corpora.TLDR,
        metavar="DIR",
        help="tldr pages (default: the 600 bundled in corpora/tldr; the published "
        "figures are of tldr-pages' whole pages/ folder, 7,425 pages)",
    )
    args = parser.parse_args(argv)
    for name, folder in (("--rust-book", args.rust_book), ("--tldr", args.tldr)):
        if not any(folder.rglob("*.md")):
            parser.error(f"{name} {folder}: no markdown files there")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    plan = QUICK if args.quick else FULL
    overrides = {
        "trials": args.trials,
        "reruns": args.reruns,
        "generated_reruns": args.reruns,
        "generated_files": args.generated_files,
    }
    plan = dataclasses.replace(plan, **{k: v for k, v in overrides.items() if v is not None})
    work = args.work_dir or Path(tempfile.mkdtemp(prefix="mdchunks-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    sources = corpora.Sources(rust_book=args.rust_book.resolve(), tldr=args.tldr.resolve())
    ctx = Context(plan=plan, work=work, admin_url=args.admin_url, sources=sources)
    jobs.compile_checkout()
    started = time.perf_counter()
    env = report.environment(None)
    figures: list[report.Figure] = []
    try:
        for name in STAGES:
            if name in args.only:
                log(f"stage {name}")
                figures += RUNNERS[name](ctx)
        postgres_version = ctx.server().version() if ctx.has_server() else None
    finally:
        ctx.close()
        if args.work_dir is None:
            shutil.rmtree(work, ignore_errors=True)
    env["versions"]["postgresql"] = postgres_version or "not started"
    seconds = time.perf_counter() - started
    read = f"corpora: rust-book {sources.rust_book}, tldr {sources.tldr}\n"
    text = report.header_text(env, plan.name, seconds) + read + "\n" + report.table(figures)
    if ctx.raw.get("breakdown"):
        text += "\nWhere our seconds go (stage 8):\n\n" + report.breakdown_table(
            ctx.raw["breakdown"]
        )
    for failure in ctx.raw.get("failures", []):
        text += f"\nfailed documents ({failure['app']}, {failure['corpus']}): {failure['failures']}"
    print(text)
    if not args.no_save:
        args.out.mkdir(parents=True, exist_ok=True)
        plan_json = {
            **dataclasses.asdict(plan),
            "stages": args.only,
            "corpora": {"rust-book": str(sources.rust_book), "tldr": str(sources.tldr)},
        }
        (args.out / f"{plan.name}.json").write_text(
            report.to_json(env, plan_json, figures, ctx.raw), encoding="utf-8"
        )
        (args.out / f"{plan.name}.txt").write_text(text, encoding="utf-8")
        log(f"wrote {args.out / plan.name}.json and .txt")
    return 0


if __name__ == "__main__":
    sys.exit(main())
