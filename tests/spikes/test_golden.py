"""The golden-set verifier (`spikes.golden`): the shipped sets, and every rule
rejecting a line with a message that says why.

Each shipped set is checked against the bundled corpus it was written for,
read in place (`corpora/`, as the other suites do), under its language's
rules; the rules are checked on small corpora written here (English, and
Chinese, Japanese and Korean for a CJK set's rules).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from mdchunks.heading_index import HeadingIndex, build_index

import spikes.golden
from spikes.corpus import read_corpus
from spikes.golden import (
    KINDS,
    GoldenFormatError,
    GoldenQuery,
    cjk_bigrams,
    content_words,
    fact_length,
    index_document,
    load_golden,
    main,
    parse_golden,
    set_language,
    shared_content_words,
    shared_units,
    verify,
)
from spikes.mdx_reference import STARLIGHT_REFERENCE, load_reference

ROOT = Path(__file__).resolve().parents[2]
RUST_BOOK = ROOT / "corpora" / "rust-book"
SHIPPED = ROOT / "spikes" / "golden" / "rust-book.jsonl"
STARLIGHT = ROOT / "corpora" / "starlight-docs"
GOLDEN = ROOT / "spikes" / "golden"
# Each shipped set and the bundled corpus it was written for (corpora/README.md).
SHIPPED_SETS = {
    "rust-book": (SHIPPED, RUST_BOOK),
    "fastapi-docs": (GOLDEN / "fastapi-docs.jsonl", ROOT / "corpora" / "fastapi-docs"),
    "starlight-docs": (GOLDEN / "starlight-docs.jsonl", STARLIGHT),
    "starlight-docs-zh-cn": (GOLDEN / "starlight-docs-zh-cn.jsonl", STARLIGHT),
    "starlight-docs-ja": (GOLDEN / "starlight-docs-ja.jsonl", STARLIGHT),
    "starlight-docs-ko": (GOLDEN / "starlight-docs-ko.jsonl", STARLIGHT),
}
# Each set's least size and least count per kind: the book and FastAPI sets
# were written as 60+ questions, 15+ per kind; the Starlight sets as 45+
# English questions (issue 37) and 22+ per translated language (issue 38).
SET_SIZES = {
    "rust-book": (60, 15),
    "fastapi-docs": (60, 15),
    "starlight-docs": (45, 10),
    "starlight-docs-zh-cn": (22, 4),
    "starlight-docs-ja": (22, 4),
    "starlight-docs-ko": (22, 4),
}
# The translated sets ask the pages of their language's folder, in that language.
TRANSLATED = {"starlight-docs-zh-cn": "zh-cn", "starlight-docs-ja": "ja", "starlight-docs-ko": "ko"}

# ----------------------------------------------------------------- shipped sets


@pytest.mark.parametrize("name", SHIPPED_SETS)
def test_every_line_of_each_shipped_set_verifies(name: str) -> None:
    golden, corpus = SHIPPED_SETS[name]
    problems = verify(load_golden(golden), read_corpus(corpus), set_language(golden))
    assert [str(problem) for problem in problems] == []


@pytest.mark.parametrize("name", SHIPPED_SETS)
def test_each_shipped_set_is_big_enough_and_covers_every_kind(name: str) -> None:
    golden, _ = SHIPPED_SETS[name]
    queries = load_golden(golden)
    least_size, least_per_kind = SET_SIZES[name]
    assert len(queries) >= least_size
    kinds = Counter(query.kind for query in queries)
    assert set(kinds) == set(KINDS)
    assert min(kinds.values()) >= least_per_kind, kinds
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


def test_the_starlight_sets_ask_each_language_its_own_pages() -> None:
    # English questions over the English pages (top level, no language
    # folder), each translated set over its folder, in its language's rules.
    folders = {"zh-cn", "ja", "ko", "da", "de", "es", "fa", "fr", "hi", "id", "it"}
    folders |= {"pt-br", "pt-pt", "ru", "tr", "uk"}
    english = load_golden(SHIPPED_SETS["starlight-docs"][0])
    assert not {query.file.split("/")[0] for query in english} & folders
    assert set_language(SHIPPED_SETS["starlight-docs"][0]) == "en"
    for name, folder in TRANSLATED.items():
        golden, _ = SHIPPED_SETS[name]
        assert {query.file.split("/")[0] for query in load_golden(golden)} == {folder}
        assert set_language(golden) == {"zh-cn": "zh"}.get(folder, folder)
    # Most answers sit on MDX pages whose title is only in front matter.
    mdx = sum(1 for query in english if query.file.endswith(".mdx"))
    assert mdx >= len(english) * 3 // 4, mdx


@pytest.mark.parametrize("name", [name for name in SHIPPED_SETS if name.startswith("starlight")])
def test_the_starlight_heading_paths_are_remark_mdxs(name: str) -> None:
    # Each answer's path read from the committed remark-mdx reference
    # (spikes/mdx_reference), not from our index: the last heading whose
    # first line is at or before the fact's line, with its ancestors.
    reference = load_reference(STARLIGHT_REFERENCE)
    golden, corpus = SHIPPED_SETS[name]
    for query in load_golden(golden):
        text = (corpus / query.file).read_text(encoding="utf-8")
        line = text[: text.index(query.fact)].count("\n") + 1
        path: list[tuple[int, str]] = []
        for heading in reference[query.file]:
            if heading.line > line:
                break
            while path and path[-1][0] >= heading.level:
                path.pop()
            path.append((heading.level, heading.text))
        assert tuple(text for _, text in path) == query.heading_path, query.id


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


# ------------------------------------------------------------ a CJK set's rules

ZH_MD = """\
## 启用 sitemap

