"""`python -m spikes.memo_probe [PATH]`: the spike's memo questions, measured.

With our own flow (`flow.ingest`) and a throwaway embedded PostgreSQL
(pgserver in a temporary folder, stopped and deleted at the end; a
`DATABASE_URL` in the environment is ignored on purpose), over a small corpus
(default: the repository's `sample/` folder, only ever read):

1. initial ingest under the default recipe: every document is processed;
2. the same recipe again: nothing is re-processed;
3. a changed recipe (smaller chunk size), files untouched: every document is
   re-processed, and no row of the old recipe survives;
4. the changed recipe again: nothing is re-processed.

The files' bytes are hashed before and after, to show they never changed.
Prints the counts of each run; exits 0 when every answer is as expected, 1
when one is not, 2 when the probe could not run at all.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import click
import mdchunks
from mdchunks.db.database import stop_embedded

from spikes.report import fixed_width_table

DEFAULT_CORPUS = Path(__file__).resolve().parents[1] / "sample"
SOURCE = "memo-probe"


@dataclass(frozen=True, slots=True)
class Step:
    name: str
    recipe: mdchunks.Recipe
    reprocess_all: bool  # expected: every document processed (else none)


@dataclass(frozen=True, slots=True)
class Observation:
    """What one ingest run did, by the flow's report and cocoindex's own stats."""

    step: Step
    documents: int  # documents the walk found
    processed: int  # documents (re)chunked by the run (flow's count)
    added: int  # cocoindex: first seen
    reprocessed: int  # cocoindex: processed again
    unchanged: int  # cocoindex: memo hits
    failures: int
    stale_rows: int  # rows of the source left under another recipe after the run
    healed: bool  # the flow had to re-process everything to heal its state

    @property
    def expected(self) -> int:
        return self.documents if self.step.reprocess_all else 0

    @property
    def ok(self) -> bool:
        return (
            self.documents > 0
            and self.processed == self.expected
            and self.added + self.reprocessed == self.expected
            and self.unchanged == self.documents - self.expected
            and self.failures == 0
            and self.stale_rows == 0
            and not self.healed
        )


def steps() -> tuple[Step, ...]:
    default = mdchunks.Recipe()
    changed = default.with_options(chunk_size=1000, min_chunk_size=500, chunk_overlap=100)
    return (
        Step("initial ingest", default, reprocess_all=True),
        Step("same recipe again", default, reprocess_all=False),
        Step("chunk size changed", changed, reprocess_all=True),
        Step("changed recipe again", changed, reprocess_all=False),
    )


def _recipe_label(recipe: mdchunks.Recipe) -> str:
    r = recipe
    return f"{r.fingerprint()} {r.chunk_size}/{r.min_chunk_size}/{r.chunk_overlap}"


def _verdict(seen: Observation) -> str:
    verdict = "ok" if seen.ok else "WRONG"
    if seen.healed:
        verdict += " (healed: engine state disagreed with the table)"
    if seen.failures:
        verdict += f" ({seen.failures} failed)"
    return verdict


def format_observations(observations: Sequence[Observation]) -> str:
    """The runs as a fixed-width (and Markdown) table, one line each."""
    header = (
        "run",
        "recipe",
        "docs",
        "processed",
        "expected",
        "added",
        "reprocessed",
        "unchanged",
        "stale rows",
        "verdict",
    )
    body = [
        (
            f"{number}. {seen.step.name}",
            _recipe_label(seen.step.recipe),
            *(
                str(n)
                for n in (
                    seen.documents,
                    seen.processed,
                    seen.expected,
                    seen.added,
                    seen.reprocessed,
                    seen.unchanged,
                    seen.stale_rows,
                )
            ),
            _verdict(seen),
        )
        for number, seen in enumerate(observations, start=1)
    ]
    return fixed_width_table(header, body, {"run", "recipe", "verdict"})


def answers(observations: Sequence[Observation], bytes_unchanged: bool) -> tuple[str, bool]:
    """The two questions, answered from the runs; and whether all is as expected."""
    by_name = {seen.step.name: seen for seen in observations}
    changed = by_name["chunk size changed"]
    same = [by_name["same recipe again"], by_name["changed recipe again"]]
    text = (
        f"changed recipe, no byte changed: {changed.processed} of {changed.documents} documents "
        f"re-processed (expected all), {changed.stale_rows} rows of the old recipe left\n"
        f"unchanged recipe: {sum(s.processed for s in same)} documents re-processed over "
        f"{len(same)} runs (expected 0)\n"
        f"file bytes identical before and after: {'yes' if bytes_unchanged else 'NO'}\n"
    )
    return text, bytes_unchanged and all(seen.ok for seen in observations)


def _hashes(root: Path) -> dict[str, str]:
    return {
        path.relative_to(root).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def _stale_rows(data_dir: Path) -> int:
    report = mdchunks.status(data_dir=data_dir)
    return sum(source.stale_rows for source in report.sources if source.source == SOURCE)


def observe(root: Path, data_dir: Path, step: Step) -> Observation:
    report = mdchunks.ingest(root, source=SOURCE, recipe=step.recipe, data_dir=data_dir)
    stats = report.engine_stats
    return Observation(
        step=step,
        documents=report.documents,
        processed=report.processed,
        added=stats.added,
        reprocessed=stats.reprocessed,
        unchanged=stats.unchanged,
        failures=len(report.failures),
        stale_rows=_stale_rows(data_dir),
        healed=report.healed,
    )


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument(
    "path",
    required=False,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
)
def main(path: Path | None) -> None:
    """Measure whether a changed recipe re-processes untouched documents (it
    must: all of them) and whether an unchanged recipe re-processes any (it
    must not), with the flow and a throwaway embedded database, over PATH
    (default: the repository's sample/ folder). Exit 1 if either answer is wrong.
    """
    root = (path or DEFAULT_CORPUS).resolve()
    os.environ.pop("DATABASE_URL", None)  # always the throwaway server, never a real one
    before = _hashes(root)
    observations: list[Observation] = []
    with tempfile.TemporaryDirectory(prefix="mdchunks-memo-probe-") as scratch:
        data_dir = Path(scratch) / "data"
        os.chmod(scratch, 0o755)  # the server may run as another user (pgserver as root)
        try:
            for step in steps():
                observations.append(observe(root, data_dir, step))
        except mdchunks.MdchunksError as exc:
            click.echo(f"memo probe could not run: {exc}", err=True)
            sys.exit(2)
        finally:
            try:
                stop_embedded(data_dir)
            except mdchunks.MdchunksError as exc:
                click.echo(f"memo probe: {exc}", err=True)
    click.echo(f"memo probe over {root} (throwaway embedded PostgreSQL)")
    click.echo(format_observations(observations))
    text, ok = answers(observations, bytes_unchanged=_hashes(root) == before)
    click.echo(text, nl=False)
    if not ok:
        click.echo("memo probe: WRONG answer (see above)", err=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
