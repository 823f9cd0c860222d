"""What the CLI prints, apart from the commands: the two consoles (stdout and
stderr), a run's summary, a search hit's pieces (its score, its highlighted
snippet, its expanded text), an outline as JSON, and the one line of an error.
Every piece of a document or a name goes through `shown` (flow/names.py)."""

from __future__ import annotations

import contextlib
import re
import sys
from pathlib import Path
from typing import Any, NoReturn

from mdchunks import api
from mdchunks.db import database
from mdchunks.errors import MdchunksError
from mdchunks.names import shown
from mdchunks.source import reports
from rich.console import Console
from rich.markup import escape

READER_GONE = 141  # the reader of our output stopped reading (`| head`): 128 + SIGPIPE


class _Console(Console):
    def on_broken_pipe(self) -> None:
        # rich leaves with status 1, which means "some documents failed"; a
        # reader that stopped reading gets what `git log | head` gives.
        with contextlib.suppress(SystemExit):
            super().on_broken_pipe()
        raise SystemExit(READER_GONE)


out = _Console(highlight=False, soft_wrap=True)
err = _Console(stderr=True, highlight=False, soft_wrap=True)


def print_report(report: api.IngestReport, verb: str = "ingest") -> None:
    remembered = ""
    if report.remembered:
        changed = ", ".join(report.settings_changed)
        remembered = (
            f"; the source's last settings, changed: {changed}"
            if changed
            else "; the source's last settings"
        )
    out.print(
        f"[bold]{verb} {escape(shown(report.source))}[/bold] from "
        f"{escape(shown(str(report.root)))}; "
        f"recipe {report.recipe} ({escape(report.recipe_description)})"
        f"{escape('; ' + report.walk_description if report.walk_description else '')}"
        f"{escape(remembered)}"
    )
    removed = f", {report.removed} removed" if report.removed else ""
    # Skipped: never read, so no document row (`status` counts document rows).
    skipped = f", {report.skipped} skipped (not read)" if report.skipped else ""
    out.print(
        f"  documents: {report.processed} processed, {report.unchanged} unchanged, "
        f"{report.failed} failed{skipped}{removed}"
    )
    if report.converted:
        notes = "".join(f"; {n} {escape(note)}" for note, n in report.import_notes)
        out.print(f"  converted: {reports.describe_formats(report.converted)}{notes}")
    if report.skipped_suffixes:
        skipped = reports.describe_skipped(report.skipped_suffixes)
        out.print(f"  other files, not ingested: {escape(shown(skipped))}")
    out.print(
        f"  rows:      {report.rows_written} written, {report.rows_deleted} deleted "
        f"({report.rows_total} in the source)"
    )
    # Counts of the documents this run processed, then of the whole source
    # (unchanged documents keep the counts of the run that processed them).
    structure = report.chunker == "structure"
    merged = f"{report.merges} sections merged, " if structure else ""
    merged_total = f"{report.merges_total} merged, " if structure else ""
    out.print(
        f"  chunker:   {report.chunker}; {merged}{report.breadcrumb_truncations} breadcrumbs "
        f"truncated in the documents processed (source: {merged_total}"
        f"{report.breadcrumb_truncations_total} truncated)"
    )
    if report.stats_update:
        out.print(f"  bm25:      statistics {report.stats_update}")
    out.print(
        f"  time:      {report.seconds:.1f} s, {report.mb_per_s:.2f} MB/s "
        f"({report.bytes_processed / 1e6:.2f} MB processed)"
    )
    if report.embed_model or report.vectors_deleted:
        model = report.embed_model or "embeddings off"
        out.print(
            f"  vectors:   {report.vectors_written} embedded, {report.vectors_deleted} deleted "
            f"({report.vectors_total} in the source; {escape(shown(model))}; "
            f"{report.embed_seconds:.1f} s)"
        )
        if report.vectors_long:
            how = (
                "embedded whole, in windows pooled"
                if report.vectors_long_input == "windows"
                else "truncated: the rest of each does not count"
            )
            out.print(
                f"             {report.vectors_long} of them longer than the model reads "
                f"({report.vectors_max_tokens} word pieces): {how}"
            )
        if not report.vectors_indexed:
            out.print(
                "  [yellow]note:[/yellow] this role may not create the model's HNSW index: "
                "semantic search scans every vector (same results, slower at scale)"
            )
    if report.healed:
        out.print(
            "  [yellow]note:[/yellow] the engine state did not match the database (rows were "
            "missing); every document was re-processed to restore them"
        )
    if report.previous_recipe:
        out.print(
            f"  [yellow]note:[/yellow] the recipe changed, so every document was chunked anew; "
            f"the source's last was {escape(report.previous_recipe)}"
        )
    if report.state_reset and report.after_unfinished:
        out.print(
            "  [yellow]note:[/yellow] the last run of this source did not finish (stopped "
            "or killed); every document was processed afresh"
        )
    elif report.state_reset:
        out.print(
            "  [yellow]note:[/yellow] the engine state here had not made this source's rows "
            "(another data dir ingested it since, or a restore); every document was "
            "processed afresh"
        )
    elif report.state_upgraded:
        out.print(
            "  [yellow]note:[/yellow] this release keeps its engine state in a new layout; "
            "every document was processed once more (rows that say the same were not "
            "rewritten)"
        )
    if report.failures:
        count = len(report.failures)
        some = (" or was skipped" if count == 1 else " or were skipped") if report.skipped else ""
        documents = f"{count} document{'' if count == 1 else 's'} failed{some}"
        err.print(f"[red]{documents}[/red] (they have no rows):")
        for failure in report.failures:
            # Escaped: a name can hold a newline or a terminal escape (flow/names.py).
            err.print(f"  {escape(shown(failure.rel_path))}: {escape(shown(failure.cause))}")


