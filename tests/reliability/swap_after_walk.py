"""Run `mdchunks ARGS...` and change files between the walk and the reads.

    python swap_after_walk.py PLAN.json ARGS...

The real walk (flow.listing.walk) runs; right after it returns, and before
the engine reads any document, the files named in the plan are changed on
disk: deleted, replaced by a folder, a FIFO or a dangling symlink, or grown
(sparse) past the size limit. Then the real CLI carries on. This is how a
test makes "the file vanished or became unreadable between listing and
reading" happen at a known moment; flow itself has no hook for it.

PLAN.json: {"root": "...", "delete": [...], "folder": [...], "fifo": [...],
"dangling": [...], "grow": [[path, size], ...]} with paths relative to root.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def main() -> None:
    plan = json.loads(Path(sys.argv[1]).read_text())
    root = Path(plan["root"])

    from mdchunks.cli import commands
    from mdchunks.source import listing

    walk = listing.walk

    def walk_then_swap(*args, **kwargs):  # type: ignore[no-untyped-def]
        found = walk(*args, **kwargs)
        for rel in plan.get("delete", []):
            (root / rel).unlink()
        for rel in plan.get("folder", []):
            (root / rel).unlink()
            (root / rel).mkdir()
        for rel in plan.get("fifo", []):
            (root / rel).unlink()
            os.mkfifo(root / rel)
        for rel in plan.get("dangling", []):
            (root / rel).unlink()
            (root / rel).symlink_to(root / "no such file.md")
        for rel, size in plan.get("grow", []):
            os.truncate(root / rel, size)
        return found

    listing.walk = walk_then_swap
    commands.main(sys.argv[2:])


if __name__ == "__main__":
    main()
