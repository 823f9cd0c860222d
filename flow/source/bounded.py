"""Large documents chunked in a child process, with a time and a memory limit.

Chunking is native code for much of its time (cocoindex's Rust splitter,
tree-sitter), and a thread running it cannot be stopped: a document of a shape
nobody has guarded yet would hold a chunking thread, and the run, for as long
as it takes (issue 26 measured a 24 MiB table at half an hour). So a document
of `CHILD_ABOVE_BYTES` or more is read and chunked in a child process that the
run kills when it spends more than `DocumentLimits.seconds` of CPU time or
holds more resident memory than `DocumentLimits.memory_bytes`. The document then fails
alone, named, with the limit it passed: the failure is raised, not declared
(like a document that grew past the size limit after the walk), so its old
rows go, nothing of it is memoized, and the next run tries it again (with the
same limits, it fails again: the limit is in the message).

The time limit counts the child's CPU time, not the clock's: what a document
costs, the same on an idle machine and on a loaded one (issue 42: a 20 MB
document that takes 60 s idle passed a 180 s wall-clock limit with both cores
busy elsewhere, and failed). A child that spends its time waiting instead (no
shape of ours does) is stopped at `WALL_CLOCK_TIMES` the limit on the clock.

Smaller documents stay in the run's process: most corpora hold none this
large and never pay for a child. Below 1 MiB the slowest known shape (a
heading every 4 bytes) takes about 40 s and 500 MB on a loaded 2-core
machine (docs/benchmarks.md), so the limits are the ones that matter.

The children are forked from a fork server (multiprocessing's "forkserver")
that imported the chunking code once: the first large document of a process
pays about 1.6 s to start it, every later one about 30 ms (measured on 2
cores), instead of the 1.4-1.9 s of a spawned interpreter each. The server has
cocoindex's idle runtime threads; a child uses none of them (the splitter
and the parse run on the calling thread). A child also dies by itself: at
its deadline (SIGALRM, a little after the parent's) and when the run's end of
its answer pipe closes, so a killed run leaves no child behind; past its CPU
time (RLIMIT_CPU, SIGXCPU) too.

A child killed by a signal the run did not send (a native abort) is the
quarantine's "the process died while chunking this document" at once, a
problem of the document's bytes (flow/source/quarantine.py convicts the same
crash in-process only on the next run, after a trial). A child that ends
with no answer otherwise (an exit status, or its own SIGALRM) is the run's
failure, not the document's: raised (`ChildLost`), never memoized, so a run
with other options tries the document again. The limits themselves are
checked before any work (`DocumentLimits.problem`): a time limit past what
`signal.alarm` takes, or infinite, is refused in one line.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import pickle
import resource
import select
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, TypeVar

from mdchunks.plugin.documents import DocumentProblem
from mdchunks.source.quarantine import CRASHED, signal_name

T = TypeVar("T")

CHILD_ABOVE_BYTES = 1024 * 1024
# Measured on 2 cores under load (python -m benchmarks.document_cost): prose
# about 3 s a MB, so a 24 MiB document (the default size limit) about 80 s;
# the limit leaves it room and stops an unguarded shape within minutes.
DEFAULT_DOC_SECONDS = 180.0
# Prose peaks at about 100 bytes a byte of document (2.4 GB at 24 MiB) plus the
# the child's 40 MB of interpreter; heading-dense text at about 480, so it is
# stopped by this limit past about 8 MB.
DEFAULT_DOC_MEMORY_MB = 4096
_POLL_SECONDS = 0.05
# A child is stopped at this many times the limit on the clock, whatever its
# CPU time: the backstop for one that waits instead of working.
WALL_CLOCK_TIMES = 4
_TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")
# The importers' libraries too, and a document of each kind chunked once
# (flow/source/warmup.py): every converted file is read in a child, and each
# child importing them again cost it about 0.2 s (seconds on a loaded
# machine), and its parsers' first call tens of ms more.
_PRELOAD = ["mdchunks.source.app", "mdchunks.source.warmup"]
# The child's own deadline comes this long after the parent's (SIGALRM).
_ALARM_GRACE_SECONDS = 5
# `signal.alarm` takes a C int: a limit past this would overflow it in the
# child, which then died before chunking anything (issue 42: every large
# document failed as "the process died", memoized as its own failure).
MAX_DOC_SECONDS = 2**31 - 1 - _ALARM_GRACE_SECONDS
# Resident memory is compared in bytes, as /proc counts them (an int64).
MAX_DOC_MEMORY_MB = (2**63 - 1) // 2**20


class DocumentOverLimit(Exception):
    """A document whose chunking passed a limit: raised, never memoized."""


class ChildLost(DocumentOverLimit):
    """The child ended without an answer and not by a signal of its own
    (an exit status, or the SIGALRM of its deadline): what the run's options
    or the machine did, not the document's bytes, so raised and never
    memoized as the document's failure (the next run tries it again)."""


