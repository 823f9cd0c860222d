"""What the database remembers about sources and recipes (for backfill, status)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from mdchunks.db.connection import Connection
from mdchunks.db.queries import QUERIES
from mdchunks.errors import UsageError
from mdchunks.plugin.recipe import DEFAULT_MAX_DOC_BYTES, Recipe


@dataclass(frozen=True, slots=True)
class SourceRecord:
    source: str
    root: Path
    recipe: Recipe
    walk: Walk


# `max_doc_bytes` is a bigint column (mdchunks_sources): a larger limit
# would fail there, after the run, as a bug (issue 42).
MAX_DOC_BYTES_LIMIT = 2**63 - 1


def check_max_doc_bytes(max_doc_bytes: int | None) -> None:
    """One line for a `--max-doc-bytes` that cannot work (None: as last run)."""
    if max_doc_bytes is None:
        return
    if max_doc_bytes < 1:
        raise UsageError(f"--max-doc-bytes must be at least 1 (got {max_doc_bytes})")
    if max_doc_bytes > MAX_DOC_BYTES_LIMIT:
        raise UsageError(
            f"--max-doc-bytes must be at most {MAX_DOC_BYTES_LIMIT:,} (got {max_doc_bytes:,})"
        )


@dataclass(frozen=True, slots=True)
class Walk:
    """Which files a source's walk takes, remembered with its recipe: a run
    not told otherwise walks as the last one did (docs/recipe.md)."""

    max_doc_bytes: int = DEFAULT_MAX_DOC_BYTES
    # None: not recorded (a source last run before migration 0015; its next
    # run takes it from its rows: `followed_outside_links`).
    follow_outside_links: bool | None = False

    def resolve(self, *, max_doc_bytes: int | None, follow_outside_links: bool | None) -> Walk:
        """This walk with what a run is told (None: as this one)."""
        return Walk(
            self.max_doc_bytes if max_doc_bytes is None else max_doc_bytes,
            self.follow_outside_links if follow_outside_links is None else follow_outside_links,
        )

    def describe(self) -> str:
        """What this walk does that the defaults do not ("" for the defaults)."""
        parts = []
        if self.max_doc_bytes != DEFAULT_MAX_DOC_BYTES:
            parts.append(f"documents up to {self.max_doc_bytes:,} bytes")
        if self.follow_outside_links:
            parts.append("links outside the folder followed")
        return ", ".join(parts)

    def changes(self, after: Walk) -> tuple[str, ...]:
        """What `after` changes, as the run's first line says it."""
        return tuple(
            f"{name} {_shown(getattr(self, name))} -> {_shown(getattr(after, name))}"
            for name in ("max_doc_bytes", "follow_outside_links")
            if getattr(self, name) != getattr(after, name)
        )


def _shown(value: object) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    return f"{value:,}" if isinstance(value, int) else str(value)


def followed_outside_links(conn: Connection, source: str, root: Path) -> bool:
    """Whether the source's rows hold a document that a link leads to from
    outside `root`: so its last run followed such links (a source from before
    migration 0015, which did not record it). One path resolution a document,
    once in the source's life."""
    rows = conn.execute(
        "SELECT rel_path FROM mdchunks_documents WHERE source = %s AND error IS NULL", [source]
    ).fetchall()
    base = os.path.realpath(root)
    return any(
        os.path.commonpath([base, os.path.realpath(root / str(rel_path))]) != base
        for (rel_path,) in rows
    )


def remember(conn: Connection, *, source: str, root: Path, recipe: Recipe, walk: Walk) -> None:
    spec = recipe.to_json()
    fingerprint = recipe.fingerprint()
    with conn.transaction():
        conn.execute(QUERIES["remember_recipe"], {"recipe": fingerprint, "spec": json.dumps(spec)})
        conn.execute(
            QUERIES["remember_source"],
            {
                "source": source,
                "root": str(root),
                "recipe": fingerprint,
                "recipe_spec": json.dumps(spec),
                "max_doc_bytes": walk.max_doc_bytes,
                "follow_outside_links": bool(walk.follow_outside_links),
            },
        )


def remember_skipped(conn: Connection, *, source: str, skipped: dict[str, int]) -> None:
    """The files this run's walk did not take, by suffix, for `status`."""
    conn.execute(QUERIES["remember_skipped"], {"source": source, "skipped": json.dumps(skipped)})


def check_binding(
    conn: Connection, *, source: str, root: Path, named: bool, move: bool
) -> SourceRecord | None:
    """A source bound to one root never moves to another silently. Returns
    the source's record as it stands before this run (None: a new source).

    Two folders of the same name (`a/docs`, `b/docs`) would both default to
    source `docs`, and ingesting the second would replace the first's rows.
    So a source whose remembered root is another folder is refused, naming
    both roots and the ways on, unless the run says to move it (`move`), or
    names the source itself (`named`: `--source NAME`) while the remembered
    root is gone: the folder was moved, which keeps every row's `rel_path`.
    """
    record = lookup(conn, source)
    if record is None or move or record.root == root:
        return record
    if named and not record.root.is_dir():
        return record
    state = "still exists" if record.root.is_dir() else "is gone"
    raise UsageError(
        f"source {source!r} is the folder {record.root} (which {state}), not {root}: "
        f"give this folder a source name of its own with --source NAME, or pass --move "
        f"to make {root} the source {source!r} (the rows of {record.root} are then replaced)"
    )


def sources_of_folder(conn: Connection, root: Path) -> list[str]:
    """The sources remembered at `root`, by name."""
    rows = conn.execute(
        "SELECT source FROM mdchunks_sources WHERE root = %s ORDER BY source", [str(root)]
    ).fetchall()
    return [str(row[0]) for row in rows]


def lookup(conn: Connection, source: str) -> SourceRecord | None:
    row = conn.execute(
        "SELECT source, root, recipe_spec, max_doc_bytes, follow_outside_links "
        "FROM mdchunks_sources WHERE source = %s",
        [source],
    ).fetchone()
    return None if row is None else _record(row)


def all_sources(conn: Connection) -> list[SourceRecord]:
    rows = conn.execute(
        "SELECT source, root, recipe_spec, max_doc_bytes, follow_outside_links "
        "FROM mdchunks_sources ORDER BY source"
    ).fetchall()
    return [_record(row) for row in rows]


def _record(row: tuple[object, ...]) -> SourceRecord:
    source, root, spec_text, max_doc_bytes, follow_outside_links = row
    spec = json.loads(str(spec_text))  # jsonb arrives as its text
    assert isinstance(spec, dict)
    return SourceRecord(
        source=str(source),
        root=Path(str(root)),
        recipe=Recipe.from_json(spec),
        walk=Walk(
            int(str(max_doc_bytes)),
            None if follow_outside_links is None else bool(follow_outside_links),
        ),
    )


def state_token(conn: Connection, source: str) -> str | None:
    """The token of the engine state that made the source's rows (flow/source/state.py)."""
    row = conn.execute(
        "SELECT state_token FROM mdchunks_sources WHERE source = %s", [source]
    ).fetchone()
    return None if row is None or row[0] is None else str(row[0])


def set_state_token(conn: Connection, source: str, token: str) -> None:
    conn.execute("UPDATE mdchunks_sources SET state_token = %s WHERE source = %s", [token, source])


def default_source_name(root: Path) -> str:
    return root.resolve().name or "root"


def check_source_name(source: str) -> None:
    if not source or not source.strip():
        raise UsageError("the source name is empty")
    if len(source) > 200 or any(ord(ch) < 32 for ch in source):
        raise UsageError(f"invalid source name {source!r}: at most 200 printable characters")
