"""Running the app once (or live), with progress, and reading its stats."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import threading
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import cocoindex as coco
from cocoindex._internal import core as _core  # cancel_all: what `cocoindex` CLI's Ctrl-C uses
from mdchunks.db import connection
from mdchunks.errors import MdchunksError
from mdchunks.plugin.recipe import Recipe
from mdchunks.source import offload
from mdchunks.source.app import build_app, open_environment, process_document
from mdchunks.source.ledger import RunLedger


@dataclass(frozen=True, slots=True)
class Progress:
    """Where a run is, as its progress function is told every few tenths of a second."""

    done: int  # documents done (processed, unchanged or failed), or vectors written
    total: int  # documents the walk found, or vectors to write
    bytes_processed: int  # sizes of the documents actually processed so far
    # What is counted: "documents" while the engine runs, then "vectors"
    # while the chunks are embedded (`ingest --embed`).
    unit: str = "documents"
    # The largest document being chunked in a child process now (rel_path,
    # bytes), or None: what a run is busy with while its count stands still.
    chunking: tuple[str, int] | None = None


ProgressFn = Callable[[Progress], None]
AliveFn = Callable[[], None]  # raises when the run must stop (the database went away)

log = logging.getLogger("mdchunks")

# Stats are grouped by the function's name (set by functools.update_wrapper,
# which cocoindex's AsyncFunction type does not declare).
COMPONENT: str = process_document.__name__  # type: ignore[attr-defined]
PROGRESS_INTERVAL_SECONDS = 0.2
ALIVE_INTERVAL_SECONDS = 0.5
STOP_TIMEOUT_SECONDS = 10.0  # for the engine to wind down once cancelled
# For a stopped watch's engine to end its update; then its environment is closed.
LIVE_STOP_SECONDS = 3.0
# For the tasks a run leaves behind to end once cancelled; then its loop closes.
LEFTOVER_SECONDS = 5.0

T = TypeVar("T")


def run_on_own_loop(main: Coroutine[Any, Any, T], *, leftover: float = LEFTOVER_SECONDS) -> T:
    """`asyncio.run(main)`, except that the tasks left when `main` ends get
    `leftover` seconds to end once cancelled, not forever. asyncio.run waits
    for each: a watch whose database stopped left an engine task (a live
    component's, or the pool's reconnecting) that did not end under load, and
    the watch hung after saying nothing (issue 42). A task still pending is
    dropped with the loop."""
    loop = asyncio.new_event_loop()
    try:
        asyncio.set_event_loop(loop)
        return loop.run_until_complete(main)
    finally:
        try:
            left = asyncio.all_tasks(loop)
            for task in left:
                task.cancel()
            if left:
                loop.set_exception_handler(_quiet)
                loop.run_until_complete(asyncio.wait(left, timeout=leftover))
            loop.run_until_complete(asyncio.wait_for(loop.shutdown_asyncgens(), timeout=leftover))
        except (Exception, asyncio.CancelledError) as exc:  # the cleanup never hides main's outcome
            log.debug("closing the run's loop: %s", exc)
        finally:
            asyncio.set_event_loop(None)
            loop.close()


@dataclass(frozen=True, slots=True)
class EngineStats:
    """cocoindex's own counts for the per-document component."""

    added: int = 0  # documents seen for the first time
    reprocessed: int = 0  # documents processed again (changed, or another recipe)
    unchanged: int = 0  # memo hits: not processed
    deleted: int = 0  # documents gone since the last run (their rows deleted)
    errors: int = 0  # documents whose processing raised

    @classmethod
    def of(cls, stats: coco.UpdateStats | None) -> EngineStats:
        group = stats.by_component.get(COMPONENT) if stats else None
        if group is None:
            return cls()
        return cls(
            added=group.num_adds,
            reprocessed=group.num_reprocesses,
            unchanged=group.num_unchanged,
            deleted=group.num_deletes,
            errors=group.num_errors,
        )

    def __add__(self, other: EngineStats) -> EngineStats:
        return EngineStats(
            added=self.added + other.added,
            reprocessed=self.reprocessed + other.reprocessed,
            unchanged=self.unchanged + other.unchanged,
            deleted=self.deleted + other.deleted,
            errors=self.errors + other.errors,
        )


