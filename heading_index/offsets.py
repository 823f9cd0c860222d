"""UTF-8 byte offsets -> code-point offsets, in one forward pass."""

from __future__ import annotations

from collections.abc import Iterable


def code_point_offsets(source: bytes, byte_offsets: Iterable[int]) -> list[int]:
    """Map ascending byte offsets (each on a character boundary) to code points.

    Each step decodes only the bytes since the previous offset, so the whole
    conversion is linear in the document size however many offsets there are.
    """
    result: list[int] = []
    prev_byte = 0
    prev_cp = 0
    for offset in byte_offsets:
        prev_cp += len(source[prev_byte:offset].decode("utf-8", "replace"))
        prev_byte = offset
        result.append(prev_cp)
    return result
