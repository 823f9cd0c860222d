"""Every command the README shows is run by a test, so the README cannot drift
from the product (docs/tests.md). Each line of its `sh` blocks is one of:

- `mdchunks ...`: run here, in the README's order, through the console
  script's `main`, against this test's database, from a folder holding a copy
  of `sample/` ingested as the demo ingests it (the examples name it); each
  must exit 0 with no traceback, and an output the README shows must be what
  it prints;
- `mdchunks mcp ...`: started over stdio with the MCP SDK's own client, which
  lists its tools and runs a search;
- `python3 dev.py demo`: run by tests/flow/test_readme_demo.py (the
  transcript); `python3 dev.py test`: what `.ci/run` runs, checked here;
- `pip install ...` (`.venv/bin/pip` too): the extras and the torch pin
  pyproject.toml declares.

A line of any other kind fails the test until a test runs it. The Python
block is an excerpt of examples/chunks_with_word_count.py, line for line,
which tests/flow/test_plugin_face.py runs on real PostgreSQL.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import shutil
import sys
import tomllib
from pathlib import Path

import pytest
from conftest import RunCli
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def _blocks(language: str) -> list[str]:
    return [body for lang, body in FENCE.findall(README) if lang == language]


def _commands() -> list[list[str]]:
    """Every command line of the README's `sh` blocks, comments cut off."""
    lines = []
    for block in _blocks("sh"):
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            if words:
                lines.append(words)
    return lines


def _parts(words: list[str]) -> list[list[str]]:
    """`a && b` as two commands; `.venv/bin/pip` is `pip`."""
    parts: list[list[str]] = [[]]
    for word in words:
        if word == "&&":
            parts.append([])
        else:
            parts[-1].append("pip" if word == ".venv/bin/pip" and not parts[-1] else word)
    return parts


def _mdchunks_lines() -> list[tuple[str, list[str]]]:
    """Each `mdchunks` line as the README writes it, and its arguments."""
    found = []
    for block in _blocks("sh"):
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            if words and words[0] == "mdchunks":
                found.append((line.split(" #", 1)[0].rstrip(), words[1:]))
    return found


def test_every_line_of_the_readme_is_of_a_kind_a_test_runs() -> None:
    kinds = {"mdchunks", "python3", "pip"}
    commands = [part for words in _commands() for part in _parts(words)]
    assert commands, "the README shows no command"
    unknown = [" ".join(words) for words in commands if words[0] not in kinds]
    assert not unknown, f"README commands no test runs: {unknown}"
    dev = [words[2:] for words in commands if words[:2] == ["python3", "dev.py"]]
    assert dev == [["demo"], ["test"]], "the README opens with the demo and the tests"
    assert "python3 dev.py test" in (ROOT / ".ci" / "run").read_text()
    assert "$ python3 dev.py demo\n" in README  # the transcript test_readme_demo compares


def test_pip_lines_name_what_pyproject_declares() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    pip = [part for words in _commands() for part in _parts(words) if part[0] == "pip"]
    assert pip, "the README shows how to install the embed extra"
    named = " ".join(" ".join(part) for part in pip) + " " + README
    for extra in re.findall(r"(?:\.|mdchunks)\[(\w+)\]", named):
        assert extra in extras, f"the README installs an extra pyproject.toml lacks: {extra}"
    for part in pip:
        for word in part[2:]:
            if word.startswith("torch"):
                assert any(word == pin for pin in extras["embed"]), (word, extras["embed"])


def test_the_python_block_is_the_example_a_test_runs() -> None:
    example = (ROOT / "examples" / "chunks_with_word_count.py").read_text()
    (block,) = _blocks("python")
    assert block.strip() and block.strip() in example


def test_the_mcp_configuration_is_the_command_the_readme_shows() -> None:
    (config,) = _blocks("json")
    server = json.loads(config)["mcpServers"]["mdchunks"]
    assert server["command"] == "mdchunks"
    assert server["args"][:2] == ["mcp", "--data-dir"]
    assert any(words[:2] == ["mcp", "--data-dir"] for _, words in _mdchunks_lines())


def _shown_output(line: str) -> list[str]:
    """The output the README shows in a plain block right after the `sh` block
    ending with `line`, or nothing when the next block is not one."""
    after = README.split(line + "\n```\n", 1)[1] if line + "\n```\n" in README else ""
    if not after.lstrip("\n").startswith("```\n"):
        return []
    return after.lstrip("\n")[4:].split("\n```", 1)[0].splitlines()


async def _mcp_session(args: list[str], database_url: str, cwd: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env["COCOINDEX_DISABLE_USAGE_TRACKING"] = "1"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mdchunks", *args, "--database-url", database_url],
        env=env,
        cwd=str(cwd),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = {tool.name for tool in (await session.list_tools()).tools}
        assert {"search", "outline", "read_section", "read_chunk", "list_sources"} <= tools
        result = await session.call_tool("search", {"query": "ownership rules", "k": 2})
        assert not result.is_error, result.content
        assert result.structured_content and result.structured_content["hits"]


def test_every_mdchunks_command_of_the_readme_runs(
    run_cli: RunCli,
    database_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    folder = tmp_path / "readme"
    shutil.copytree(ROOT / "sample", folder / "sample")
    monkeypatch.chdir(folder)
    lines = _mdchunks_lines()
    assert [words[0] for _, words in lines].count("ingest") >= 1
    demo = run_cli("ingest", "sample", "--source", "sample")  # what the demo did
    assert demo.code == 0, demo.err
    for line, words in lines:
        if words[0] == "mcp":
            asyncio.run(_mcp_session(words, database_url, folder))
            continue
        result = run_cli(*words, database=words[0] != "stop")
        shown = " ".join(["mdchunks", *words])
        assert result.code == 0, f"{shown}: exit {result.code}\n{result.err}"
        assert "Traceback" not in result.err, f"{shown}:\n{result.err}"
        printed = _shown_output(line)
        if printed:
            assert result.out.splitlines()[: len(printed)] == printed, shown
        if words[0] == "search":
            assert "ch04-01-what-is-ownership.md" in result.out, shown
