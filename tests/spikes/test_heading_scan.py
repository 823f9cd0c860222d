"""The heading scan (`python -m spikes.heading_scan`): every bundled corpus
agrees with CommonMark + tables, and the scan reports a disagreement."""

from __future__ import annotations

from pathlib import Path

import pytest

from spikes.heading_scan import DEFAULT_PATHS, report, scan


@pytest.mark.parametrize("root", DEFAULT_PATHS, ids=[p.name for p in DEFAULT_PATHS])
def test_every_bundled_document_has_the_reference_headings(root: Path) -> None:
    result = scan(root)
    assert result.documents > 0 and result.headings > 0
    assert result.differences == (), "\n".join(report([result], 20))


def test_the_scan_reports_a_document_that_differs(tmp_path: Path) -> None:
    # A documented deviation (test_conformance.py, example-201-setext):
    # markdown-it reads `===` as a definition's destination, we a heading.
    (tmp_path / "a.md").write_text("# Top\n\n[foo]:\n===\n", encoding="utf-8")
    result = scan(tmp_path)
    assert (result.documents, result.documents_differing, result.count("extra")) == (1, 1, 1)
    assert report([result], 5)[-1].endswith("a.md:3: expected nothing, found H1 '[foo]:'")
