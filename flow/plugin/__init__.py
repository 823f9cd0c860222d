"""The plugin face: what a host's own cocoindex app imports (docs/plugin.md).

`split_markdown` and `chunk_markdown` (chunking), the rows and their uuid5 ids
(rows), the chunk table as a target, its SQL and the per-file function for
`coco.mount_each` (target), a document's text (documents), the recipe as
data (recipe), and the budget splitter's guard (splitting).

May use: `mdchunks.heading_index`, `mdchunks.errors`, cocoindex and asyncpg;
never the managed source, search or the faces above it (docs/layout.md).

The names `mdchunks.plugin` offered when it was one module are still offered
here (loaded on first use); `from mdchunks import ...` is the usual way in.
"""

from __future__ import annotations

import importlib
from typing import Any

# What the one-module `mdchunks.plugin` offered, and where it lives now.
_MOVED: dict[str, str] = {
    "mount_chunk_table": "mdchunks.plugin.target",
    "chunk_table_sql": "mdchunks.plugin.target",
    "chunk_table_upgrade_sql": "mdchunks.plugin.target",
    "process_markdown_file": "mdchunks.plugin.target",
    "recipe_of": "mdchunks.plugin.target",
    "ChunkTableMismatch": "mdchunks.plugin.target",
}


def __getattr__(name: str) -> Any:
    module = _MOVED.get(name)
    if module is None:
        raise AttributeError(f"module 'mdchunks.plugin' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