Starlight 内置了生成站点地图（sitemap）的支持。
"""
JA_MD = "## サイトマップ\n\nStarlightにはサイトマップ生成機能が組み込まれています。\n"


@pytest.fixture
def cjk_corpus(tmp_path: Path):  # -> spikes.corpus.Corpus
    root = tmp_path / "docs"
    for rel, text in {"zh-cn/a.md": ZH_MD, "ja/a.md": JA_MD}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return read_corpus(root)


ZH_FACT = GoldenQuery(
    id="zh-1",
    query="网站地图",  # "site map": shares 地图 only with the page's 站点地图
    fact="Starlight 内置了生成站点地图（sitemap）的支持。",
    file="zh-cn/a.md",
    heading_path=("启用 sitemap",),
    kind="paraphrase",
    line=1,
)


def test_set_language_comes_from_the_file_name() -> None:
    assert set_language(Path("spikes/golden/starlight-docs-zh-cn.jsonl")) == "zh"
    assert set_language(Path("starlight-docs-ja.jsonl")) == "ja"
    assert set_language(Path("starlight-docs-ko.jsonl")) == "ko"
    assert set_language(Path("rust-book.jsonl")) == "en"
    assert set_language(Path("fastapi-docs.jsonl")) == "en"


def test_cjk_bigrams_pair_each_run_and_drop_function_bigrams() -> None:
    # 如何 ("how") is a function bigram; runs break at spaces and ASCII.
    assert cjk_bigrams("如何添加 站点地图", "zh") == {"何添", "添加", "站点", "点地", "地图"}
    # Japanese: two hiragana (を, する) are particles and endings.
    assert cjk_bigrams("サイトマップを追加する", "ja") == {
        "サイ", "イト", "トマ", "マッ", "ップ", "プを", "を追", "追加", "加す",
    }  # fmt: skip
    # Korean: -하려면 ("in order to") is an ending; 사이트맵을 keeps its particle.
    assert cjk_bigrams("사이트맵을 추가하려면", "ko") == {
        "사이", "이트", "트맵", "맵을", "추가", "가하",
    }  # fmt: skip
    # NFKC: halfwidth katakana is read as fullwidth.
    assert cjk_bigrams("\uff7b\uff72\uff84", "ja") == {"サイ", "イト"}


def test_a_cjk_query_copying_the_facts_term_is_rejected(cjk_corpus) -> None:
    assert verify([ZH_FACT], cjk_corpus, "zh") == ()
    copied = replace(ZH_FACT, query="站点地图")
    assert messages_in(cjk_corpus, "zh", copied) == [
        "query shares 3 content words and bigrams with the fact (at most 2): 地图, 点地, 站点"
    ]
    # English words in a CJK query count too: "sitemap" and "starlight" + 站点 + 点地.
    mixed = replace(ZH_FACT, query="Starlight sitemap 站点地")
    assert shared_units(mixed.query, mixed.fact, "zh") == ("sitemap", "starlight", "点地", "站点")
    # The English rule sees no word in it: that is why a set needs its language.
    assert verify([copied], cjk_corpus) == ()


def test_a_cjk_facts_length_counts_wide_characters_twice(cjk_corpus) -> None:
    # 21 code points (too short in English), 35 columns in Chinese.
    fact = "内置了生成站点地图（sitemap）的支持"
    assert (len(fact), fact_length(fact), fact_length(fact, "zh")) == (21, 21, 35)
    short = replace(ZH_FACT, fact=fact)
    assert verify([short], cjk_corpus, "zh") == ()
    assert messages_in(cjk_corpus, "en", short) == ["fact has 21 characters, not 25-120"]
    tiny = replace(ZH_FACT, fact="生成站点地图的支持")
    assert "fact has 18 columns (wide characters count 2), not 25-120" in messages_in(
        cjk_corpus, "zh", tiny
    )


def test_an_unknown_language_is_refused(cjk_corpus) -> None:
    with pytest.raises(ValueError, match="language 'fr' is not one of en, zh, ja, ko"):
        verify([ZH_FACT], cjk_corpus, "fr")


def test_the_command_takes_the_sets_language_from_its_name_or_the_option(
    cjk_corpus, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = {
        "id": "ja-1",
        "query": "サイトマップ",  # copies the fact's term: five shared bigrams
        "fact": "Starlightにはサイトマップ生成機能が組み込まれています。",
        "file": "ja/a.md",
        "heading_path": ["サイトマップ"],
        "kind": "paraphrase",
    }
    for name in ("toy-ja.jsonl", "toy.jsonl"):
        (tmp_path / name).write_text(json.dumps(record) + "\n", encoding="utf-8")
    root = str(cjk_corpus.root)
    assert main(["--corpus", root, "--golden", str(tmp_path / "toy-ja.jsonl")]) == 1
    assert "shares 5 content words and bigrams" in capsys.readouterr().err
    assert main(["--corpus", root, "--golden", str(tmp_path / "toy.jsonl")]) == 0
    capsys.readouterr()
    assert (
        main(["--corpus", root, "--golden", str(tmp_path / "toy.jsonl"), "--language", "ja"]) == 1
    )


def messages_in(corpus, language: str, *queries: GoldenQuery) -> list[str]:
    return [problem.message for problem in verify(queries, corpus, language)]


# ------------------------------------------------------------ the MDX dialect

MDX_PAGE = "---\ntitle: T\n---\n\n## Usage\n\nBody text.\n"


def test_mdx_documents_are_indexed_in_the_mdx_dialect_when_build_index_has_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[tuple[str, str]] = []

    def with_dialect(text: str, dialect: str = "commonmark") -> HeadingIndex:
        calls.append((text, dialect))
        return build_index(text)

    monkeypatch.setattr(spikes.golden, "build_index", with_dialect)
    index = index_document("guides/page.mdx", MDX_PAGE)
    assert [heading.path for heading in index.headings] == [("Usage",)]
    index_document("guides/page.MDX", MDX_PAGE)
    index_document("guides/page.md", MDX_PAGE)
    assert [dialect for _, dialect in calls] == ["mdx", "mdx", "commonmark"]


# A fence opened inside a JSX component: CommonMark's HTML block swallows the
# opening fence, so the shell comment after the blank line becomes an H1;
# MDX pairs the fence inside the component (issue 37).
JSX_FENCE_PAGE = """\
---
title: Deploy
---

