"""Byte -> code-point offsets: exact, and one pass over the document."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples
from mdchunks.heading_index.offsets import code_point_offsets


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.sampled_from(["a", "é", "日", "😀", "\n", "\r\n"]), max_size=50), st.data())
def test_matches_decoding_the_prefix(parts: list[str], data: st.DataObject) -> None:
    text = "".join(parts)
    boundaries = sorted({len("".join(parts[:i]).encode()) for i in range(len(parts) + 1)})
    chosen = sorted(data.draw(st.lists(st.sampled_from(boundaries))))
    source = text.encode()
    assert code_point_offsets(source, chosen) == [len(source[:b].decode()) for b in chosen]


def test_no_offsets() -> None:
    assert code_point_offsets(b"abc", []) == []


def test_repeated_offsets() -> None:
    assert code_point_offsets("é😀x".encode(), [2, 2, 6, 7]) == [1, 1, 2, 3]


class _CountingBytes(bytes):
    """bytes that count how many bytes its slices hand out."""

    sliced = 0

    def __getitem__(self, key):  # type: ignore[no-untyped-def]
        part = super().__getitem__(key)
        if isinstance(key, slice):
            _CountingBytes.sliced += len(part)
        return part


def test_linear_in_document_size() -> None:
    source = _CountingBytes((("é" * 1000 + "\n") * 100).encode())
    offsets = [i * 2001 for i in range(101)]
    _CountingBytes.sliced = 0
    code_point_offsets(source, offsets)
    assert _CountingBytes.sliced == len(source)  # every byte decoded exactly once
