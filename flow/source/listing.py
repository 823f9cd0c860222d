"""The walk: which documents a root holds, before any of them is read.

Recursive from the root; symlinked folders are followed (a folder that is its
own ancestor is a loop: reported, not entered); hidden folders (`.git`
among them) and `node_modules` are not entered, while hidden files are
documents like others; a file is a document when
its suffix is one of the recipe's (`.md`, `.markdown`, `.mdx`, `.txt` by
default, any case). Files and folders the walk cannot use are reported as
failures naming the path and the cause: unreadable, broken or looping
symlinks, and documents over the size limit (not read at all). Files of
any other suffix are counted by suffix (`Listing.unlisted`), from their
names alone, so the summary names what was left out ("other files, not
ingested: 3 .rst, 1 .png") rather than leaving it out in silence.

The result is sorted by `rel_path` (POSIX, relative to the root): the
listing the reconciliation compares the table with.

A folder is untrusted input (docs/hostile-folders.md):
- a symlink (to a file or a folder) that resolves outside the root is not
  followed: reported as skipped, naming its target, unless the run allows it
  (`follow_outside_links`, `--follow-outside-links`). A `notes.md ->
  /etc/passwd` is therefore never read, let alone made searchable;
- a name that is not valid UTF-8 (`caf\xe9.md`) costs that file (or folder)
  alone: it is reported as skipped (printed escaped, flow/names.py),
  because its rows could not carry it (PostgreSQL text is UTF-8) and a
  replaced spelling would not be the file's name. Renaming it ingests it.
"""

from __future__ import annotations

import errno
import os
import stat as stat_module
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from cocoindex.resources.file import PatternFilePathMatcher
from mdchunks.errors import UsageError
from mdchunks.names import is_utf8
from mdchunks.plugin.recipe import exclude_patterns, include_patterns, is_excluded_dir


class FileStat(NamedTuple):
    """What a run needs of a document's stat: kept for every document until
    the run ends, where an `os.stat_result` costs about 600 bytes."""

    st_size: int
    st_mtime_ns: int


@dataclass(frozen=True, slots=True)
class Entry:
    rel_path: str
    stat: FileStat

    @property
    def size(self) -> int:
        return self.stat.st_size


@dataclass(frozen=True, slots=True)
class Skipped:
    rel_path: str
    cause: str


@dataclass(slots=True)
class Listing:
    root: Path
    entries: list[Entry] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    # Files the walk did not take, by suffix (lower case; "" for none).
    unlisted: dict[str, int] = field(default_factory=dict)

    @property
    def rel_paths(self) -> list[str]:
        return [entry.rel_path for entry in self.entries]

    @property
    def total_bytes(self) -> int:
        return sum(entry.size for entry in self.entries)


def matcher(suffixes: tuple[str, ...]) -> PatternFilePathMatcher:
    """The same filter the walk applies, for cocoindex's own (live) walker."""
    return PatternFilePathMatcher(
        included_patterns=include_patterns(suffixes), excluded_patterns=exclude_patterns()
    )


def check_root(root: Path) -> Path:
    """The root as an absolute path, or a one-line `UsageError`."""
    if not root.exists():
        raise UsageError(f"no such folder: {root}")
    if not root.is_dir():
        raise UsageError(f"not a folder: {root} (give the folder that holds the documents)")
    if not os.access(root, os.R_OK | os.X_OK):
        raise UsageError(f"cannot read the folder {root}: permission denied")
    return root.resolve()