def print_database_hint(database_url: str | None, data_dir: Path | None) -> None:
    with contextlib.suppress(MdchunksError):
        db = database.resolve(database_url, data_dir)
        kind = "embedded PostgreSQL" if db.embedded else "database"
        out.print(f"{kind}: {escape(db.display)}")
        out.print(f"inspect with: {escape(db.psql_command())}")


def highlighted(snippet: str) -> str:
    """A snippet with its marked words in bold: each piece between the marks
    made terminal-safe (the marks are control characters `shown` would spell)."""
    pieces = re.split(f"([{api.HIGHLIGHT_START}{api.HIGHLIGHT_STOP}])", snippet)
    markup = {api.HIGHLIGHT_START: "[bold yellow]", api.HIGHLIGHT_STOP: "[/bold yellow]"}
    return "".join(markup.get(piece) or escape(shown(piece)) for piece in pieces)


HIT_TEXT_INDENT = " " * 8  # deeper than a hit's first line (its score): no text starts a hit


def block(text: str) -> str:
    """A document's text (an expanded section or parent) as lines of one hit:
    terminal-safe, its line breaks kept, every line indented."""
    safe = escape(shown(text, lines=True))
    return "\n".join(HIT_TEXT_INDENT + line if line else line for line in safe.split("\n"))


def score(rank: float) -> str:
    """Six characters; a score too small for three decimals (a word in nearly
    every document of a source weighs almost nothing) keeps its digits."""
    return f"{rank:6.3f}" if rank == 0 or abs(rank) >= 0.0005 else f"{rank:6.0e}"


# The lines column of `outline` (`L1000-9999` fits), wider for a document past it.
OUTLINE_LINES_WIDTH = 11


def outline_json(document: Any) -> dict[str, Any]:
    return {
        "source": document.source,
        "rel_path": document.rel_path,
        "title": document.title,
        "error": document.error,
        "note": document.note,
        "sections": [
            {
                **entry.section.to_json(),
                "heading_text": entry.section.heading_text,
                "heading_level": entry.section.heading_level,
                "parent_id": None if entry.parent is None else str(entry.parent),
                "chunks": entry.chunks,
            }
            for entry in document.sections
        ],
    }


def fail(message: str, code: int) -> NoReturn:
    # `shown`: a message can quote a file name or a document's text; one line always.
    err.print(f"[red]error:[/red] {escape(shown(message))}")
    sys.exit(code)
