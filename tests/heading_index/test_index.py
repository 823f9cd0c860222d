"""build_index end to end: odd input never raises, offsets stay in code points."""

from __future__ import annotations

import time

from mdchunks.heading_index import HeadingIndex, assign, build_index


def test_empty_text_gives_an_empty_index() -> None:
    assert build_index("") == HeadingIndex(headings=(), length=0)


def test_text_without_headings() -> None:
    assert build_index("just prose\n\nmore\n") == HeadingIndex(headings=(), length=17)


def test_nul_characters() -> None:
    text = "\0\0# a\0b\n\0\n# c\n"
    index = build_index(text)
    assert [(h.text, text[h.start : h.end]) for h in index.headings] == [("c", "# c\n")]
    text = "# a\0b\n"
    (heading,) = build_index(text).headings
    assert (heading.text, heading.end) == ("a\ufffdb", len(text))


def test_lone_surrogates_keep_offsets_exact() -> None:
    text = "\ud800\udfff pre\n# T\udc00x \ud83d\n## 😀\ud800\nbody\n"
    first, second = build_index(text).headings
    assert text[first.start : first.end] == "# T\udc00x \ud83d\n"
    assert first.text == "T\udc00x \ud83d"
    assert text[second.start : second.end] == "## 😀\ud800\n"


def test_binary_junk_does_not_raise() -> None:
    junk = bytes(range(256)).decode("latin-1") * 50
    index = build_index(junk + "\n# after\n")
    assert index.headings[-1].text == "after"


def test_heading_inside_a_parse_error_region_does_not_raise() -> None:
    for text in ("# ", "#\t", "- a\n# b", "```\n", "<div", "[", "[x]:", "> # q\n===\n"):
        build_index(text)


def test_deep_nesting_of_containers() -> None:
    text = "> " * 500 + "# deep\n" + "- " * 500 + "x\n# top\n"
    assert [h.text for h in build_index(text).headings] == ["top"]


def test_a_large_document_is_indexed_quickly() -> None:
    # 5 MB here; the benchmark script runs 50 MB.
    section = "## Section é\n\n" + ("Some prose with `code` and *emphasis* 🦀.\n" * 40) + "\n"
    text = "# Big\n\n" + section * (5_000_000 // len(section.encode()))
    # CPU seconds of this process: wall-clock time stretches on a shared
    # machine (two cores, other processes), this does not.
    started = time.process_time()
    index = build_index(text)
    spans = [(i, min(i + 2000, len(text))) for i in range(0, len(text), 1800)]
    assigned = assign(index, spans)
    assert time.process_time() - started < 30  # generous: a slow CI machine
    assert len(index.headings) == 1 + text.count("## Section")
    assert index.headings[-1].section_end == len(text)
    assert assigned[-1].heading_path == ("Big", "Section é")
    assert assigned[-1].parent_position == 0


def test_one_long_line() -> None:
    text = "# " + "x" * 1_000_000 + "\n"
    (heading,) = build_index(text).headings
    assert len(heading.text) == 1_000_000


def test_a_lone_surrogate_is_no_markdown_syntax() -> None:
    # Replaced by U+FFFD for the parser, never by `?`, which would make `<?`
    # open an HTML block (processing instruction) and hide the heading.
    assert [h.text for h in build_index("<\ud800\n# x\n?>\n").headings] == ["x"]
