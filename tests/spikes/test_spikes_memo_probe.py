"""The memo probe's judgement and exit status, without a database.

The probe itself runs the real flow against a throwaway embedded server
(`python -m spikes.memo_probe`, about ten seconds); here its runs are faked,
so these tests check only what it concludes from the counts.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from spikes import memo_probe
from spikes.memo_probe import Observation, Step, answers, format_observations, steps

DOCS = 7


def as_expected(step: Step) -> Observation:
    """What a correct flow reports for `step` over DOCS documents."""
    first = step.name == "initial ingest"
    return Observation(
        step=step,
        documents=DOCS,
        processed=DOCS if step.reprocess_all else 0,
        added=DOCS if first else 0,
        reprocessed=DOCS if step.reprocess_all and not first else 0,
        unchanged=0 if step.reprocess_all else DOCS,
        failures=0,
        stale_rows=0,
        healed=False,
    )


def test_the_steps_ask_both_questions() -> None:
    names = [(s.name, s.reprocess_all) for s in steps()]
    assert names == [
        ("initial ingest", True),
        ("same recipe again", False),
        ("chunk size changed", True),
        ("changed recipe again", False),
    ]
    first, _, changed, _ = steps()
    assert first.recipe.fingerprint() != changed.recipe.fingerprint()
    assert changed.recipe.chunk_size < first.recipe.chunk_size


def test_a_correct_flow_passes() -> None:
    seen = [as_expected(step) for step in steps()]
    assert all(s.ok for s in seen)
    text, ok = answers(seen, bytes_unchanged=True)
    assert ok
    assert "7 of 7 documents re-processed" in text
    assert "unchanged recipe: 0 documents re-processed over 2 runs" in text


@pytest.mark.parametrize(
    ("step_index", "change"),
    [
        (2, {"processed": 0, "reprocessed": 0, "unchanged": DOCS}),  # recipe change unseen
        (2, {"processed": 3, "reprocessed": 3, "unchanged": 4}),  # only some re-processed
        (2, {"stale_rows": 12}),  # rows of the old recipe survived
        (1, {"processed": DOCS, "reprocessed": DOCS, "unchanged": 0}),  # memo missed
        (3, {"processed": 1, "reprocessed": 1, "unchanged": DOCS - 1}),
        (1, {"healed": True}),  # everything rewritten behind the memo's back
        (0, {"failures": 1}),
    ],
)
def test_a_wrong_answer_fails(step_index: int, change: dict[str, object]) -> None:
    seen = [as_expected(step) for step in steps()]
    seen[step_index] = replace(seen[step_index], **change)  # type: ignore[arg-type]
    assert not seen[step_index].ok
    assert not answers(seen, bytes_unchanged=True)[1]
    assert "WRONG" in format_observations(seen)


def test_changed_file_bytes_fail_the_probe() -> None:
    seen = [as_expected(step) for step in steps()]
    text, ok = answers(seen, bytes_unchanged=False)
    assert not ok
    assert "identical before and after: NO" in text


def test_the_run_table_is_fixed_width() -> None:
    lines = format_observations([as_expected(step) for step in steps()]).splitlines()
    assert [cell.strip() for cell in lines[0].strip("|").split("|")] == [
        "run", "recipe", "docs", "processed", "expected", "added",
        "reprocessed", "unchanged", "stale rows", "verdict",
    ]  # fmt: skip
    assert lines[1].startswith("|:--") and lines[1].endswith("-|")  # the Markdown rule
    assert lines[2].startswith("| 1. initial ingest ")
    assert lines[2].rstrip("| ").endswith(" ok")
    # every line as long as the header; right-aligned counts end in one column
    assert {len(line) for line in lines} == {len(lines[0])}
    column_end = lines[0].index("processed") + len("processed")
    assert all(line[column_end - 1] != " " for line in lines)


@pytest.mark.parametrize(("correct", "exit_code"), [(True, 0), (False, 1)])
def test_exit_status(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, correct: bool, exit_code: int
) -> None:
    def fake_observe(_root: Path, _data_dir: Path, step: Step) -> Observation:
        seen = as_expected(step)
        if not correct and step.name == "chunk size changed":
            return replace(seen, processed=0, reprocessed=0, unchanged=DOCS)
        return seen

    monkeypatch.setattr(memo_probe, "observe", fake_observe)
    monkeypatch.setattr(memo_probe, "stop_embedded", lambda _data_dir: False)
    (tmp_path / "a.md").write_text("# A\n", encoding="utf-8")
    result = CliRunner().invoke(memo_probe.main, [str(tmp_path)])
    assert result.exit_code == exit_code, result.output
    assert "changed recipe, no byte changed" in result.stdout
