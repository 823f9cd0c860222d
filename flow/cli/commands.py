"""`mdchunks`: the command line over flow's Python API (kept thin on purpose).

Exit status: 0 done; 1 done, but some documents failed (listed); 2 bad usage,
option or path; 3 database unreachable or unusable, or a disk full; 4 another run holds the
source; 5 any other error; 130 interrupted; 141 the reader of the output
stopped reading (`| head`). Errors are one line on stderr
(set MDCHUNKS_DEBUG=1 for a traceback); passwords are never printed.
"""

from __future__ import annotations

import logging
import os
import sys
import traceback
from typing import Any, NoReturn

import click
from mdchunks import api

# Imported for what importing does: each module registers its commands on `cli`.
from mdchunks.cli import ingest, manage, mcp, outline, search  # noqa: F401
from mdchunks.cli.group import Invocation, cli
from mdchunks.cli.output import err, fail, out
from mdchunks.cli.output import score as _score
from mdchunks.cli.stops import INTERRUPTED
from mdchunks.errors import MdchunksError, disk_full
from mdchunks.names import shown
from rich.markup import escape

# What other code and the tests take from here (flow/__main__.py, tests/flow/).
__all__ = ["INTERRUPTED", "_score", "api", "cli", "main"]


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
            fail("interrupted", INTERRUPTED)
        err.print("aborted")
        sys.exit(1)
    except click.exceptions.NoArgsIsHelpError as exc:
        out.print(escape(exc.format_message()))
        sys.exit(0)
    except click.UsageError as exc:
        hint = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx else ""
        fail(f"{exc.format_message()}{hint}", 2)
    except click.ClickException as exc:
        fail(exc.format_message(), exc.exit_code)
    except MdchunksError as exc:
        if debug:
            traceback.print_exc()
        full = disk_full(exc)  # the engine's failure can be a full disk under it
        fail(str(full or exc), (full or exc).exit_code)
    except KeyboardInterrupt:
        fail("interrupted", INTERRUPTED)
    except Exception as exc:
        if debug:
            traceback.print_exc()
        full = disk_full(exc)
        if full is not None:  # an environment problem, not a bug
            fail(str(full), full.exit_code)
        fail(
            f"unexpected {type(exc).__name__}: {' '.join(str(exc).split())} "
            "(MDCHUNKS_DEBUG=1 shows the traceback)",
            5,
        )
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
