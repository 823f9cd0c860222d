"""Named SQL statements of `queries.sql`, procrastinate style.

Each `-- name: xyz` line starts a statement that runs until the next one;
`QUERIES["xyz"]` is its text (comments kept, trailing `;` dropped).
"""

from __future__ import annotations

import re
from importlib import resources

_NAME = re.compile(r"^-- name: ([a-z_]+)\s*$", re.MULTILINE)


def parse(text: str) -> dict[str, str]:
    pieces = _NAME.split(text)
    queries: dict[str, str] = {}
    # pieces: [preamble, name1, body1, name2, body2, ...]
    for name, body in zip(pieces[1::2], pieces[2::2], strict=True):
        if name in queries:
            raise ValueError(f"query {name!r} is defined twice")
        queries[name] = body.strip().rstrip(";").strip()
    return queries


QUERIES: dict[str, str] = parse(
    resources.files("mdchunks.db").joinpath("queries.sql").read_text("utf-8")
)
