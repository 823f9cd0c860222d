"""`mdchunks` (and `python -m mdchunks`): the console script.

The command sets up its own process before cocoindex is imported: no
telemetry (cocoindex otherwise sends usage events to a network host, and
mdchunks promises no network access beyond the database) and the engine's
Rust log at error level (it is read once, at import; RUST_LOG=warn shows it
again). The library does none of this in a host's process (docs/plugin.md,
"What the library does not do in your process").
"""

from __future__ import annotations

import gc
import os
import sys
from typing import NoReturn


def main(argv: list[str] | None = None) -> NoReturn:
    os.environ["COCOINDEX_DISABLE_USAGE_TRACKING"] = "1"
    # Not even errors of cancelling a task whose event loop is closed: a run
    # stopped by a lost database leaves the engine such tasks, and the one
    # line that says what happened is the command's own.
    os.environ.setdefault("RUST_LOG", "error,cocoindex_py_utils::future=off")
    # The imports make some hundred thousand objects that live as long as the
    # process: collecting while they are made finds nothing to free, and every
    # later full collection would walk them all again. So no collection during
    # the imports, and what they made is frozen out of later ones.
    gc.disable()
    from mdchunks.cli.commands import INTERRUPTED
    from mdchunks.cli.commands import main as run_cli

    gc.freeze()
    gc.enable()

    try:
        run_cli(argv, console=True)
    except SystemExit as exited:
        if exited.code in (DATABASE_LOST, INTERRUPTED):
            # A run that lost its database mid-way, or was interrupted, can
            # leave the engine's threads calling into Python; finalizing the
            # interpreter under them can abort (seen: "PyGILState_Release",
            # SIGABRT instead of exit 3). The error line is out and what was
            # written is consistent: leave without finalizing.
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(exited.code)
        raise


DATABASE_LOST = 3  # the CLI's exit status for a database unreachable or lost (flow/cli/commands.py)


if __name__ == "__main__":
    main()