async def run_once(
    *,
    database_url: str,
    root: Path,
    state_dir: Path,
    source: str,
    recipe: Recipe,
    run: RunLedger,
    full_reprocess: bool = False,
    progress: ProgressFn | None = None,
    alive: AliveFn | None = None,
) -> EngineStats:
    """One catch-up update of the source; returns when every document is done.

    `alive` is called (in a thread) every ALIVE_INTERVAL_SECONDS while the
    engine runs; when it raises, the run stops at once with that exception.
    The caller passes a check of the connection that holds the source's lock:
    when the database goes away, cocoindex would otherwise retry its writes
    for a long while, and the lock is gone with the connection anyway.
    """
    total = len(run.listing.entries)
    async with open_environment(
        database_url=database_url, root=root, state_dir=state_dir, run=run
    ) as env:
        handle = build_app(env, source=source, recipe=recipe).update(full_reprocess=full_reprocess)
        poller = asyncio.create_task(_poll(handle, run, progress)) if progress else None
        try:
            await _until_done(handle, alive)
        except MdchunksError:
            raise
        except Exception as exc:  # the engine itself failed (not one document)
            raise MdchunksError(f"the ingest engine failed: {_first_line(exc)}") from None
        finally:
            if poller:
                poller.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await poller
        stats = EngineStats.of(handle.stats())
    if progress:
        progress(Progress(total, total, run.processed_bytes))
    return stats


async def run_live(
    *,
    database_url: str,
    root: Path,
    state_dir: Path,
    source: str,
    recipe: Recipe,
    run: RunLedger,
    on_change: Callable[[EngineStats], Awaitable[None] | None] | None = None,
    on_stop: Callable[[], None] | None = None,
    alive: AliveFn | None = None,
) -> EngineStats:
    """Watch the root and keep the rows current until Ctrl-C (SIGINT) or
    SIGTERM (what a service manager sends); `on_stop` is called at each of
    them, in the signal handler (the CLI arms its bounded exit there).
    `alive` is called (in a thread) every ALIVE_INTERVAL_SECONDS, as in
    `run_once`: when it raises (a disk nearly full), the watch is stopped the
    same way as on a stop request and that exception is raised.

    A stop does not cancel the watching task under the engine: the engine went
    on with the components it had started, which failed against a closed
    environment (a backtrace each) and left tasks that `asyncio.run` waited
    for forever (docs/reliability.md, "Stopping a watch"). Instead the engine
    is stopped by its global cancellation token (as cocoindex's own CLI does),
    the chunking not yet started is dropped, the engine gets
    LIVE_STOP_SECONDS to wind down, and only then is the environment
    closed and its connections dropped."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()

    def request_stop() -> None:
        loop.call_soon_threadsafe(stop.set)
        if on_stop is not None:
            on_stop()

    last = [EngineStats()]
    with _stop_signals(request_stop):
        try:
            async with open_environment(
                database_url=database_url, root=root, state_dir=state_dir, run=run
            ) as env:
                handle = build_app(env, source=source, recipe=recipe).update(live=True)
                watching = asyncio.ensure_future(_follow(handle, last, on_change))
                stopping = asyncio.ensure_future(stop.wait())
                # The watchdog races the watch as in `_until_done`: a full disk
                # would otherwise meet the engine's retry-forever.
                watchdog = asyncio.ensure_future(_watch(alive)) if alive else None
                racing = {watching, stopping} | ({watchdog} if watchdog else set())
                try:
                    await asyncio.wait(racing, return_when=asyncio.FIRST_COMPLETED)
                    if not watching.done():
                        await _wind_down(watching)
                        failed = watchdog.exception() if watchdog and watchdog.done() else None
                        raise failed or _Stopped()
                finally:
                    for task in (stopping, watchdog):
                        if task is not None and not task.done():
                            task.cancel()
                            with contextlib.suppress(BaseException):
                                await task
                watching.result()  # the engine ended by itself: it failed
                return last[0]
        except _Stopped:
            return last[0]
        except MdchunksError:
            raise
        except Exception as exc:
            if connection.is_loss(exc):  # a change's rows met a lost database: the caller says so
                raise
            raise MdchunksError(f"the live ingest failed: {_first_line(exc)}") from None
        finally:
            _core.reset_global_cancellation()


class _Stopped(Exception):
    """The watch was asked to stop: the environment is left as after a failure
    (its connections dropped, not waited for)."""


async def _follow(
    handle: coco.UpdateHandle[None],
    last: list[EngineStats],
    on_change: Callable[[EngineStats], Awaitable[None] | None] | None,
) -> None:
    async for snapshot in handle.watch():
        current = EngineStats.of(snapshot.stats)
        if current != last[0] and on_change is not None:
            result = on_change(current)
            if result is not None:
                await result
        last[0] = current


async def _wind_down(update: asyncio.Future[None], seconds: float = LIVE_STOP_SECONDS) -> None:
    """Stop the engine the way cocoindex's own CLI does on Ctrl-C (its global
    cancellation token, so no write is retried meanwhile), drop the chunking
    not yet started, and give `update` `seconds` to end. What still fails on
    the way out (writes of components cut short) is expected: debug log only,
    no traceback. The caller resets the token."""
    asyncio.get_running_loop().set_exception_handler(_quiet)
    _core.cancel_all()
    offload.drop_queued()
    with contextlib.suppress(BaseException):
        await asyncio.wait_for(update, seconds)


@contextlib.contextmanager
def _stop_signals(request_stop: Callable[[], None]) -> Iterator[None]:
    """SIGTERM, and SIGINT unless it is ignored (a background job), call
    `request_stop` while the watch runs; the previous handlers come back after.
    Only in the main thread (elsewhere Python takes no handler): there a
    KeyboardInterrupt or a cancellation ends the watch as before."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught = [signal.SIGTERM]
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        caught.append(signal.SIGINT)
    previous = {
        number: signal.signal(number, lambda signum, frame: request_stop()) for number in caught
    }
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


