"""Golden sets for retrieval evaluation (issue #8): load one, prove every line.

A golden set is a JSON Lines file, one query per line:

    {"id": "...", "query": "...", "fact": "...", "file": "...",
     "heading_path": ["H1", "H2", ...], "kind": "paraphrase"}

`file` is the document's POSIX path relative to the corpus root (as
`spikes.corpus.read_corpus` names it); `heading_path` is the plain heading
texts that `heading_index.build_index` gives (for an `.mdx` document, its MDX
dialect, `dialect="mdx"`, where the installed index has it: see
`index_document`). Blank lines are skipped; keys other than the six are
ignored, so a set may carry notes.

`verify(queries, corpus, language="en")` returns every problem it finds (an empty tuple
proves the set); each line must satisfy all of:

1. `id` non-empty and unique in the set; `query` non-empty; `kind` one of
   `KINDS`.
2. `fact` is one line (no line break), 25-120 code points (in a CJK set,
   25-120 columns: a wide or fullwidth code point counts 2, see
   `fact_length`), without leading, trailing or repeated whitespace (so the
   verbatim fact and the whitespace-collapsed fact of the hit rule are the
   same string).
3. `file` is a document of the corpus and `fact` occurs in its text exactly
   once, verbatim.
4. `fact` occurs exactly once in the whole corpus under the hit rule of
   `spikes.recall` (every document's text whitespace-collapsed, since the
   rule collapses whitespace and text is wrapped): no other chunk anywhere
   can hit the query.
5. The fact is not on a heading line (the structure-first chunker does not
   store heading lines in chunk text), and its governing heading (the last
   heading starting at or before the fact's offset, from `build_index` on
   the decoded document) has `path == heading_path`; no governing heading
   means `heading_path` must be empty.
6. `query` and `fact` share at most `MAX_SHARED_WORDS` content words (in a
   CJK set, content words and CJK character bigrams together: see below).
7. kind `deep`: `heading_path` has at least 3 headings (the fact sits under
   an H3 or deeper; in a book whose chapter files start at H2 that is H4).

**Content words** (rule 6): the text is NFKC-normalised and lowercased;
apostrophes (' ’ ‘ ʼ) are deleted, so "doesn’t" is one token; tokens are
the maximal runs of ASCII letters `a-z` (digits, punctuation and code
symbols split tokens: `Rc<T>` gives "rc" and "t"); tokens shorter than 3
letters and the words of `STOP_WORDS` (English function words,
contractions and a few light verbs: use, make, get) are dropped; each
remaining token is reduced to a key by stripping suffixes (`KEY_SUFFIXES`,
the first that applies, again and again) while at least 3 letters remain;
"s" is not stripped after "s". So "borrowing", "borrowed", "borrows" ->
"borrow"; "reference", "references", "referenced" -> "referenc"; "string",
"strings" -> "str"; "process", "processes" -> "process"; "release",
"released" -> "relea". It is not a real stemmer: it only makes inflections
of one word count as one shared word, and a rough merge only makes the
limit stricter. Messages name the query's words, not their keys.

**A set's language** (`LANGUAGES`; `set_language` reads it from the set's
file name, `...-zh-cn.jsonl`, `...-ja.jsonl`, `...-ko.jsonl`, else English;
`--language` overrides) changes rules 2 and 6 only, and English not at all.
Chinese, Japanese and Korean write words without spaces (Korean writes a
particle into its word), so the English tokens say nothing there. In a CJK
set a query's shared units are its content words as above (a query may name
`sidebar` or `Starlight`) plus the **character bigrams** it shares with the
fact: every two adjacent CJK code points (Han, kana, Hangul; after NFKC)
within one run of them, as Lucene's CJK analyzer pairs them, less the
language's `STOP_BIGRAMS` (function words and endings such as 如何, 可以,
使用, the 니다 of 합니다) and, in Japanese, bigrams of two hiragana (particles and
endings: する, には). So "站点地图" shares three bigrams with any fact that
holds 站点地图 and is refused: a query must not copy the fact's term. A CJK
code point carries about a word, so the fact's length counts columns, not
code points: a wide or fullwidth code point (East Asian Width W or F) counts
2, others 1, within the same 25-120 (a Chinese fact of 13-60 characters).

The kinds `section-scoped`, `paraphrase` and `near-duplicate` are the
author's claim about why a query is hard; only the rules above are checked.

`python -m spikes.golden [--corpus PATH] [--golden FILE] [--language L]`
(default: the shipped rust-book set over the bundled `corpora/rust-book`)
prints the problems (exit status 1) or a one-line summary per kind (exit
status 0).
"""

