"""A run's progress: a bar on a terminal, a line every few seconds elsewhere.

A CI log or a pipe gets no bar (rich draws none there), and a long run was
silent until its summary; so off a terminal one plain line on stderr every
LINE_INTERVAL_SECONDS says how far the run is (docs/cli.md). `--quiet` turns
both off.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from mdchunks import api
from mdchunks.names import shown
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

LINE_INTERVAL_SECONDS = 5.0


def progress_line(label: str, done: api.Progress, seconds: float) -> str:
    """`ingesting docs: 1,200 of 5,000 documents, 3.1 MB/s, 15 s`, and `;
    chunking big/log.md (5.0 MB)` while a large document takes its time; while
    the chunks are embedded, `ingesting docs: 256 of 688 vectors, 40 s`."""
    counted = f"{label}: {done.done:,} of {done.total:,} {done.unit}"
    if done.unit != "documents":
        return f"{counted}, {seconds:.0f} s"
    rate = done.bytes_processed / 1e6 / seconds if seconds > 0 else 0.0
    line = f"{counted}, {rate:.1f} MB/s, {seconds:.0f} s"
    if done.chunking is not None:
        rel_path, size = done.chunking
        line += f"; chunking {shown(rel_path)} ({size / 1e6:.1f} MB)"
    return line


@dataclass
class ProgressLines:
    """The progress function off a terminal: at most one line per `interval`,
    the first once a run has lasted that long (a short run prints none)."""

    label: str
    write: Callable[[str], None]
    interval: float = LINE_INTERVAL_SECONDS
    clock: Callable[[], float] = time.monotonic
    started: float = field(init=False)
    last: float = field(init=False)

    def __post_init__(self) -> None:
        self.started = self.last = self.clock()

    def __call__(self, done: api.Progress) -> None:
        now = self.clock()
        if now - self.last < self.interval or done.done >= done.total:
            return
        self.last = now
        self.write(progress_line(self.label, done, now - self.started))


@contextlib.contextmanager
def progress_of(
    label: str, *, out: Console, err: Console, quiet: bool
) -> Iterator[api.ProgressFn | None]:
    """The progress function of a run labelled `label` (plain text, safe for a
    terminal: flow/names.py), or None when `quiet`."""
    if quiet:
        yield None
        return
    if not out.is_terminal:
        yield ProgressLines(label, lambda line: err.print(line, markup=False))
        return
    bar = Progress(
        TextColumn("{task.description}", markup=False),  # a label is no format string
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[unit]}", markup=False),
        TimeElapsedColumn(),
        console=out,
        transient=True,
    )
    task = bar.add_task(label, total=None, unit="documents")

    def update(done: api.Progress) -> None:
        bar.update(task, completed=done.done, total=done.total, unit=done.unit)

    with bar:
        yield update
