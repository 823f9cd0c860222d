"""A document's language, for search (docs/search.md, "Languages").

BM25 analyses each document with PostgreSQL's text search configuration for
its language; the analysis itself is SQL, the same functions for documents
and queries (migrations/0018_languages.sql: `mdchunks_search_config` maps a
language to its configuration, `mdchunks_search_words` cuts text in scripts
written without spaces into character bigrams, `mdchunks_search_fields`
makes a row's search columns with them, `mdchunks_query_terms` a query's
terms). What is decided here,
in Python, is which language a document is written in, stored on its chunk
rows (`language`):

1. its front matter's `lang:` or `locale:` (YAML; `lang =` in TOML);
2. else the first folder of its path that is a language tag of a known
   language (`zh-cn/guide.md`, `docs/fr/intro.md`, `ja/`), as
   translated docs sites lay out their pages (Starlight, Docusaurus' i18n,
   VitePress, MkDocs' i18n);
3. else None: analysed as English, the fallback.

The rules are part of the recipe (`LANGUAGE_RULES_VERSION`): changing them
re-processes every document once.
"""

from __future__ import annotations

import re

# Bumped whenever the rules below (or the SQL analysis they feed) change what a
# document's rows are: part of the recipe's fingerprint (flow/plugin/recipe.py).
LANGUAGE_RULES_VERSION = "1"

# Primary language subtags a folder may name. A short list on purpose: a
# folder is taken for a language only if docs sites translate into it, so
# `js/`, `ui/`, `db/` or `go/` never are. The front matter may name any tag.
# PostgreSQL has a text search configuration (stemming, stop words) for these:
_CONFIGURED = "ar da de el en es fi fr ga hu id it lt nb ne nl nn no pt ro ru sv ta tr"
# these are analysed with 'simple' (and CJK, Thai in character bigrams):
_SIMPLE = "bg bn ca cs et fa gl he hi hr ja ka kk ko lv mk ms pl sk sl sr th uk ur uz vi zh"
FOLDER_LANGUAGES = frozenset(f"{_CONFIGURED} {_SIMPLE}".split())

# A language tag: a primary subtag, then region or script subtags.
_TAG = re.compile(r"[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8})*")
# The front matter at the very top (YAML `---` or TOML `+++`), and its line
# naming the language.
_FRONT_MATTER = re.compile(r"\A\ufeff?(---|\+\+\+)[ \t]*\r?\n(.*?)^\1[ \t]*$", re.DOTALL | re.M)
_LANGUAGE_LINE = re.compile(
    r"""^(?:lang|locale|language)[ \t]*[:=][ \t]*["']?([A-Za-z0-9_-]+)["']?[ \t]*(?:\#.*)?$""",
    re.M,
)


def normalised(tag: str) -> str | None:
    """`pt_BR` -> `pt-br`; None for what is no language tag."""
    tag = tag.strip()
    if not _TAG.fullmatch(tag):
        return None
    return tag.replace("_", "-").lower()


def front_matter_language(text: str) -> str | None:
    """The language its front matter names (`lang`, `locale`, `language`), else None."""
    block = _FRONT_MATTER.match(text[:20_000])
    if block is None:
        return None
    line = _LANGUAGE_LINE.search(block.group(2))
    return None if line is None else normalised(line.group(1))


def path_language(rel_path: str) -> str | None:
    """The first folder of the path that is a known language's tag, else None."""
    for folder in rel_path.split("/")[:-1]:
        tag = normalised(folder)
        if tag is not None and tag.split("-", 1)[0] in FOLDER_LANGUAGES:
            return tag
    return None


def document_language(text: str, rel_path: str) -> str | None:
    """The document's language tag (lower case, `-` between subtags): front
    matter first, then the path; None when neither says (English analysis)."""
    return front_matter_language(text) or path_language(rel_path)