from __future__ import annotations

import argparse
import inspect
import json
import re
import sys
import unicodedata
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from mdchunks.heading_index import HeadingIndex, build_index

from spikes.corpus import Corpus, Document, read_corpus
from spikes.recall import collapse_whitespace

KINDS: tuple[str, ...] = ("section-scoped", "paraphrase", "deep", "near-duplicate")
FACT_MIN_CHARS = 25
FACT_MAX_CHARS = 120
MAX_SHARED_WORDS = 2
DEEP_MIN_PATH = 3
FIELDS: tuple[str, ...] = ("id", "query", "fact", "file", "heading_path", "kind")
ENGLISH = "en"
CJK_LANGUAGES: tuple[str, ...] = ("zh", "ja", "ko")
LANGUAGES: tuple[str, ...] = (ENGLISH, *CJK_LANGUAGES)
# A set's file name ends in its language's tag (starlight-docs-zh-cn.jsonl).
_SET_SUFFIXES: dict[str, str] = {"-zh-cn": "zh", "-zh": "zh", "-ja": "ja", "-ko": "ko"}

_STOP_WORDS_TEXT = """
    a about above after again against all also am an and any are aren arent as at
    be because been before being below between both but by can cannot cant could
    couldnt did didnt do does doesnt doing dont down during each few for from further
    had hadnt has hasnt have havent having he her here hers herself him himself his
    how however i if in into is isnt it its itself just lets like may me might more
    most must mustnt my myself no nor not now of off on once only or other ought our
    ours ourselves out over own same shall shant she should shouldnt so some such
    than that thats the their theirs them themselves then there theres these they
    theyll theyre theyve this those through thus to too under until up upon us very
    was wasnt we well were weve werent what whats when where which while who whom
    whose why will with within without wont would wouldnt yet you youd youll your
    youre yours yourself yourselves youve ill ive id hes shes
    get gets got one two use used uses using way ways make makes made
"""
STOP_WORDS: frozenset[str] = frozenset(_STOP_WORDS_TEXT.split())
KEY_SUFFIXES: tuple[str, ...] = ("ing", "ed", "es", "s", "e")
_APOSTROPHES = re.compile("['\u2019\u2018\u02bc]")
_TOKEN = re.compile("[a-z]+")
# Runs of CJK code points after NFKC: CJK ideographs (and extension A,
# compatibility ideographs), hiragana, katakana (with the prolonged sound
# mark, without the middle dot, which separates words), Hangul syllables and jamo.
_CJK_RUN = re.compile(
    "[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3041-\u309f"
    "\u30a0-\u30fa\u30fc-\u30ff\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]+"
)
_HIRAGANA = re.compile("[\u3041-\u309f]{2}")
# Bigrams of function words and endings, the CJK counterpart of STOP_WORDS:
# question words, "can", "this", "use", "way", copulas and verb endings.
_STOP_BIGRAMS_TEXT: dict[str, str] = {
    "zh": """
        如何 怎么 怎样 什么 为什 哪些 哪个 是否 可以 能够 一个 这个 那个 这些 那些
        我们 你的 我的 使用 通过 如果 的话 时候
    """,
    "ja": "使用 方法 場合 何で 何が 何を",
    "ko": """
        니다 습니 합니 됩니 있습 없습 하는 하여 하면 해야 하고 하기 하려 려면 하나 나요
        까요 어떻 떻게 무엇 엇인 인가 가요 있나 는지 에서 으로 에게 있는 없는 도록
        사용 방법 위해 해서 한다 된다 되는
    """,
}
STOP_BIGRAMS: dict[str, frozenset[str]] = {
    language: frozenset(text.split()) for language, text in _STOP_BIGRAMS_TEXT.items()
}
_WIDE = frozenset({"W", "F"})


