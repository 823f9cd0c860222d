"""The command line: `mdchunks` and its commands over the Python API
(docs/cli.md). It parses, prints and picks exit statuses; the work is the
API's, the managed source's and search's.

May use every room below it; nothing imports it but `mdchunks.__main__`
(docs/layout.md). `mdchunks.cli.main` (run the CLI in-process) is still
offered here.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    if name in {"main", "INTERRUPTED"}:
        from mdchunks.cli import commands

        return getattr(commands, name)
    raise AttributeError(f"module 'mdchunks.cli' has no attribute {name!r}")