async def _until_done(handle: coco.UpdateHandle[None], alive: AliveFn | None) -> None:
    """Wait for the update, or raise what `alive` raised as soon as it does."""
    if alive is None:
        await handle.result()
        return
    result = asyncio.ensure_future(handle.result())
    watchdog = asyncio.ensure_future(_watch(alive))
    try:
        await asyncio.wait({result, watchdog}, return_when=asyncio.FIRST_COMPLETED)
        stopped = watchdog.done() and not result.done()
        if stopped:
            # The one error that matters is the watchdog's.
            try:
                await _wind_down(result, STOP_TIMEOUT_SECONDS)
            finally:
                _core.reset_global_cancellation()
    finally:
        for task in (result, watchdog):
            if not task.done():
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
    if watchdog.done() and not watchdog.cancelled() and watchdog.exception() is not None:
        raise watchdog.exception()  # type: ignore[misc]
    result.result()


def _quiet(loop: asyncio.AbstractEventLoop, context: dict[str, object]) -> None:
    """Exceptions of tasks left over by a stopped run: debug log only."""
    log.debug("after the run stopped: %s", context.get("message"))


async def _watch(alive: AliveFn) -> None:
    while True:
        await asyncio.sleep(ALIVE_INTERVAL_SECONDS)
        await asyncio.to_thread(alive)


async def _poll(handle: coco.UpdateHandle[None], run: RunLedger, progress: ProgressFn) -> None:
    total = len(run.listing.entries)
    while True:
        stats = handle.stats()
        group = stats.by_component.get(COMPONENT) if stats else None
        done = min(group.num_finished, total) if group else 0
        progress(Progress(done, total, run.processed_bytes, chunking=run.largest_in_flight()))
        await asyncio.sleep(PROGRESS_INTERVAL_SECONDS)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