def _word_key(token: str) -> str:
    while True:
        for suffix in KEY_SUFFIXES:
            stripped = token[: -len(suffix)]
            if (
                token.endswith(suffix)
                and len(stripped) >= 3
                and not (suffix == "s" and stripped.endswith("s"))
            ):
                token = stripped
                break
        else:
            return token


def content_word_forms(text: str) -> dict[str, str]:
    """Each content-word key of `text` -> the first (normalised) token that gave it."""
    normalised = _APOSTROPHES.sub("", unicodedata.normalize("NFKC", text).lower())
    forms: dict[str, str] = {}
    for token in _TOKEN.findall(normalised):
        if len(token) >= 3 and token not in STOP_WORDS:
            forms.setdefault(_word_key(token), token)
    return forms


def content_words(text: str) -> frozenset[str]:
    """The content-word keys of `text` (see the module docstring)."""
    return frozenset(content_word_forms(text))


def shared_content_words(query: str, fact: str) -> frozenset[str]:
    return content_words(query) & content_words(fact)


def cjk_bigrams(text: str, language: str) -> frozenset[str]:
    """The character bigrams of `text`'s CJK runs, less the language's function bigrams."""
    stop = STOP_BIGRAMS.get(language, frozenset())
    bigrams: set[str] = set()
    for run in _CJK_RUN.findall(unicodedata.normalize("NFKC", text)):
        bigrams.update(run[i : i + 2] for i in range(len(run) - 1))
    return frozenset(
        bigram
        for bigram in bigrams
        if bigram not in stop and not (language == "ja" and _HIRAGANA.fullmatch(bigram))
    )


def shared_units(query: str, fact: str, language: str = ENGLISH) -> tuple[str, ...]:
    """What `query` shares with `fact` under rule 6, sorted: the query's forms of the
    shared content words, and in a CJK set the shared character bigrams too."""
    forms = content_word_forms(query)
    words = sorted(forms[key] for key in shared_content_words(query, fact))
    if language not in CJK_LANGUAGES:
        return tuple(words)
    return (*words, *sorted(cjk_bigrams(query, language) & cjk_bigrams(fact, language)))


def fact_length(fact: str, language: str = ENGLISH) -> int:
    """Rule 2's measure: code points; in a CJK set, columns (wide code points count 2)."""
    if language not in CJK_LANGUAGES:
        return len(fact)
    return sum(2 if unicodedata.east_asian_width(char) in _WIDE else 1 for char in fact)


def set_language(golden: Path) -> str:
    """A set's language from its file name's last tag (`-zh-cn`, `-ja`, `-ko`), else English."""
    stem = golden.name.removesuffix(".jsonl").lower()
    return next(
        (language for suffix, language in _SET_SUFFIXES.items() if stem.endswith(suffix)),
        ENGLISH,
    )


def _takes_dialect(build: Callable[..., HeadingIndex]) -> bool:
    try:
        return "dialect" in inspect.signature(build).parameters
    except (TypeError, ValueError):  # no signature to read: assume the old one
        return False


def index_document(rel_path: str, text: str) -> HeadingIndex:
    """The heading index of one document as the flow would build it: an `.mdx`
    document in the MDX dialect when the installed `build_index` has one (a
    keyword check, so the verifier runs before and after the dialect lands)."""
    build: Callable[..., HeadingIndex] = build_index
    if PurePosixPath(rel_path).suffix.lower() == ".mdx" and _takes_dialect(build):
        return build(text, dialect="mdx")
    return build(text)


@dataclass(frozen=True, slots=True)
class GoldenQuery:
    id: str
    query: str
    fact: str
    file: str  # POSIX path relative to the corpus root
    heading_path: tuple[str, ...]
    kind: str
    line: int = field(default=0, compare=False)  # 1-based line of the file; 0: built in code


