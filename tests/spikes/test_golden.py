"""The golden-set verifier (`spikes.golden`): the shipped rust-book set, and
every rule rejecting a line with a message that says why.

The shipped set is checked against the bundled rust-book corpus read in place
(`corpora/rust-book`, as the other suites do); the rules are checked on a
three-file corpus written here.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from spikes.corpus import read_corpus
from spikes.golden import (
    KINDS,
    GoldenFormatError,
    GoldenQuery,
    content_words,
    load_golden,
    main,
    parse_golden,
    shared_content_words,
    verify,
)

ROOT = Path(__file__).resolve().parents[2]
RUST_BOOK = ROOT / "corpora" / "rust-book"
SHIPPED = ROOT / "spikes" / "golden" / "rust-book.jsonl"
# Each shipped set and the bundled corpus it was written for (corpora/README.md).
SHIPPED_SETS = {
    "rust-book": (SHIPPED, RUST_BOOK),
    "fastapi-docs": (
        ROOT / "spikes" / "golden" / "fastapi-docs.jsonl",
        ROOT / "corpora" / "fastapi-docs",
    ),
}

# ----------------------------------------------------------------- shipped sets


@pytest.mark.parametrize("name", SHIPPED_SETS)
def test_every_line_of_each_shipped_set_verifies(name: str) -> None:
    golden, corpus = SHIPPED_SETS[name]
    problems = verify(load_golden(golden), read_corpus(corpus))
    assert [str(problem) for problem in problems] == []


@pytest.mark.parametrize("name", SHIPPED_SETS)
def test_each_shipped_set_is_big_enough_and_covers_every_kind(name: str) -> None:
    golden, _ = SHIPPED_SETS[name]
    queries = load_golden(golden)
    assert len(queries) >= 60
    kinds = Counter(query.kind for query in queries)
    assert set(kinds) == set(KINDS)
    assert min(kinds.values()) >= 15, kinds
    # One JSON object per line, exactly the six keys, nothing else in the file.
    lines = golden.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(queries)
    assert all(
        set(json.loads(line)) == {"id", "query", "fact", "file", "heading_path", "kind"}
        for line in lines
    )


def test_the_fastapi_set_asks_for_sections_below_the_top() -> None:
    # Its purpose is naming the answer's section: most answers sit under an H3 or deeper.
    golden, _ = SHIPPED_SETS["fastapi-docs"]
    queries = load_golden(golden)
    deep = sum(1 for query in queries if len(query.heading_path) >= 3)
    assert deep >= len(queries) // 2, deep
    assert len({query.file for query in queries}) >= 10


# ------------------------------------------------------------ the toy corpus

A_MD = """\
# Guide

Intro line that sits under the guide heading only.

## Install

Run the installer with the default options enabled.
The same sentence appears in two files exactly.
Wrapped text continues here and ends on the next line for the test.

### Linux

Use the package manager to fetch the release tarball.
"""

B_MD = """\
# Other