## Setup

<Accordion title="Build">
  ```yaml

  # Build workflow
  run: make
  ```
</Accordion>

The pipeline runs the build whenever the main branch changes.
"""


def test_verify_reads_an_mdx_page_as_mdx_and_a_markdown_page_as_commonmark(
    tmp_path: Path,
) -> None:
    corpora = {}
    for name in ("deploy.mdx", "deploy.md"):
        root = tmp_path / name.replace(".", "-")
        root.mkdir()
        (root / name).write_text(JSX_FENCE_PAGE, encoding="utf-8")
        corpora[name] = read_corpus(root)
    query = GoldenQuery(
        id="mdx-1",
        query="When does CI start?",
        fact="The pipeline runs the build whenever the main branch changes.",
        file="deploy.mdx",
        heading_path=("Setup",),
        kind="paraphrase",
        line=1,
    )
    assert verify([query], corpora["deploy.mdx"]) == ()
    as_markdown = replace(query, file="deploy.md")
    assert messages(corpora["deploy.md"], as_markdown) == [
        "wrong heading path: the fact lies under Build workflow, not Setup"
    ]


def test_mdx_documents_are_indexed_as_commonmark_while_build_index_has_no_dialect(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[str] = []

    def without_dialect(text: str) -> HeadingIndex:
        calls.append(text)
        return build_index(text)

    monkeypatch.setattr(spikes.golden, "build_index", without_dialect)
    assert [h.path for h in index_document("page.mdx", MDX_PAGE).headings] == [("Usage",)]
    assert calls == [MDX_PAGE]


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
