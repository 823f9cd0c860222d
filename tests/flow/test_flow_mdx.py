"""MDX pages are indexed as MDX, through the product (docs/heading-index.md, "MDX")."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import Ingest
from flow_checks import assert_rows_match_files, fetch
from mdchunks import Recipe

STARLIGHT = Path(__file__).resolve().parents[2] / "corpora" / "starlight-docs"

# A real shape of MDX docs: a fence inside an indented component, whose shell
# comment CommonMark takes for a heading once the tag line has made an HTML
# block of the lines before; a heading inside <Steps>.
PAGE = """---
title: Deploy your site
---
import { Steps, Tabs, TabItem } from '@astrojs/starlight/components';

Intro words about deploying.

<Tabs>
<TabItem label="npm">
```sh
npm run build

# build your site with verbose logs
npm run build -- --verbose
```
</TabItem>
</Tabs>

<Steps>
## Choose a host
Pick one of the hosts below.
</Steps>

## Check the result

Open the site.
"""


@pytest.mark.parametrize("chunker", ["recursive", "structure"])
def test_an_mdx_page_gets_mdx_headings_and_a_md_page_commonmark(
    ingest: Ingest, tmp_path: Path, database_url: str, chunker: str
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "deploy.mdx").write_text(PAGE, encoding="utf-8")
    (docs / "deploy.md").write_text(PAGE, encoding="utf-8")
    recipe = Recipe(chunk_size=200, min_chunk_size=100, chunk_overlap=0, chunker=chunker)

    report = ingest(docs, recipe=recipe)

    assert report.ok
    sections = {
        rel_path: [
            tuple(row["heading_path"])
            for row in fetch(
                database_url,
                "SELECT heading_path FROM content_sections"
                " WHERE source = 'docs' AND rel_path = %s ORDER BY ordinal",
                (rel_path,),
            )
        ]
        for rel_path in ("deploy.mdx", "deploy.md")
    }
    assert sections["deploy.mdx"] == [(), ("Choose a host",), ("Check the result",)]
    # The same text read as CommonMark: the tag line starts an HTML block that
    # swallows the fence's opening line, so the shell comment is a heading and
    # the fence it then opens swallows the rest of the page.
    assert sections["deploy.md"] == [(), ("build your site with verbose logs",)]
    assert_rows_match_files(database_url, docs, recipe=recipe)


def test_starlight_ingests_with_the_sections_remark_mdx_gives(
    ingest: Ingest, tmp_path: Path, database_url: str
) -> None:
    docs = tmp_path / "docs"
    shutil.copytree(STARLIGHT / "guides", docs)

    report = ingest(docs)

    assert report.ok and report.failed == 0
    assert assert_rows_match_files(database_url, docs) == report.rows_total
