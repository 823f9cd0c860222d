"""The `mdchunks` click group and the options its commands share: where the
database is (`--data-dir`, `--database-url`), a host's own table (`--table`),
`--quiet`, `--lock-wait`, `--embed-model`; and how the CLI was started
(`Invocation`, click's context object)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click
from mdchunks import api
from mdchunks.source.lock import DEFAULT_WAIT_SECONDS

F = TypeVar("F", bound=Callable[..., Any])


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


@dataclass(frozen=True)
class Invocation:
    """How the CLI was started, for its commands (click's context object)."""

    # As the `mdchunks` console script: the process is ours to end (flow/__main__.py).
    console: bool = False
