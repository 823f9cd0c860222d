"""The fixed-width table and the JSON rows, on hand-made scores."""

from __future__ import annotations

import json

from spikes.metrics import Ratio, Scores
from spikes.report import Row, format_table, percent, to_json

# truthful 20/32 = 62.5%, nested 25/32 = 78.125% -> "78.1%", aligned 0/3, pure 0/3
BLIND = Scores(32, 3, 3, Ratio(0, 3), Ratio(0, 3), Ratio(20, 32), Ratio(25, 32))
# no headings: aligned 0/0 -> "n/a"; everything else 100%
PLAIN = Scores(11, 0, 2, Ratio(0, 0), Ratio(2, 2), Ratio(9, 9), Ratio(9, 9))
ROWS = [Row("docs", "none", BLIND), Row("docs", "markdown", PLAIN)]


def test_percent() -> None:
    assert percent(Ratio(25, 32)) == "78.1%"
    assert percent(Ratio(1, 1)) == "100.0%"
    assert percent(Ratio(0, 7)) == "0.0%"
    assert percent(Ratio(0, 0)) == "n/a"


EXPECTED_TABLE = """\
| doc  | mode     | chars | hdgs | chunks | hdg-aligned |   pure | truthful | truthful-nested |
|:-----|:---------|------:|-----:|-------:|------------:|-------:|---------:|----------------:|
| docs | none     |    32 |    3 |      3 |        0.0% |   0.0% |    62.5% |           78.1% |
| docs | markdown |    11 |    0 |      2 |         n/a | 100.0% |   100.0% |          100.0% |
"""


def test_table_is_fixed_width_markdown() -> None:
    assert format_table(ROWS) == EXPECTED_TABLE
    assert len({len(line) for line in EXPECTED_TABLE.splitlines()}) == 1


def test_table_of_no_rows_is_the_header() -> None:
    assert format_table([]).splitlines()[0].split("|")[1].strip() == "doc"
    assert len(format_table([]).splitlines()) == 2


def test_json_rows() -> None:
    payload = json.loads(to_json(ROWS[:1], ROWS))
    assert payload["totals"] == [
        {
            "path": "docs",
            "mode": "none",
            "chars": 32,
            "headings": 3,
            "chunks": 3,
            "aligned": 0,  # a count, over `headings`
            "pure": 0,  # a count, over `chunks`
            "truthful": 0.625,  # 20 / 32
            "truthful_nested": 0.78125,  # 25 / 32
        }
    ]
    assert payload["documents"][1]["truthful"] == 1.0
    assert payload["documents"][1]["aligned"] == 0
    # undefined fractions are null
    empty = Scores(0, 0, 0, Ratio(0, 0), Ratio(0, 0), Ratio(0, 0), Ratio(0, 0))
    assert json.loads(to_json([Row("e", "none", empty)], []))["totals"][0]["truthful"] is None
