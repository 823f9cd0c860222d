"""`mdchunks mcp`: serve the index to agents (flow/mcp/, docs/mcp.md); the mcp
extra is imported only when the command runs."""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path
from typing import Any

import click
from mdchunks import api
from mdchunks.cli.group import cli, database_options, table_options
from mdchunks.cli.output import err
from mdchunks.errors import UsageError
from rich.markup import escape


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
