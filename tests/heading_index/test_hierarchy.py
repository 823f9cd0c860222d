"""Section ends and parents from levels alone, via one stack."""

from __future__ import annotations

from mdchunks.heading_index.hierarchy import derive_structure


def test_empty() -> None:
    structure = derive_structure([], [], 10)
    assert (structure.section_ends, structure.parents) == ((), ())


def test_skipped_levels_and_returns() -> None:
    #        H1  H3  H2  H6  H4  H1
    levels = [1, 3, 2, 6, 4, 1]
    starts = [0, 10, 20, 30, 40, 50]
    structure = derive_structure(levels, starts, 60)
    assert structure.parents == (None, 0, 0, 2, 2, None)
    assert structure.section_ends == (50, 20, 50, 40, 50, 60)


def test_equal_levels_are_siblings() -> None:
    structure = derive_structure([2, 2, 2], [0, 5, 9], 12)
    assert structure.parents == (None, None, None)
    assert structure.section_ends == (5, 9, 12)


def test_deep_then_shallow_start() -> None:
    structure = derive_structure([4, 2, 3], [0, 5, 9], 12)
    assert structure.parents == (None, None, 1)
    assert structure.section_ends == (5, 12, 12)