@dataclass(frozen=True, slots=True)
class DocumentLimits:
    seconds: float = DEFAULT_DOC_SECONDS
    memory_bytes: int = DEFAULT_DOC_MEMORY_MB * 1024 * 1024
    child_above_bytes: int = CHILD_ABOVE_BYTES

    def problem(self) -> str | None:
        """What makes these limits unusable, in the options' words; None: nothing."""
        if not 0 < self.seconds <= MAX_DOC_SECONDS:  # nan and inf too
            return (
                f"--doc-time-limit must be above 0 and at most {MAX_DOC_SECONDS:,} s "
                f"(got {self.seconds:g})"
            )
        if self.memory_bytes < 1024 * 1024:
            return f"--doc-memory-limit must be at least 1 MB (got {self.memory_bytes // 2**20})"
        if self.memory_bytes > MAX_DOC_MEMORY_MB * 2**20:
            return (
                f"--doc-memory-limit must be at most {MAX_DOC_MEMORY_MB:,} MB "
                f"(got {self.memory_bytes // 2**20:,})"
            )
        return None


DEFAULT_LIMITS = DocumentLimits()


def _context() -> Any:
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(_PRELOAD)
    return context


def run_in_child(
    work: Callable[..., T], args: tuple[Any, ...], kwargs: dict[str, Any], limits: DocumentLimits
) -> T:
    """`work(*args, **kwargs)` in a child process, within `limits`; raises
    `DocumentOverLimit` (killed at a limit), `DocumentProblem` (died by a
    signal), or what `work` raised."""
    context = _context()
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(
        target=_child, args=(sender, limits.seconds, work, args, kwargs), daemon=True
    )
    process.start()  # the first in a process also starts the fork server (about 1.6 s)
    sender.close()
    deadline = time.monotonic() + WALL_CLOCK_TIMES * limits.seconds
    try:
        while True:
            if receiver.poll(_POLL_SECONDS):
                try:
                    ok, value = pickle.loads(receiver.recv_bytes())
                except EOFError:
                    break  # the pipe closed with no answer: the child died
                if ok:
                    return value  # type: ignore[no-any-return]
                raise value
            if resident_bytes(process.pid) > limits.memory_bytes:
                raise DocumentOverLimit(
                    f"needed more than {limits.memory_bytes // 2**20} MB of memory to chunk "
                    "(--doc-memory-limit)"
                )
            if cpu_seconds(process.pid) > limits.seconds:
                raise DocumentOverLimit(_over_time(limits))
            if time.monotonic() > deadline:
                raise DocumentOverLimit(
                    f"took longer than {WALL_CLOCK_TIMES * limits.seconds:g} s to chunk, "
                    f"mostly waiting ({WALL_CLOCK_TIMES} times --doc-time-limit)"
                )
    finally:
        if process.is_alive():
            process.kill()
        process.join()
        receiver.close()
    code = process.exitcode or 0
    if code in (-signal.SIGALRM, -signal.SIGXCPU):  # its own deadlines, past the parent's
        raise ChildLost(_over_time(limits))
    if code < 0:
        raise DocumentProblem(f"{CRASHED} ({signal_name(-code)})")
    # An exit without an answer is not a crash of the document's own making
    # (the work's exceptions come back as answers): the next run tries again.
    raise ChildLost(
        f"the process chunking this document ended without an answer (exit status {code})"
    )


def _over_time(limits: DocumentLimits) -> str:
    return f"took more than {limits.seconds:g} s of CPU time to chunk (--doc-time-limit)"


def cpu_seconds(pid: int | None) -> float:
    """A process's CPU time so far, user and system, all its threads (Linux:
    /proc), 0 where it cannot be read."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        # Fields after the command's name, which may hold spaces and parentheses:
        # utime and stime are the 14th and 15th fields of the line.
        fields = stat[stat.rindex(")") + 2 :].split()
        return (int(fields[11]) + int(fields[12])) / _TICKS_PER_SECOND
    except (OSError, ValueError, IndexError):
        return 0.0


def resident_bytes(pid: int | None) -> int:
    """A process's resident memory (Linux: /proc), 0 where it cannot be read."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _child(
    sender: Connection,
    seconds: float,
    work: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> None:
    _die_with_parent(sender)
    # Past the parent's deadlines, if the parent is gone or stuck: SIGXCPU's
    # and SIGALRM's default actions end the process.
    due = min(math.ceil(seconds), MAX_DOC_SECONDS) if math.isfinite(seconds) else MAX_DOC_SECONDS
    resource.setrlimit(resource.RLIMIT_CPU, (due + _ALARM_GRACE_SECONDS, resource.RLIM_INFINITY))
    signal.alarm(min(WALL_CLOCK_TIMES * due, MAX_DOC_SECONDS) + _ALARM_GRACE_SECONDS)
    # A native abort's own message would be noise on the user's terminal; the
    # run names the cause.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    try:
        answer = pickle.dumps((True, work(*args, **kwargs)), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:  # sent to the parent, which raises it
        try:
            answer = pickle.dumps((False, exc))
        except Exception:
            answer = pickle.dumps((False, RuntimeError(f"{type(exc).__name__}: {exc}")))
    sender.send_bytes(answer)
    sender.close()


def _die_with_parent(sender: Connection) -> None:
    # The child's parent is the fork server, which outlives a killed run (each
    # child holds the server's "alive" pipe open), so no parent-death signal:
    # a thread waits for the run's end of the answer pipe to close (poll says
    # POLLERR to a writer without readers) and ends the process then.
    def watch() -> None:
        waiting = select.poll()
        waiting.register(sender.fileno(), select.POLLERR)
        waiting.poll()
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()
