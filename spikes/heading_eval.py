"""`python -m spikes.heading_eval PATH...`: how truthful are heading breadcrumbs?

For every markdown document under each PATH and every mode (chunker), split
the text, index its headings with `heading_index.build_index`, and score the
chunks (DESIGN section 7, `spikes.metrics`). Prints a fixed-width table of
per-corpus totals (per document too with `--per-doc`) and, with `--json
FILE`, writes the same rows as JSON. Deterministic (unless `--provenance`
adds a dated header line); needs no database.
"""

from __future__ import annotations

import datetime
import platform
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import click
from mdchunks.heading_index import HEADING_INDEX_VERSION, build_index
from mdchunks.heading_index.chunkers import chunker_versions

from spikes.corpus import read_corpus
from spikes.metrics import score, total
from spikes.modes import DEFAULT_MODES, MODES, Budgets, Mode, get_mode
from spikes.report import Row, format_table, to_json


@dataclass(frozen=True, slots=True)
class Evaluation:
    totals: tuple[Row, ...]  # per corpus root x mode, in the order given
    documents: tuple[Row, ...]  # per root, document, mode
    skipped: int  # files that could not be read or decoded
    corpora: tuple[tuple[str, int], ...] = ()  # (root, markdown documents read), in order


def evaluate(roots: Sequence[Path], modes: Sequence[Mode], budgets: Budgets) -> Evaluation:
    totals: list[Row] = []
    documents: list[Row] = []
    skipped = 0
    corpora: list[tuple[str, int]] = []
    for root in roots:
        corpus = read_corpus(root)
        skipped += len(corpus.skipped)
        corpora.append((corpus.root, len(corpus.documents)))
        if not corpus.documents:
            print(f"no markdown documents under {corpus.root}", file=sys.stderr)
        per_mode: dict[str, list[Row]] = {mode.name: [] for mode in modes}
        for document in corpus.documents:
            index = build_index(document.text)
            for mode in modes:
                spans = mode.chunk(document.text, budgets)
                scores = score(
                    index,
                    spans,
                    document.text,
                    leaves_heading_lines_out=mode.leaves_heading_lines_out,
                )
                row = Row(document.path, mode.name, scores)
                per_mode[mode.name].append(row)
                documents.append(row)
        totals.extend(
            Row(corpus.root, mode.name, total(row.scores for row in per_mode[mode.name]))
            for mode in modes
        )
    return Evaluation(tuple(totals), tuple(documents), skipped, tuple(corpora))


def provenance(evaluation: Evaluation, budgets: Budgets, argv: Sequence[str]) -> str:
    """One `#` line: what was measured, when, with which versions, by which command."""

    def version(distribution: str) -> str:
        try:
            return metadata.version(distribution)
        except metadata.PackageNotFoundError:
            return "(not installed)"

    corpora = ", ".join(f"{root} ({count} markdown files)" for root, count in evaluation.corpora)
    return (
        f"# {corpora}, measured {datetime.date.today().isoformat()} with "
        f"cocoindex {version('cocoindex')}, tree-sitter {version('tree-sitter')}, "
        f"tree-sitter-markdown {version('tree-sitter-markdown')}, "
        f"heading_index v{HEADING_INDEX_VERSION}, "
        + "".join(f"{name} chunker v{v}, " for name, v in chunker_versions().items())
        + f"Python {platform.python_version()}; budgets {budgets.chunk_size}/"
        f"{budgets.min_chunk_size}/{budgets.chunk_overlap} UTF-8 bytes, "
        f"split levels 1-{budgets.split_levels}; "
        f"command: python -m spikes.heading_eval {shlex.join(argv)}"
    )