@dataclass(frozen=True, slots=True)
class Problem:
    line: int
    id: str
    message: str

    def __str__(self) -> str:
        where = f"line {self.line}" if self.line else "query"
        return f"{where} ({self.id or 'no id'}): {self.message}"


class GoldenFormatError(ValueError):
    """A line of a golden file is not a JSON object of the expected shape."""


def parse_golden(text: str) -> tuple[GoldenQuery, ...]:
    """Queries of a JSON Lines golden set; GoldenFormatError names every bad line."""
    queries: list[GoldenQuery] = []
    errors: list[str] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            queries.append(_parse_line(raw, number))
        except GoldenFormatError as exc:
            errors.append(str(exc))
    if errors:
        raise GoldenFormatError("\n".join(errors))
    return tuple(queries)


def load_golden(path: Path) -> tuple[GoldenQuery, ...]:
    return parse_golden(path.read_text(encoding="utf-8"))


def _parse_line(raw: str, number: int) -> GoldenQuery:
    try:
        record = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise GoldenFormatError(f"line {number}: not JSON: {exc.msg}") from None
    if not isinstance(record, dict):
        raise GoldenFormatError(f"line {number}: not a JSON object")
    missing = [name for name in FIELDS if name not in record]
    if missing:
        raise GoldenFormatError(f"line {number}: missing {', '.join(missing)}")
    wrong = [
        name for name in FIELDS if name != "heading_path" and not isinstance(record[name], str)
    ]
    path = record["heading_path"]
    if not isinstance(path, list) or not all(isinstance(part, str) for part in path):
        wrong.append("heading_path")
    if wrong:
        expected = "strings (heading_path: a list of strings)"
        raise GoldenFormatError(f"line {number}: {', '.join(wrong)} must be {expected}")
    return GoldenQuery(
        id=record["id"],
        query=record["query"],
        fact=record["fact"],
        file=record["file"],
        heading_path=tuple(path),
        kind=record["kind"],
        line=number,
    )


def _occurrences(haystack: str, needle: str) -> int:
    count, at = 0, haystack.find(needle)
    while at >= 0:
        count += 1
        at = haystack.find(needle, at + 1)
    return count


def _show(path: Sequence[str]) -> str:
    return " > ".join(path) if path else "(document root)"


@dataclass(frozen=True, slots=True)
class _Indexed:
    document: Document
    collapsed: str
    index: HeadingIndex
    starts: tuple[int, ...]


class _CorpusView:
    def __init__(self, corpus: Corpus, language: str) -> None:
        self.language = language
        self.documents = {document.rel_path: document for document in corpus.documents}
        self.collapsed = {rel: collapse_whitespace(d.text) for rel, d in self.documents.items()}
        self._indexed: dict[str, _Indexed] = {}

    def indexed(self, rel_path: str) -> _Indexed:
        if rel_path not in self._indexed:
            document = self.documents[rel_path]
            index = index_document(rel_path, document.text)
            starts = tuple(heading.start for heading in index.headings)
            self._indexed[rel_path] = _Indexed(document, self.collapsed[rel_path], index, starts)
        return self._indexed[rel_path]


def verify(
    queries: Iterable[GoldenQuery], corpus: Corpus, language: str = ENGLISH
) -> tuple[Problem, ...]:
    """Every rule of the module docstring that some query breaks (empty: all hold),
    under the rules of the set's `language` (one of `LANGUAGES`)."""
    if language not in LANGUAGES:
        raise ValueError(f"language {language!r} is not one of {', '.join(LANGUAGES)}")
    view = _CorpusView(corpus, language)
    queries = tuple(queries)
    ids = Counter(query.id for query in queries)
    problems: list[Problem] = []
    for query in queries:
        messages = _check(query, view)
        if ids[query.id] > 1:
            messages.insert(0, f"id {query.id!r} is used by {ids[query.id]} queries")
        problems.extend(Problem(query.line, query.id, message) for message in messages)
    return tuple(problems)


