"""What one document's work holds (issue 42: memory per document; the peak
by shape is `python -m benchmarks.memory_shapes`, docs/benchmarks.md).
Counted by tracemalloc and by the size of the child's answer, which do not
vary with the machine's load."""

from __future__ import annotations

import pickle
import tracemalloc

from mdchunks.plugin.recipe import Recipe
from mdchunks.source import writes
from mdchunks.source.app import _read_chunk_and_hash, chunk_document

DENSE = "# a\n" * 5_000  # a section row every 4 bytes


def test_encoding_the_rows_holds_little_more_than_their_json() -> None:
    done = chunk_document(DENSE, source="docs", rel_path="dense.md", recipe=Recipe())
    tracemalloc.start()
    try:
        start, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        encoded = writes.Encoded.of(done.rows, done.sections)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    json_size = sum(map(len, encoded.chunks + encoded.sections))
    # One dumps call over every row's dict held them all at once: about 3.7x
    # the JSON; in batches, kept as pieces, about 1.1x.
    assert peak - start < 2 * json_size, (peak - start, json_size)


def test_a_documents_answer_is_its_counts_and_encoded_rows() -> None:
    """A child sends back what the run keeps, not the rows and the text as
    well (which the run then held beside their encoding)."""
    done = _read_chunk_and_hash(DENSE.encode(), source="docs", rel_path="dense.md", recipe=Recipe())
    encoded = done.encoded
    assert (done.chunks, done.sections) == (
        len(chunk_document(DENSE, source="docs", rel_path="dense.md", recipe=Recipe()).rows),
        5_000,
    )
    answer = len(pickle.dumps(done, protocol=pickle.HIGHEST_PROTOCOL))
    assert answer < 1.05 * sum(map(len, encoded.chunks + encoded.sections)) + 1_000


def test_taking_the_rows_encodes_them_as_of_does_and_frees_them() -> None:
    """The run encodes its rows with `taking` (each freed once encoded): the
    same pieces as `of`, the lists left empty."""
    done = chunk_document(DENSE, source="docs", rel_path="dense.md", recipe=Recipe())
    rows, sections = list(done.rows), list(done.sections)
    taken = writes.Encoded.taking(rows, sections)
    assert taken == writes.Encoded.of(done.rows, done.sections)
    assert (rows, sections) == ([], [])