The same sentence appears in two files exactly.
Wrapped text continues here and
ends on the next line for the test.
"""

C_MD = "Preamble text before any heading at all, on its own.\n\n# Late\n\nbody\n"


@pytest.fixture
def corpus(tmp_path: Path):  # -> spikes.corpus.Corpus
    root = tmp_path / "docs"
    (root / "sub").mkdir(parents=True)
    (root / "a.md").write_text(A_MD, encoding="utf-8")
    (root / "sub" / "b.md").write_text(B_MD, encoding="utf-8")
    (root / "c.md").write_text(C_MD, encoding="utf-8")
    return read_corpus(root)


# Valid: the fact is one line of a.md, unique, under Guide > Install > Linux;
# the query shares "fetch" and "releas" (2) with it.
GOOD = GoldenQuery(
    id="ok-1",
    query="Which tool should fetch the release archive?",
    fact="Use the package manager to fetch the release tarball.",
    file="a.md",
    heading_path=("Guide", "Install", "Linux"),
    kind="deep",
    line=1,
)


def messages(corpus, *queries: GoldenQuery) -> list[str]:
    return [problem.message for problem in verify(queries, corpus)]


def test_a_valid_query_has_no_problem(corpus) -> None:
    assert verify([GOOD], corpus) == ()
    root_fact = replace(
        GOOD,
        fact="Preamble text before any heading at all",
        file="c.md",
        heading_path=(),
        kind="paraphrase",
        query="What comes first in the third file?",
    )
    assert verify([root_fact], corpus) == ()


def test_a_fact_found_in_two_files_is_rejected(corpus) -> None:
    query = replace(
        GOOD,
        fact="The same sentence appears in two files exactly.",
        heading_path=("Guide", "Install"),
        kind="paraphrase",
        query="Is anything duplicated?",
    )
    assert messages(corpus, query) == [
        "fact is not unique: it occurs 2 times in the corpus (whitespace collapsed): "
        "a.md (1), sub/b.md (1)"
    ]


def test_a_fact_unique_verbatim_but_repeated_once_whitespace_collapsed_is_rejected(
    corpus,
) -> None:
    # In sub/b.md the sentence is wrapped over two lines: the hit rule collapses
    # whitespace, so a chunk of b.md would hit too.
    query = replace(
        GOOD,
        fact="Wrapped text continues here and ends on the next line",
        heading_path=("Guide", "Install"),
        kind="paraphrase",
        query="Where does the folded sentence stop?",
    )
    assert messages(corpus, query) == [
        "fact is not unique: it occurs 2 times in the corpus (whitespace collapsed): "
        "a.md (1), sub/b.md (1)"
    ]


def test_a_wrong_heading_path_is_rejected_naming_the_true_one(corpus) -> None:
    query = replace(GOOD, heading_path=("Guide", "Install"), kind="paraphrase")
    assert messages(corpus, query) == [
        "wrong heading path: the fact lies under Guide > Install > Linux, not Guide > Install"
    ]
    preamble = replace(
        GOOD,
        fact="Preamble text before any heading at all",
        file="c.md",
        heading_path=("Late",),
        kind="paraphrase",
        query="What comes first in the third file?",
    )
    assert messages(corpus, preamble) == [
        "wrong heading path: the fact lies under (document root), not Late"
    ]


def test_a_query_sharing_too_many_content_words_is_rejected(corpus) -> None:
    # package, manager, fetch, release: 4 content words of the fact (the
    # message names the query's words, not their keys).
    query = replace(GOOD, query="Does the package manager fetch the release?")
    assert messages(corpus, query) == [
        "query shares 4 content words with the fact (at most 2): fetch, manager, package, release"
    ]


def test_a_fact_missing_from_its_file_or_in_an_unknown_file_is_rejected(corpus) -> None:
    elsewhere = replace(GOOD, file="c.md")
    assert messages(corpus, elsewhere) == ["fact is not in c.md (it is in a.md)"]
    unknown = replace(GOOD, file="nope.md")
    assert messages(corpus, unknown) == ["file 'nope.md' is not a document of the corpus"]
    absent = replace(GOOD, fact="This sentence is in no document of the corpus.")
    assert messages(corpus, absent) == ["fact is not in a.md, nor anywhere in the corpus"]


def test_fact_shape_rules(corpus) -> None:
    short = replace(GOOD, fact="the release tarball.")
    assert messages(corpus, short) == ["fact has 20 characters, not 25-120"]
    two_lines = replace(GOOD, fact="Use the package manager\nto fetch the release tarball.")
    assert messages(corpus, two_lines) == ["fact spans more than one line"]
    padded = replace(GOOD, fact="Use the package manager to fetch the release tarball. ")
    assert messages(corpus, padded) == ["fact has leading, trailing or repeated whitespace"]
    assert messages(corpus, replace(GOOD, fact="")) == ["fact has 0 characters, not 25-120"]
    heading = replace(GOOD, fact="## Install", heading_path=("Guide", "Install"), kind="paraphrase")
    assert "fact lies on the heading line of Guide > Install" in messages(corpus, heading)


def test_kind_id_and_query_rules(corpus) -> None:
    assert messages(corpus, replace(GOOD, kind="tricky")) == [
        "kind 'tricky' is not one of section-scoped, paraphrase, deep, near-duplicate"
    ]
    shallow = replace(
        GOOD,
        fact="Run the installer with the default options enabled.",
        heading_path=("Guide", "Install"),
        query="How should setup be launched?",
    )
    assert messages(corpus, shallow) == [
        "kind 'deep' needs a heading_path of at least 3 headings, got 2: Guide > Install"
    ]
    twin = replace(GOOD, line=2)
    problems = verify([GOOD, twin], corpus)
    assert [(p.line, p.message) for p in problems] == [
        (1, "id 'ok-1' is used by 2 queries"),
        (2, "id 'ok-1' is used by 2 queries"),
    ]
    assert str(problems[1]) == "line 2 (ok-1): id 'ok-1' is used by 2 queries"
    assert messages(corpus, replace(GOOD, id=" ", query="")) == ["id is empty", "query is empty"]


# ------------------------------------------------------------ content words


def test_content_words_normalise_case_apostrophes_stop_words_and_suffixes() -> None:
    # "the", "is", "a", "for" are stop words; "it’s" -> "its" (a stop word);
    # "doesn’t" -> "doesnt" (a stop word); Rc<T> -> "rc", "t": too short.
    assert content_words("The Rc<T> type doesn’t borrow; it’s a pointer for Traits") == {
        "typ",
        "borrow",
        "pointer",
        "trait",
    }
    # Inflections share one key: borrow/borrowed/borrowing; string/strings.
    assert content_words("borrowed borrowing Borrows") == {"borrow"}
    assert content_words("string strings STRING") == {"str"}
    assert content_words("process processes") == {"process"}
    assert shared_content_words("Why are references borrowed?", "a reference to borrow") == {
        "referenc",
        "borrow",
    }


# ------------------------------------------------------------ file format


def test_parse_reads_lines_and_skips_blank_ones() -> None:
    line = json.dumps(
        {
            "id": "x",
            "query": "q",
            "fact": "f",
            "file": "a.md",
            "heading_path": ["A", "B"],
            "kind": "deep",
            "note": "extra keys are ignored",
        }
    )
    (query,) = parse_golden(f"\n{line}\n\n")
    assert query == GoldenQuery("x", "q", "f", "a.md", ("A", "B"), "deep")
    assert query.line == 2


def test_parse_rejects_malformed_lines_naming_each() -> None:
    text = "\n".join(
        [
            "not json",
            "[1, 2]",
            json.dumps({"id": "x", "query": "q"}),
            json.dumps(
                {
                    "id": 1,
                    "query": "q",
                    "fact": "f",
                    "file": "a.md",
                    "heading_path": "A > B",
                    "kind": "deep",
                }
            ),
        ]
    )
    with pytest.raises(GoldenFormatError) as caught:
        parse_golden(text)
    assert str(caught.value).splitlines() == [
        "line 1: not JSON: Expecting value",
        "line 2: not a JSON object",
        "line 3: missing fact, file, heading_path, kind",
        "line 4: id, heading_path must be strings (heading_path: a list of strings)",
    ]


# ------------------------------------------------------------ the command


def test_command_exit_status_and_output(
    corpus, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = corpus.root
    good = tmp_path / "good.jsonl"
    record = {
        "id": GOOD.id,
        "query": GOOD.query,
        "fact": GOOD.fact,
        "file": GOOD.file,
        "heading_path": list(GOOD.heading_path),
        "kind": GOOD.kind,
    }
    good.write_text(json.dumps(record) + "\n", encoding="utf-8")
    assert main(["--corpus", root, "--golden", str(good)]) == 0
    assert capsys.readouterr().out == (
        "1 queries verified (section-scoped 0, paraphrase 0, deep 1, near-duplicate 0)\n"
    )

    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({**record, "heading_path": ["Guide"]}) + "\n", encoding="utf-8")
    assert main(["--corpus", root, "--golden", str(bad)]) == 1
    assert capsys.readouterr().err.splitlines() == [
        "line 1 (ok-1): kind 'deep' needs a heading_path of at least 3 headings, got 1: Guide",
        "line 1 (ok-1): wrong heading path: the fact lies under Guide > Install > Linux, not Guide",
        "2 problem(s) in 1 queries",
    ]

    malformed = tmp_path / "malformed.jsonl"
    malformed.write_text("{}\n", encoding="utf-8")
    assert main(["--corpus", root, "--golden", str(malformed)]) == 1
    assert capsys.readouterr().err == "line 1: missing id, query, fact, file, heading_path, kind\n"


def test_by_default_the_shipped_set_is_checked_against_the_bundled_book(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main([]) == 0
    assert "section-scoped 18" in capsys.readouterr().out
