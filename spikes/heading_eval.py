"""`python -m spikes.heading_eval PATH...`: how truthful are heading breadcrumbs?

For every markdown document under each PATH and every mode (chunker), split
the text, index its headings with `heading_index.build_index`, and score the
chunks (DESIGN section 7, `spikes.metrics`). Prints a fixed-width table of
per-corpus totals (per document too with `--per-doc`) and, with `--json
FILE`, writes the same rows as JSON. Deterministic; needs no database.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import click

from heading_index import build_index
from spikes.corpus import read_corpus
from spikes.metrics import score, total
from spikes.modes import DEFAULT_MODES, MODES, Budgets, Mode, get_mode
from spikes.report import Row, format_table, to_json


@dataclass(frozen=True, slots=True)
class Evaluation:
    totals: tuple[Row, ...]  # per corpus root x mode, in the order given
    documents: tuple[Row, ...]  # per root, document, mode
    skipped: int  # files that could not be read or decoded


def evaluate(roots: Sequence[Path], modes: Sequence[Mode], budgets: Budgets) -> Evaluation:
    totals: list[Row] = []
    documents: list[Row] = []
    skipped = 0
    for root in roots:
        corpus = read_corpus(root)
        skipped += len(corpus.skipped)
        if not corpus.documents:
            print(f"no markdown documents under {corpus.root}", file=sys.stderr)
        per_mode: dict[str, list[Row]] = {mode.name: [] for mode in modes}
        for document in corpus.documents:
            index = build_index(document.text)
            for mode in modes:
                spans = mode.chunk(document.text, budgets)
                row = Row(document.path, mode.name, score(index, spans))
                per_mode[mode.name].append(row)
                documents.append(row)
        totals.extend(
            Row(corpus.root, mode.name, total(row.scores for row in per_mode[mode.name]))
            for mode in modes
        )
    return Evaluation(tuple(totals), tuple(documents), skipped)


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
    "--json",
    "json_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the rows as JSON to this file.",
)
@click.option("--per-doc", is_flag=True, help="Also show (and write) one row per document.")
def main(
    paths: tuple[Path, ...],
    modes: tuple[Mode, ...],
    chunk_size: int,
    chunk_overlap: int,
    min_chunk_size: int,
    json_file: Path | None,
    per_doc: bool,
) -> None:
    """Score heading breadcrumbs over the chunks of every markdown file under PATHS.

    \b
    Columns:
      chars            document characters (code points)
      hdgs             headings
      chunks           chunks
      hdg-aligned      headings that start a chunk / headings
      pure             chunks with no heading starting strictly inside / chunks
      truthful         chunk characters inside the text of the chunk's governing
                       heading (up to the next heading of any level)
      truthful-nested  the same, up to the end of that heading's section
    Totals per PATH: summed counts, character-weighted fractions. n/a: 0/0.
    """
    try:
        budgets = Budgets(chunk_size, min_chunk_size, chunk_overlap)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None

    evaluation = evaluate(paths, modes, budgets)
    documents = evaluation.documents if per_doc else ()
    if documents:
        click.echo(format_table(documents))
    click.echo(format_table(evaluation.totals), nl=False)
    if json_file is not None:
        json_file.write_text(to_json(evaluation.totals, documents), encoding="utf-8")
    if evaluation.skipped:
        click.echo(f"skipped {evaluation.skipped} file(s); see the messages above", err=True)


if __name__ == "__main__":
    main()