def walk(
    root: Path, suffixes: tuple[str, ...], max_doc_bytes: int, *, follow_outside_links: bool = False
) -> Listing:
    root = check_root(root)
    match = matcher(suffixes)
    listing = Listing(root=root)
    root_stat = root.stat()
    # (folder, its path relative to the root, ids of it and its ancestors)
    stack: list[tuple[Path, PurePosixPath, frozenset[tuple[int, int]]]] = [
        (root, PurePosixPath(), frozenset({(root_stat.st_dev, root_stat.st_ino)}))
    ]
    while stack:
        folder, rel_folder, ancestors = stack.pop()
        try:
            with os.scandir(folder) as scan:
                children = sorted(scan, key=lambda child: child.name)
        except OSError as exc:
            listing.skipped.append(
                Skipped(_shown(rel_folder) + "/", _cause(exc, "cannot list folder"))
            )
            continue
        subfolders: list[tuple[Path, PurePosixPath, frozenset[tuple[int, int]]]] = []
        for child in children:
            rel = rel_folder / child.name
            try:
                is_dir = child.is_dir()
            except OSError:
                is_dir = False
            utf8 = is_utf8(child.name)
            # The matcher takes UTF-8 only: a name that is not is matched as
            # its lossy spelling (its suffix is what decides).
            probe = rel if utf8 else rel_folder / child.name.encode(errors="replace").decode()
            if is_dir and (is_excluded_dir(child.name) or not match.is_dir_included(probe)):
                continue
            if not is_dir and not match.is_file_included(probe):
                suffix = probe.suffix.lower()
                listing.unlisted[suffix] = listing.unlisted.get(suffix, 0) + 1
                continue
            # Names stay as they are in the listing; whoever prints one escapes it.
            listed = rel.as_posix() + ("/" if is_dir else "")
            if not utf8:
                what = "folder not entered" if is_dir else "not ingested"
                listing.skipped.append(
                    Skipped(listed, f"the name is not valid UTF-8 ({what}; rename it)")
                )
                continue
            outside = None if follow_outside_links else _outside_target(root, child)
            if outside is not None:
                listing.skipped.append(
                    Skipped(
                        listed,
                        f"symlink to {outside}, outside the source root; not followed "
                        "(--follow-outside-links follows it)",
                    )
                )
                continue
            if is_dir:
                try:
                    child_stat = os.stat(child.path)
                except OSError as exc:
                    listing.skipped.append(Skipped(f"{rel}/", _cause(exc, "cannot open folder")))
                    continue
                ident = (child_stat.st_dev, child_stat.st_ino)
                if ident in ancestors:
                    listing.skipped.append(
                        Skipped(f"{rel}/", "symlink loop: the folder contains itself; not entered")
                    )
                    continue
                subfolders.append((Path(child.path), rel, ancestors | {ident}))
                continue
            _add_file(listing, child, rel.as_posix(), max_doc_bytes)
        stack.extend(reversed(subfolders))
    listing.entries.sort(key=lambda entry: entry.rel_path)
    listing.skipped.sort(key=lambda skipped: skipped.rel_path)
    return listing


def _add_file(listing: Listing, child: os.DirEntry[str], rel_path: str, max_doc_bytes: int) -> None:
    try:
        file_stat = os.stat(child.path)  # follows symlinks
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            listing.skipped.append(Skipped(rel_path, "symlink loop: the link never reaches a file"))
        elif child.is_symlink():
            listing.skipped.append(Skipped(rel_path, _broken_link(child.path, exc)))
        else:
            listing.skipped.append(Skipped(rel_path, _cause(exc, "vanished or unreadable")))
        return
    if not stat_module.S_ISREG(file_stat.st_mode):
        listing.skipped.append(Skipped(rel_path, "not a regular file"))
        return
    if file_stat.st_size > max_doc_bytes:
        listing.skipped.append(
            Skipped(
                rel_path,
                f"too large: {file_stat.st_size:,} bytes, over the limit of "
                f"{max_doc_bytes:,} (--max-doc-bytes)",
            )
        )
        return
    if not os.access(child.path, os.R_OK):
        listing.skipped.append(Skipped(rel_path, "cannot read: permission denied"))
        return
    listing.entries.append(
        Entry(rel_path=rel_path, stat=FileStat(file_stat.st_size, file_stat.st_mtime_ns))
    )


def _outside_target(root: Path, child: os.DirEntry[str]) -> str | None:
    """Where a symlink leads when that is outside `root` (resolved), else None.

    Only links need a look: every folder the walk enters is inside the root
    (a link to a folder outside it is not entered), so anything else is too.
    A broken or looping link is left to the checks that name those causes.
    """
    if not child.is_symlink():
        return None
    try:
        target = Path(os.path.realpath(child.path, strict=True))
    except (OSError, RuntimeError):
        return None
    return None if target.is_relative_to(root) else str(target)


def _shown(rel: PurePosixPath) -> str:
    return "." if str(rel) in ("", ".") else rel.as_posix()


def _broken_link(path: str, exc: OSError) -> str:
    """The cause of a link that reaches nothing, with where it points (as a
    link out of the root is named with its target)."""
    try:
        target = os.readlink(path)
    except OSError:
        return _cause(exc, "broken symlink")
    return _cause(exc, f"broken symlink to {target}")


def _cause(exc: OSError, what: str) -> str:
    reason = exc.strerror or type(exc).__name__
    return f"{what}: {reason}"
