"""flow/source/offload.py: chunking off the event loop, bounded by bytes in flight."""

from __future__ import annotations

import asyncio
import contextvars
import platform
import threading
import time

import pytest
from mdchunks.source.offload import INLINE_BELOW_BYTES, ByteBudget, run_off_loop


def _peak_concurrency(budget: ByteBudget, sizes: list[int]) -> tuple[int, list[int]]:
    """Run one thread per size through the budget; the most that ran at once,
    and which sizes ran alongside another."""
    lock = threading.Lock()
    running: list[int] = []
    peak = 0
    shared: list[int] = []

    def work(size: int) -> None:
        nonlocal peak
        with budget.hold(size):
            with lock:
                running.append(size)
                peak = max(peak, len(running))
                if len(running) > 1:
                    shared.extend(running)
            time.sleep(0.05)
            with lock:
                running.remove(size)

    threads = [threading.Thread(target=work, args=(size,)) for size in sizes]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return peak, shared


def test_small_pieces_overlap() -> None:
    peak, _ = _peak_concurrency(ByteBudget(100), [10, 10, 10])
    assert peak >= 2


def test_a_piece_over_the_budget_runs_alone() -> None:
    _, shared = _peak_concurrency(ByteBudget(100), [10, 500, 10, 10])
    assert 500 not in shared


def test_work_runs_in_the_callers_context_and_returns_its_value() -> None:
    marker: contextvars.ContextVar[str] = contextvars.ContextVar("marker")

    async def main() -> tuple[str, str]:
        marker.set("component")
        return await run_off_loop(
            INLINE_BELOW_BYTES, lambda: (marker.get(), threading.current_thread().name)
        )

    seen, thread_name = asyncio.run(main())
    assert seen == "component"
    assert thread_name.startswith("mdchunks-chunk")


def test_small_work_runs_inline() -> None:
    async def main() -> str:
        return await run_off_loop(INLINE_BELOW_BYTES - 1, lambda: threading.current_thread().name)

    assert asyncio.run(main()) == threading.main_thread().name


def test_each_document_chunked_off_the_loop_hands_free_memory_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from mdchunks.source import offload

    if platform.libc_ver()[0] == "glibc":
        assert offload._TRIM is not None and offload._TRIM() in (0, 1)
    trims: list[str] = []
    monkeypatch.setattr(offload, "_TRIM", lambda: trims.append(threading.current_thread().name))

    async def chunk(size: int) -> int:
        return await run_off_loop(size, lambda: size)

    assert asyncio.run(chunk(INLINE_BELOW_BYTES - 1)) == INLINE_BELOW_BYTES - 1
    assert trims == []  # inline: the loop thread's memory is not the chunkers'
    assert asyncio.run(chunk(INLINE_BELOW_BYTES)) == INLINE_BELOW_BYTES

    def fails() -> int:
        raise ValueError("a bug")

    async def failing() -> int:
        return await run_off_loop(INLINE_BELOW_BYTES, fails)

    with pytest.raises(ValueError, match="a bug"):
        asyncio.run(failing())
    assert len(trims) == 2 and all(name.startswith("mdchunks-chunk") for name in trims)