def _check(query: GoldenQuery, view: _CorpusView) -> list[str]:
    messages: list[str] = []
    if not query.id.strip():
        messages.append("id is empty")
    if not query.query.strip():
        messages.append("query is empty")
    if query.kind not in KINDS:
        messages.append(f"kind {query.kind!r} is not one of {', '.join(KINDS)}")
    if query.kind == "deep" and len(query.heading_path) < DEEP_MIN_PATH:
        messages.append(
            f"kind 'deep' needs a heading_path of at least {DEEP_MIN_PATH} headings, "
            f"got {len(query.heading_path)}: {_show(query.heading_path)}"
        )
    shared = shared_units(query.query, query.fact, view.language)
    if len(shared) > MAX_SHARED_WORDS:
        what = "content words" if view.language == ENGLISH else "content words and bigrams"
        messages.append(
            f"query shares {len(shared)} {what} with the fact "
            f"(at most {MAX_SHARED_WORDS}): {', '.join(shared)}"
        )
    fact = query.fact
    if "\n" in fact or "\r" in fact:
        return [*messages, "fact spans more than one line"]
    length = fact_length(fact, view.language)
    if not FACT_MIN_CHARS <= length <= FACT_MAX_CHARS:
        unit = "characters" if view.language == ENGLISH else "columns (wide characters count 2)"
        messages.append(f"fact has {length} {unit}, not {FACT_MIN_CHARS}-{FACT_MAX_CHARS}")
    if not fact:
        return messages
    if collapse_whitespace(fact) != fact:
        return [*messages, "fact has leading, trailing or repeated whitespace"]
    if query.file not in view.documents:
        return [*messages, f"file {query.file!r} is not a document of the corpus"]

    counts = {
        rel: count for rel, text in view.collapsed.items() if (count := _occurrences(text, fact))
    }
    indexed = view.indexed(query.file)
    if query.file not in counts or _occurrences(indexed.document.text, fact) == 0:
        elsewhere = ", ".join(sorted(rel for rel in counts if rel != query.file))
        found = f" (it is in {elsewhere})" if elsewhere else ", nor anywhere in the corpus"
        return [*messages, f"fact is not in {query.file}{found}"]
    total = sum(counts.values())
    if total > 1:
        where = ", ".join(f"{rel} ({count})" for rel, count in sorted(counts.items()))
        messages.append(
            f"fact is not unique: it occurs {total} times in the corpus "
            f"(whitespace collapsed): {where}"
        )
    if _occurrences(indexed.document.text, fact) > 1:
        return messages  # no single offset to look the heading path up at
    offset = indexed.document.text.find(fact)
    position = bisect_right(indexed.starts, offset) - 1
    governing = indexed.index.headings[position] if position >= 0 else None
    if governing is not None and offset < governing.end:
        messages.append(f"fact lies on the heading line of {_show(governing.path)}")
    actual = governing.path if governing is not None else ()
    if actual != query.heading_path:
        messages.append(
            f"wrong heading path: the fact lies under {_show(actual)}, "
            f"not {_show(query.heading_path)}"
        )
    return messages


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m spikes.golden", description="Verify a golden set against a corpus."
    )
    repo = Path(__file__).resolve().parents[1]
    # Defaults: the shipped set and the bundled corpus it was written for.
    parser.add_argument("--corpus", type=Path, default=repo / "corpora" / "rust-book")
    parser.add_argument(
        "--golden", type=Path, default=repo / "spikes" / "golden" / "rust-book.jsonl"
    )
    parser.add_argument(
        "--language",
        choices=LANGUAGES,
        default=None,
        help="the set's language (rules 2 and 6) [default: from the file name, else en]",
    )
    args = parser.parse_args(argv)
    try:
        queries = load_golden(args.golden)
    except GoldenFormatError as exc:
        print(exc, file=sys.stderr)
        return 1
    language = args.language or set_language(args.golden)
    problems = verify(queries, read_corpus(args.corpus), language)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"{len(problems)} problem(s) in {len(queries)} queries", file=sys.stderr)
        return 1
    kinds = Counter(query.kind for query in queries)
    summary = ", ".join(f"{kind} {kinds[kind]}" for kind in KINDS)
    print(f"{len(queries)} queries verified ({summary})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
