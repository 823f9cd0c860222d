"""`mdchunks` (and `python -m mdchunks`): the console script.

The command sets up its own process before cocoindex is imported: no
telemetry (cocoindex otherwise sends usage events to a network host, and
mdchunks promises no network access beyond the database) and the engine's
Rust log at error level (it is read once, at import; RUST_LOG=warn shows it
again). The library does none of this in a host's process (README, "Use it
in your own cocoindex app").
"""

from __future__ import annotations

import os
from typing import NoReturn


def main(argv: list[str] | None = None) -> NoReturn:
    os.environ["COCOINDEX_DISABLE_USAGE_TRACKING"] = "1"
    os.environ.setdefault("RUST_LOG", "error")
    from mdchunks.cli import main as run_cli

    run_cli(argv)


if __name__ == "__main__":
    main()
