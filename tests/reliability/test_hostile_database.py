"""Hostile input on the database side (issue "hostile folders", items 4 and 5):
no message ever shows a password, however the URL is broken (property-tested
over generated URLs, then through the real command); first use of a fresh
data dir is race-free."""

from __future__ import annotations

import subprocess
from pathlib import Path
from urllib.parse import unquote

from hypothesis import example, given, settings
from hypothesis import strategies as st
from mdchunks.db.urls import check_url, redact, scrub
from mdchunks.errors import UsageError
from reliability_support import MDCHUNKS, cli_env, finish, kill, run_cli, start_cli

# A password that is easy to find in any output, with characters that break URLs.
PASSWORDS = st.text(
    alphabet="abcdefXYZ0123456789%@:/[]?#&= '\\!$*-_~.", min_size=1, max_size=16
).map(lambda tail: "S3CRET" + tail)
SHAPES = [
    "postgresql://u:{pw}@[::1:1/x",
    "postgresql://u:{pw}@host/db",
    "postgresql://u:{pw}%zz@host/db",
    "postgresql://u:{pw}@host:notaport/db",
    "postgresql://u:{pw}",
    "postgresql://u:{pw}/db",
    "postgresql://u:{pw}@ho st/db?sslmode=bogus",
    "postgresql://u@host/db?password={pw}&sslmode=bogus",
    "postgres://u:{pw}@host/db?bogus_option=1",
    "mysql://u:{pw}@host/db",
    "host=h password={pw} port=abc",
    "host=h password='{pw}' dbname=",
    "{junk}postgresql://u:{pw}@{junk}/db",
]


def _spellings(password: str) -> set[str]:
    """What must not show: the password, and its decoded form when that is
    still recognisably it."""
    return {s for s in {password, unquote(password)} if s.startswith("S3CRET")}


@settings(max_examples=500, deadline=None)
# Found by this test in CI: junk before the scheme puts a `://` in the user info.
@example(password="S3CRET0", shape="{junk}postgresql://u:{pw}@{junk}/db", junk="://")
# Found in CI: a backslash escapes the blank after it, so the value runs on
# (libpq's rule), while a message may quote the password as typed.
@example(password="S3CRET\\", shape="host=h password={pw} port=abc", junk="")
@given(
    password=PASSWORDS,
    shape=st.sampled_from(SHAPES),
    junk=st.text(alphabet="[]@:/%?#&= x", max_size=6),
)
def test_no_message_shows_the_password(password: str, shape: str, junk: str) -> None:
    url = shape.format(pw=password, junk=junk)
    shown = [redact(url), scrub(f"could not connect to {url} ({password})", url)]
    try:
        check_url(url)
    except UsageError as exc:
        shown.append(str(exc))
    for text in shown:
        for secret in _spellings(password):
            assert "S3CRET" not in text, (url, text, secret)


def test_the_command_never_prints_a_password_of_a_broken_url() -> None:
    for url in (
        "postgresql://u:PASS-S3CRET@[::1:1/x",
        "postgresql://u:PA%zzSS-S3CRET@host/db",
        "postgresql://u:PASS-S3CRET@localhost:1/db",
    ):
        done = run_cli("status", "--database-url", url, timeout=120)
        assert done.code in (2, 3), done.text
        assert "S3CRET" not in done.text and "PASS" not in done.text, done.text


def test_first_commands_on_a_fresh_data_dir_at_once_all_succeed(tmp_path: Path) -> None:
    """Three first commands at once on one fresh data dir: one initialises and
    starts the embedded server and creates its database, the others use them.
    (Commands that make a data dir: a read-only one, `status`, says there is
    nothing there instead; tests/flow/test_flow_read_only.py.)"""
    data_dir = tmp_path / "data"
    env = cli_env()
    processes = [
        start_cli(command, "--data-dir", str(data_dir), env=env)
        for command in ("migrate", "migrate", "migrate")
    ]
    try:
        results = [finish(process, timeout=300) for process in processes]
    finally:
        for process in processes:
            if process.poll() is None:
                kill(process)
        stop = run_cli("stop", "--data-dir", str(data_dir), timeout=120)
    for done in results:
        assert done.code == 0, done.text
    assert stop.code == 0, stop.text


def test_a_data_dir_whose_path_holds_shell_characters_works(tmp_path: Path) -> None:
    """Issue 42: `cd "My Docs" && mdchunks ingest notes` could not start the
    embedded server (pg_ctl runs it through a shell, postgres splits its
    socket folder on spaces): exit 3. The data dir is the default one, in a
    folder whose name holds a space, a quote, `$`, `&` and `;`."""
    odd = tmp_path / "My Docs it's $HOME & co; x"
    (odd / "notes").mkdir(parents=True)
    (odd / "notes" / "kettle.md").write_text("# Kettle\n\nBoil water with the kettle.\n")

    def mdchunks_in_odd(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*MDCHUNKS, *args],
            cwd=odd,
            env=cli_env(),
            capture_output=True,
            text=True,
            timeout=300,
        )

    try:
        ingested = mdchunks_in_odd("ingest", "notes")
        assert ingested.returncode == 0, ingested.stderr
        assert (odd / ".mdchunks" / "pg" / "PG_VERSION").is_file()
        # Stopped and started again by the next command.
        assert mdchunks_in_odd("stop").returncode == 0
        found = mdchunks_in_odd("search", "kettle", "--json")
        assert found.returncode == 0, found.stderr
        assert '"rel_path": "kettle.md"' in found.stdout
    finally:
        mdchunks_in_odd("stop")
