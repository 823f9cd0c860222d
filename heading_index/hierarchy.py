"""Flat headings -> section ends and ancestor paths, derived from levels alone.

tree-sitter-markdown's `section` nodes do not follow heading levels (setext
headings open none), so the hierarchy is rebuilt here from the levels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Structure:
    """Per heading (same order): where its section ends and its ancestor indices."""

    section_ends: tuple[int, ...]
    parents: tuple[int | None, ...]  # index of the nearest ancestor, or None


def derive_structure(levels: Sequence[int], starts: Sequence[int], length: int) -> Structure:
    """Section ends and parents of headings given in document order.

    One stack of open sections: a new heading closes (pops) every open heading
    of a level >= its own, whose section therefore ends at its start; what is
    left on top is its parent. Skipped levels need nothing special.
    """
    section_ends = [length] * len(levels)
    parents: list[int | None] = [None] * len(levels)
    open_sections: list[int] = []
    for index, level in enumerate(levels):
        while open_sections and levels[open_sections[-1]] >= level:
            section_ends[open_sections.pop()] = starts[index]
        parents[index] = open_sections[-1] if open_sections else None
        open_sections.append(index)
    return Structure(tuple(section_ends), tuple(parents))
