"""Documents that kill the process: found on the next run, quarantined, named.

A native abort in a parser (a SIGABRT, a SIGSEGV) runs no Python code: no
exception, no `finally`, the whole run is gone, and every later run of the
source would chunk the same document and die again. So each run keeps a
journal next to the source's engine state (`<state dir>.chunking`): a line
`+"rel/path"` before a document is chunked and `-"rel/path"` after it. The
lines are plain `write`s to a file opened for appending: the operating system
keeps them when the process dies, whatever kills it (no fsync: a power cut
is not what this defends against).

The next run reads the journal: a document marked `+` and never `-` was being
chunked when the run died. That alone does not prove it guilty (a `kill -9`
or Ctrl-C also stops a run mid-document), so each such suspect is chunked
once more in a process of its own (a spawned interpreter) before this run
touches it. If that process dies by a signal, the document is quarantined:
it fails with "the process died while chunking this document (SIGABRT)", it
declares no rows, and its content hash and the recipe's fingerprint go into
`<state dir>.quarantine.json`, so it is not tried again (not even after the
engine state is reset) until its content or the recipe changes. If the trial
survives, the document is chunked as usual. Concurrency: documents are
chunked in worker threads several at a time; each marks itself, and the
suspects of a run that died are all the documents in flight then.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import multiprocessing
import os
import signal
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from mdchunks.plugin.documents import DocumentProblem

T = TypeVar("T")

CRASHED = "the process died while chunking this document"
JOURNAL_SUFFIX = ".chunking"
QUARANTINE_SUFFIX = ".quarantine.json"


@dataclass
class Quarantine:
    """One run's journal of documents in flight, and the source's quarantine list.

    `Quarantine()` (no paths) marks nothing and trusts every document: for
    callers that keep no engine state of their own (a host's app).
    """

    journal_path: Path | None = None
    quarantine_path: Path | None = None
    suspects: set[str] = field(default_factory=set)  # in flight when the last run died
    quarantined: dict[str, str] = field(default_factory=dict)  # rel_path -> key
    trial: Callable[[Callable[..., Any], tuple[Any, ...], dict[str, Any]], int] | None = None
    _fd: int | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def open(cls, state_dir: Path) -> Quarantine:
        """Read what the last run left next to `state_dir` and start this run's journal."""
        journal = state_dir.with_name(state_dir.name + JOURNAL_SUFFIX)
        listed = state_dir.with_name(state_dir.name + QUARANTINE_SUFFIX)
        suspects = in_flight(journal)
        quarantined: dict[str, str] = {}
        with contextlib.suppress(FileNotFoundError, ValueError):
            found = json.loads(listed.read_text())
            if isinstance(found, dict):
                quarantined = {str(k): str(v) for k, v in found.items()}
        journal.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(journal, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o600)
        opened = cls(journal, listed, suspects, quarantined, _fd=fd)
        # Suspects not tried yet stay suspects if this run dies too.
        for rel_path in sorted(suspects):
            opened._write("+", rel_path)
        return opened

    def guard(
        self, rel_path: str, work: Callable[..., T], *, data: bytes, recipe: str
    ) -> Callable[..., T]:
        """`work` (chunking `rel_path`), marked in the journal while it runs; a
        quarantined or convicted document raises `DocumentProblem` instead."""

        def guarded(*args: Any, **kwargs: Any) -> T:
            if self._fd is None:
                return work(*args, **kwargs)
            key = None
            if rel_path in self.quarantined or rel_path in self.suspects:
                key = quarantine_key(data, recipe)
            if rel_path in self.quarantined and self.quarantined[rel_path] == key:
                raise DocumentProblem(f"{CRASHED} (quarantined: it is retried once it changes)")
            if rel_path in self.suspects and key is not None:
                code = (self.trial or trial_exit_code)(work, args, kwargs)
                self._settle(rel_path, key if code < 0 else None)
                if code < 0:
                    raise DocumentProblem(f"{CRASHED} ({signal_name(-code)})")
            self._write("+", rel_path)
            try:
                return work(*args, **kwargs)
            finally:
                self._write("-", rel_path)

        return guarded

    def close(self) -> None:
        """The run ended in Python (success, an error, a Ctrl-C while one of our
        own statements ran): nothing it left in flight died of its document;
        only untried suspects are kept. (A Ctrl-C while the engine runs ends
        the CLI at once, flow/cli/stops.py: like a crash, it leaves its documents in
        flight as suspects.)"""
        with self._lock:
            if self._fd is None:
                return
            os.close(self._fd)
            self._fd = None
        assert self.journal_path is not None
        if self.suspects:
            lines = "".join(f"+{json.dumps(rel)}\n" for rel in sorted(self.suspects))
            self.journal_path.write_text(lines)
        else:
            self.journal_path.unlink(missing_ok=True)

    def _settle(self, rel_path: str, convicted_key: str | None) -> None:
        with self._lock:
            self.suspects.discard(rel_path)
            if convicted_key is None:
                self.quarantined.pop(rel_path, None)
            else:
                self.quarantined[rel_path] = convicted_key
            if self.quarantine_path is not None:
                staged = self.quarantine_path.with_name(self.quarantine_path.name + ".new")
                staged.write_text(json.dumps(self.quarantined, sort_keys=True))
                staged.replace(self.quarantine_path)
        self._write("-", rel_path)

    def _write(self, sign: str, rel_path: str) -> None:
        fd = self._fd
        if fd is not None:
            # One write of one line: appends of concurrent threads never interleave.
            os.write(fd, f"{sign}{json.dumps(rel_path)}\n".encode())


def in_flight(journal: Path) -> set[str]:
    """Documents marked `+` and not `-` in a journal (a torn last line is ignored)."""
    try:
        lines = journal.read_bytes().decode("utf-8", "replace").splitlines()
    except FileNotFoundError:
        return set()
    open_marks: set[str] = set()
    for line in lines:
        try:
            rel_path = json.loads(line[1:])
        except ValueError:
            continue
        if not isinstance(rel_path, str):
            continue
        if line.startswith("+"):
            open_marks.add(rel_path)
        elif line.startswith("-"):
            open_marks.discard(rel_path)
    return open_marks


def quarantine_key(data: bytes, recipe: str) -> str:
    """What a quarantine holds on to: the content and the recipe that crashed."""
    return f"{hashlib.sha256(data).hexdigest()}:{recipe}"


def trial_exit_code(work: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    """`work(*args, **kwargs)` in a spawned interpreter; its exit code (negative:
    the signal that killed it). Spawned, not forked: the run's threads (the
    engine's, the chunking pool's) may hold locks a forked child would wait on."""
    context = multiprocessing.get_context("spawn")
    process = context.Process(target=_trial, args=(work, args, kwargs), daemon=True)
    process.start()
    process.join()
    return process.exitcode if process.exitcode is not None else 0


def _trial(work: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    # The crash is what is being tested: its native message (an assertion's
    # text) would be noise on the user's terminal; the run names the cause.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    work(*args, **kwargs)


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def forget(state_dir: Path) -> None:
    """Remove the journal and the quarantine list of a source (`mdchunks drop`)."""
    for suffix in (JOURNAL_SUFFIX, QUARANTINE_SUFFIX):
        state_dir.with_name(state_dir.name + suffix).unlink(missing_ok=True)


@contextlib.contextmanager
def opened(state_dir: Path | None) -> Iterator[Quarantine]:
    """`Quarantine.open(state_dir)` closed at the end of the block (None: off)."""
    quarantine = Quarantine() if state_dir is None else Quarantine.open(state_dir)
    try:
        yield quarantine
    finally:
        quarantine.close()
