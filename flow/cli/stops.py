"""How a command stops: Ctrl-C or SIGTERM during a batch run ends the process
at once (exit status 130), a `--live` watch stops cleanly within a grace
period, and the console script leaves without finalizing the interpreter.
Only in the console script (`Invocation.console`): a host calling `main`
keeps its process. docs/reliability.md, "Stopping a watch"."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from types import FrameType

import click
from mdchunks.cli.group import Invocation
from mdchunks.cli.output import err, fail, out
from rich.markup import escape

INTERRUPTED = 130  # the exit status of a run stopped by Ctrl-C (docs/cli.md)
RUN_INTERRUPTED = "interrupted; running the same command again completes the work"


@contextlib.contextmanager
def ctrl_c_stops_at_once(stopped: tuple[str, int] | None = None) -> Iterator[None]:
    """Ctrl-C or SIGTERM during a batch run ends the process at once.

    The engine does not stop when its run is cancelled: it went on writing for
    seconds, printed errors of its own, and could abort the interpreter at its
    exit (SIGABRT). A run ended at any moment leaves what the next run of the
    same command completes (the crash tests kill runs at random moments), so
    while the engine runs the process leaves without waiting for it: one line,
    exit status 130. While one of our own statements runs (migrations, the
    reconciliation, the statistics, the vectors), the stop is a
    KeyboardInterrupt instead: the statement is cancelled (flow/db/connection.py)
    and the source's lock given back, where a process gone at once would leave
    the server running the statement to its end, the lock held. Only in the
    console script (a host calling `main` keeps its process), in the main
    thread, and for each signal not ignored (SIGINT is, in a background job of
    a non-interactive shell). `stopped`: the line and exit status instead of
    "interrupted", 130 (`ingest --live`: exit 0). The `--live` watch that may
    follow has its own clean stop."""
    message, code = stopped or (RUN_INTERRUPTED, INTERRUPTED)
    context = click.get_current_context(silent=True)
    invocation = context.find_object(Invocation) if context else None
    caught = [
        number
        for number, default in (
            (signal.SIGINT, signal.default_int_handler),
            (signal.SIGTERM, signal.SIG_DFL),
        )
        if signal.getsignal(number) is default
    ]
    if (
        invocation is None
        or not invocation.console
        or threading.current_thread() is not threading.main_thread()
        or not caught
    ):
        yield
        return
    from mdchunks.db.connection import Connection
    from mdchunks.source.run import run_engine_once

    def stop(signum: int, frame: FrameType | None) -> None:
        if _on_stack(frame, Connection._run) and not _on_stack(frame, run_engine_once):
            raise KeyboardInterrupt
        _restore_terminal()
        os.write(2, f"{'error: ' if code else ''}{message}\n".encode())
        os._exit(code)

    previous = {number: signal.signal(number, stop) for number in caught}
    try:
        yield
    except KeyboardInterrupt:
        if code:
            fail(message, code)
        err.print(escape(message))
        leave_at_once(code)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _restore_terminal() -> None:
    """Before leaving at once: what was printed is out, the cursor shown."""
    with contextlib.suppress(Exception):  # a write may be under way: best effort
        sys.stdout.flush()
        if out.is_terminal:  # the progress bar hid the cursor
            os.write(out.file.fileno(), b"\x1b[?25h\n")


# How long a stopped watch gets to end cleanly (its engine wound down, its
# document rows written, its state stamped and its lock given back) before
# the process leaves without it (docs/reliability.md, "Stopping a watch").
WATCH_STOP_GRACE_SECONDS = 6.0
WATCH_STOPPED_EARLY = (
    "stopped before the watch began; running the same command again completes the work"
)


@contextlib.contextmanager
def watch_stops(code: int) -> Iterator[Callable[[], None] | None]:
    """Around a watch: yields what it calls at each stop request. The first arms a timer that
    ends the process WATCH_STOP_GRACE_SECONDS later if it is still there
    (the engine did not wind down, or the interpreter's exit waits for its
    threads); a second request ends it at once. While the watch is not in
    its engine (starting, or writing its last rows), a stop request is also a
    KeyboardInterrupt there: the watch unwinds, its lock given back. Either way the source's lock
    is given back first (its session dropped) and the exit status is `code`.
    The next run converges: the watch's state is stamped only at its clean
    end, so a run after an early leave re-checks every document. None
    outside the console script (a host's process is not ours to end)."""
    context = click.get_current_context(silent=True)
    invocation = context.find_object(Invocation) if context else None
    if (
        invocation is None
        or not invocation.console
        or threading.current_thread() is not threading.main_thread()
    ):
        yield None
        return
    from mdchunks.source import lock

    def leave() -> None:
        _restore_terminal()
        lock.give_back_at_once()
        os.write(
            2,
            f"warning: the watch did not end within {WATCH_STOP_GRACE_SECONDS:g} s of the stop "
            "request; left without waiting for it (the next run re-checks what it had not "
            "finished)\n".encode(),
        )
        os._exit(code)

    armed: list[threading.Timer] = []

    def on_stop() -> None:
        if armed:
            leave()
        # The engine's file watcher (a watchdog thread) goes on posting events
        # to the watch's event loop, closed once the watch ends: a traceback
        # per event ("Event loop is closed") until the process leaves.
        threading.excepthook = _thread_error_after_stop
        timer = threading.Timer(WATCH_STOP_GRACE_SECONDS, leave)
        timer.daemon = True
        armed.append(timer)
        timer.start()

    def interrupt(signum: int, frame: FrameType | None) -> None:
        on_stop()
        raise KeyboardInterrupt

    caught = [signal.SIGTERM]
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        caught.append(signal.SIGINT)
    previous = {number: signal.signal(number, interrupt) for number in caught}
    try:
        yield on_stop
    except KeyboardInterrupt:
        pass  # the watch unwound: a stop, exit `code`
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _thread_error_after_stop(args: threading.ExceptHookArgs) -> None:
    """A thread's exception once the watch is stopping: debug log only."""
    name = args.thread.name if args.thread else "?"
    logging.getLogger("mdchunks").debug("thread %s after the stop: %r", name, args.exc_value)


def leave_at_once(code: int) -> None:
    """The console script ends here, output flushed, instead of finalizing the
    interpreter: that would wait for the chunking threads to finish every
    document still queued, and for the engine's runtime. Nothing is left to
    do (the lock is given back, the state stamped). A host calling `main`
    returns normally."""
    context = click.get_current_context(silent=True)
    invocation = context.find_object(Invocation) if context else None
    if invocation is None or not invocation.console:
        if code:
            sys.exit(code)
        return
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)


def _on_stack(frame: FrameType | None, function: Callable[..., object]) -> bool:
    """Whether `function` is running in the stack that `frame` tops."""
    code = getattr(function, "__code__", None)
    while frame is not None:
        if frame.f_code is code:
            return True
        frame = frame.f_back
    return False