def _parse_modes(_ctx: click.Context, _param: click.Parameter, value: str) -> tuple[Mode, ...]:
    names = [name.strip() for name in value.split(",") if name.strip()]
    if not names:
        raise click.BadParameter("name at least one mode")
    try:
        return tuple(get_mode(name) for name in dict.fromkeys(names))
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--modes",
    "modes",
    default=",".join(DEFAULT_MODES),
    show_default=True,
    callback=_parse_modes,
    help=f"Comma-separated chunkers to compare; known: {', '.join(MODES)}.",
)
@click.option(
    "--chunk-size",
    default=2000,
    show_default=True,
    type=click.IntRange(min=1),
    help="Splitter budget, UTF-8 bytes.",
)
@click.option(
    "--chunk-overlap",
    default=200,
    show_default=True,
    type=click.IntRange(min=0),
    help="Splitter overlap, UTF-8 bytes.",
)
@click.option(
    "--min-chunk-size",
    default=1000,
    show_default=True,
    type=click.IntRange(min=0),
    help="Splitter minimum chunk size, UTF-8 bytes.",
)
@click.option(
    "--split-levels",
    default=3,
    show_default=True,
    type=click.IntRange(1, 6),
    help="Structure modes: headings of levels 1..N start sections (the flow's --split-levels).",
)
@click.option(
    "--json",
    "json_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the rows as JSON to this file.",
)
@click.option("--per-doc", is_flag=True, help="Also show (and write) one row per document.")
@click.option(
    "--provenance",
    "show_provenance",
    is_flag=True,
    help="Start the output with a `#` line: corpora, date, versions (cocoindex, "
    "tree-sitter, heading_index, structure chunker, Python), budgets and this command "
    "(the JSON gets it as `provenance`). Off by default, so the output is deterministic.",
)
def main(
    paths: tuple[Path, ...],
    modes: tuple[Mode, ...],
    chunk_size: int,
    chunk_overlap: int,
    min_chunk_size: int,
    split_levels: int,
    json_file: Path | None,
    per_doc: bool,
    show_provenance: bool,
) -> None:
    """Score heading breadcrumbs over the chunks of every markdown file under PATHS.

    \b
    Modes (--modes):
      none              RecursiveSplitter(language=None)
      markdown          RecursiveSplitter(language="markdown"): the flow's
                        recursive chunker
      structure-first   structure-first chunker (sections of H1..H<split
                        levels>, heading lines left out of chunk text, small
                        sections merged; a merged chunk names its first section)
      structure-common  the same; a merged chunk names the deepest heading
                        whose section holds all of it (the root if none)

    \b
    Columns:
      chars            document characters (code points)
      hdgs             headings (all levels)
      chunks           chunks
      hdg-aligned      headings that start a chunk / headings: a chunk starts
                       at the heading; for the structure modes, which leave
                       heading lines out of chunk text, a chunk at its body
                       start (the first non-blank line after the heading
                       line(s), if before the next heading) counts too
      pure             chunks with no heading starting strictly inside / chunks
      truthful         chunk characters inside the text of the heading the
                       chunk's breadcrumb names (up to the next heading of any
                       level); budget splitters name the governing heading,
                       the last one starting at or before the chunk (front
                       matter and blank lines before a chunk's first heading
                       do not count: the chunk starts at that heading)
      truthful-nested  the same, up to the end of that heading's section
    Totals per PATH: summed counts, character-weighted fractions. n/a: 0/0.
    """
    try:
        budgets = Budgets(
            chunk_size=chunk_size,
            min_chunk_size=min_chunk_size,
            chunk_overlap=chunk_overlap,
            split_levels=split_levels,
        )
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None

    evaluation = evaluate(paths, modes, budgets)
    header = provenance(evaluation, budgets, sys.argv[1:]) if show_provenance else None
    if header is not None:
        click.echo(header + "\n")
    documents = evaluation.documents if per_doc else ()
    if documents:
        click.echo(format_table(documents))
    click.echo(format_table(evaluation.totals), nl=False)
    if json_file is not None:
        json_file.write_text(to_json(evaluation.totals, documents, header), encoding="utf-8")
    if evaluation.skipped:
        click.echo(f"skipped {evaluation.skipped} file(s); see the messages above", err=True)


if __name__ == "__main__":
    main()
