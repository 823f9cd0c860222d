"""Run `mdchunks ARGS...` with a splitter that really kills the process.

    python native_crash.py marker ARGS...     # os.abort() on a document holding CRASH_MARKER
    python native_crash.py unguarded ARGS...  # no nesting guard: the real splitter abort

The hook is installed when this module is imported, not only when it runs:
multiprocessing's spawn imports the main module in its child, so the trial
process that flow/source/quarantine.py starts for a suspect gets the same splitter,
and dies the same way. flow itself has no hook for it: the splitter is
swapped in `mdchunks.plugin.chunking`, as tests/reliability/swap_after_walk.py swaps the walk.
"""

from __future__ import annotations

import functools
import os
import sys
from typing import Any

from mdchunks.plugin import chunking
from mdchunks.plugin.splitting import GuardedSplitter

CRASH_MARKER = "THIS DOCUMENT KILLS THE PROCESS"
MODE_VARIABLE = "MDCHUNKS_TEST_NATIVE_CRASH"


class AbortingSplitter:
    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def split(self, text: str, *args: Any, **kwargs: Any) -> Any:
        if CRASH_MARKER in text:
            os.abort()  # a native abort: no exception, no finally, no atexit
        return self._inner.split(text, *args, **kwargs)


def install(mode: str) -> None:
    from cocoindex.ops.text import RecursiveSplitter
    from mdchunks.heading_index.structure import budget_split_from

    if mode == "marker":
        splitter: Any = AbortingSplitter(GuardedSplitter(RecursiveSplitter()))
    elif mode == "unguarded":
        splitter = GuardedSplitter(RecursiveSplitter(), max_nesting=10**9)
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    chunking._budget_split = functools.cache(  # type: ignore[assignment]
        lambda language: budget_split_from(splitter, language)
    )


# The spawned trial child imports this module again: it reads the mode from
# the environment, which it inherits.
if MODE_VARIABLE in os.environ:
    install(os.environ[MODE_VARIABLE])


def main() -> None:
    from mdchunks.cli import commands

    os.environ[MODE_VARIABLE] = sys.argv[1]
    install(sys.argv[1])
    commands.main(sys.argv[2:])


if __name__ == "__main__":
    main()
