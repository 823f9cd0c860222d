"""A database URL: checked, handed to asyncpg, and shown without its password.

A URL (`postgresql://...`) or a libpq `key=value` string is checked up front
for what libpq would refuse and for parameters asyncpg cannot honour
(`check_url`), re-encoded for asyncpg (`url_of`, `connect_timeout`), and
masked wherever it is shown: `redact` for the URL itself, `scrub` for any
message that may quote its password. Plain strings in, plain strings out: no
connection is made here (flow/db/database.py connects).
"""

from __future__ import annotations

import contextlib
import re
from difflib import SequenceMatcher
from urllib.parse import quote, unquote, urlencode

from mdchunks.errors import UsageError

CONNECT_TIMEOUT_SECONDS = 10


def check_url(url: str) -> None:
    if "://" in url and not url.startswith(("postgresql://", "postgres://")):
        raise UsageError(
            f"unsupported database URL {redact(url)}: "
            "use postgresql://user:password@host:port/dbname"
        )
    try:
        if "://" in url:
            _check_uri(url)
        else:
            parse_key_values(url)
    except ValueError as exc:
        raise UsageError(f"invalid database URL {redact(url)}: {scrub(str(exc), url)}") from None
    unsupported = unsupported_parameters(url)
    if unsupported:
        raise UsageError(
            f"unsupported parameter {scrub(', '.join(unsupported), url)} in the database URL "
            f"{redact(url)}: mdchunks connects with asyncpg (the engine's driver), which "
            "knows host, port, dbname, user, password, passfile, service, the ssl* "
            "parameters, target_session_attrs, application_name and options"
        )


def _check_uri(url: str) -> None:
    """What libpq refuses before connecting: a bad percent escape (or one that
    is not UTF-8), an unclosed IPv6 bracket, a port that is no number.
    Whatever else is wrong, connecting says."""
    for escape in re.finditer(r"%(.{0,2})", url):
        if not re.fullmatch(r"[0-9a-fA-F]{2}", escape.group(1)):
            raise ValueError(f"invalid percent-encoded token at offset {escape.start()}")
    try:
        unquote(url, errors="strict")
    except UnicodeDecodeError:
        raise ValueError("a percent escape is not UTF-8") from None
    # The hosts, as libpq finds them: after the user info (which ends at the
    # first `@` before any `/`), up to the path or the query.
    rest = url.split("://", 1)[1]
    end = next((i for i, char in enumerate(rest) if char in "@/"), len(rest))
    hosts = rest[end + 1 :] if end < len(rest) and rest[end] == "@" else rest
    for host in re.split(r"[/?]", hosts, maxsplit=1)[0].split(","):
        if host.startswith("[") and "]" not in host:
            raise ValueError("an IPv6 address is missing its closing bracket")
        port = _port_of(host)
        if port and not port.isdigit():
            raise ValueError("a port is not a number")  # not shown: it may be a password


_KEY_VALUE = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*")


def parse_key_values(dsn: str) -> dict[str, str]:
    """A libpq `key=value ...` connection string as a dict (libpq's rules: a
    value is quoted in `'...'` or runs to the next blank; `\\` escapes).
    Raises ValueError where libpq would refuse it."""
    found: dict[str, str] = {}
    at = 0
    while dsn[at:].strip():
        match = _KEY_VALUE.match(dsn, at)
        if match is None:
            raise ValueError(f'missing "=" after "{dsn[at:].split()[0]}" in connection info string')
        at = match.end()
        value: list[str] = []
        quoted = dsn.startswith("'", at)
        at += quoted
        while at < len(dsn):
            char = dsn[at]
            if char == "\\" and at + 1 < len(dsn):
                value.append(dsn[at + 1])
                at += 2
                continue
            if (quoted and char == "'") or (not quoted and char.isspace()):
                break
            value.append(char)
            at += 1
        if quoted:
            if at >= len(dsn):
                raise ValueError("unterminated quoted string in connection info string")
            at += 1
        found[match.group(1)] = "".join(value)
    return found


# The connection parameters asyncpg reads itself (asyncpg/connect_utils.py),
# and the server's own startup parameters: asyncpg sends any other query
# parameter to the server as a setting, which refuses libpq's own
# ("unrecognized configuration parameter"). libpq's TCP tuning has no
# asyncpg counterpart and is left out; connect_timeout is ours to apply.
_ASYNCPG_PARAMETERS = frozenset(
    {
        "host", "port", "dbname", "database", "user", "password", "passfile", "service",
        "sslmode", "sslcert", "sslkey", "sslrootcert", "sslnegotiation", "sslcrl",
        "sslpassword", "ssl_min_protocol_version", "ssl_max_protocol_version",
        "target_session_attrs", "krbsrvname", "gsslib",
        "application_name", "options", "client_encoding",
    }
)  # fmt: skip
_LEFT_OUT = frozenset(
    {
        "connect_timeout", "fallback_application_name", "keepalives", "keepalives_idle",
        "keepalives_interval", "keepalives_count", "tcp_user_timeout",
    }
)  # fmt: skip


def _parameters(dsn: str) -> tuple[str, dict[str, str]]:
    """The URL without its query (or `postgresql://` for a key=value string),
    and its parameters, decoded as libpq decodes them (a `+` is a plus)."""
    if "://" not in dsn:
        params = parse_key_values(dsn)
        dbname = params.pop("dbname", None)
        # No dbname: nothing after the `/`, so PGDATABASE or the user name apply.
        base = "postgresql://" if dbname is None else f"postgresql:///{quote(dbname, safe='')}"
        return base, params
    base, _, query = dsn.partition("?")
    params = {}
    for piece in filter(None, query.split("&")):
        key, _, value = piece.partition("=")
        params[unquote(key)] = unquote(value)
    return base, params


def unsupported_parameters(dsn: str) -> list[str]:
    """The parameters of `dsn` that mdchunks cannot honour (libpq's own)."""
    _, params = _parameters(dsn)
    return sorted(set(params) - _ASYNCPG_PARAMETERS - _LEFT_OUT)


def url_of(dsn: str) -> str:
    """The URL asyncpg is given for `dsn` (a URL or a key=value string): the
    parameters it reads, re-encoded so that it decodes them as libpq does."""
    base, params = _parameters(dsn)
    kept = {key: value for key, value in params.items() if key not in _LEFT_OUT}
    query = urlencode(kept, quote_via=quote)
    return base + (f"?{query}" if query else "")


def connect_timeout(dsn: str) -> float:
    """`connect_timeout` of the URL (libpq's: seconds, 0 or none: the default)."""
    with contextlib.suppress(ValueError):
        seconds = float(_parameters(dsn)[1].get("connect_timeout", "0"))
        if seconds > 0:
            return max(seconds, 2.0)  # libpq's minimum
    return CONNECT_TIMEOUT_SECONDS


# A value quoted, or up to a blank or `&`; a backslash escapes the next
# character in both (libpq's rule: `password=a\ b` is "a b").
_PASSWORD_IN_KV = re.compile(
    r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|(?:\\.|[^\s&\\])+)", re.IGNORECASE
)
_PASSWORD_TO_BLANK = re.compile(r"(password\s*=\s*)([^\s&]+)", re.IGNORECASE)
_PORT = re.compile(r"[0-9]*")


def redact(url: str) -> str:
    """`url` with any password replaced by `***` (URL or key=value form).

    Written for broken URLs as much as for good ones (a URL is shown mostly
    when it is wrong): the user info is everything before the LAST `@` after
    the scheme (a password may hold `/`, `@` or `[` unescaped), `password=`
    is masked in the query, and a `host:secret` with no `@` and a port that
    is not a number is masked too. Whatever is left goes through `scrub`."""
    if "://" not in url:
        return scrub(_mask_kv(url), url)
    scheme, rest = url.split("://", 1)
    rest = _mask_kv(rest)  # `?password=` first: its value may hold an `@`
    at = rest.rfind("@")
    if at >= 0:
        userinfo, hostpart = rest[:at], rest[at + 1 :]
        user, colon, password = userinfo.partition(":")
        if colon and password:  # an empty password (`user:@`) hides nothing
            userinfo = f"{user}:***"
        shown = f"{scheme}://{userinfo}@{hostpart}"
    else:
        slash = rest.find("/")
        netloc, tail = (rest, "") if slash < 0 else (rest[:slash], rest[slash:])
        netloc = ",".join(_masked_host(host) for host in netloc.split(","))
        shown = f"{scheme}://{netloc}{tail}"
    return scrub(shown, url)


def _port_of(host: str) -> str | None:
    """What follows the host's `:` (after a bracketed IPv6 address), if any."""
    start = host.find("]") + 1 if host.startswith("[") else 0
    colon = host.find(":", start)
    return None if colon < 0 else host[colon + 1 :]


def _masked_host(host: str) -> str:
    """`host:port`, with a "port" that is no number masked: with no `@`, a
    `user:password` reads as host and port."""
    port = _port_of(host)
    if port is None or _PORT.fullmatch(port):
        return host
    return host[: len(host) - len(port)] + "***"


def _mask_kv(text: str) -> str:
    return _PASSWORD_IN_KV.sub(r"\1***", text)


def scrub(message: str, url: str) -> str:
    """`message` with the password of `url` (if any) masked, wherever it appears:
    as written, percent-decoded and percent-encoded, and however `url` is broken."""
    secrets = sorted(_secrets_of(url), key=len, reverse=True)
    if not secrets:
        return message

    def quoted(found: re.Match[str]) -> str:
        # libpq quotes the token it could not parse: a piece of the URL cut
        # wherever its parser stopped, so possibly a piece of the password.
        fragment = found.group(1)
        if fragment in url and any(_shares(fragment, secret) for secret in secrets):
            return '"***"'
        return found.group(0)

    message = _QUOTED.sub(quoted, message)
    for secret in secrets:
        message = _occurrences(secret).sub("***", message)
    return message


def _occurrences(secret: str) -> re.Pattern[str]:
    """The secret wherever it stands, but not inside a longer run of letters
    and digits: a password that is a word (`postgres`, `a`) would otherwise cut
    up every word that holds it (`***ql://`, `p***ssword`). Only the secret's
    own letters and digits at its ends are so bounded."""
    before = r"(?<![^\W_])" if secret[0].isalnum() else ""
    after = r"(?![^\W_])" if secret[-1].isalnum() else ""
    return re.compile(before + re.escape(secret) + after)


_QUOTED = re.compile(r'"([^"]*)"')
_SHARED_CHARS = 3


def _shares(fragment: str, secret: str) -> bool:
    """Do the two have a common run of a few characters (or is one inside the other)?"""
    if fragment in secret or secret in fragment:
        return True
    match = SequenceMatcher(None, fragment, secret, autojunk=False).find_longest_match()
    return match.size >= min(_SHARED_CHARS, len(secret))


def _secrets_of(url: str) -> set[str]:
    """Every spelling of what could be the password of `url`, parseable or not."""
    found: set[str] = set()
    with contextlib.suppress(ValueError, TypeError):
        if "://" not in url:
            password = parse_key_values(url).get("password")
            if password:
                found.add(password)
    if "://" in url:
        rest = url.split("://", 1)[1]
        at = rest.rfind("@")
        # Where the user info ends is a guess in a broken URL: each `@` may.
        # And where the password starts: after any `:` of the user info (junk
        # before the scheme puts a `://` in it: `://postgresql://u:pw@...`).
        for end in (i for i, char in enumerate(rest) if char == "@"):
            userinfo = rest[:end]
            found.update(userinfo[i + 1 :] for i, char in enumerate(userinfo) if char == ":")
        if at < 0:
            for host in rest.split("/", 1)[0].split(","):
                port = _port_of(host)
                if port is not None and not _PORT.fullmatch(port):
                    found.add(port)
    for match in _PASSWORD_IN_KV.finditer(url):
        found.add(match.group(2))
        found.add(match.group(2).strip("'"))
    # And each value cut at its first blank, escaped or not: what a message
    # that quotes the password as typed may show of it.
    found.update(match.group(2) for match in _PASSWORD_TO_BLANK.finditer(url))
    spellings = set()
    for secret in found:
        spellings.update({secret, unquote(secret), quote(secret, safe="")})
        # libpq quotes a bad token in its message: a part of the secret can be
        # what it echoes (up to the bad escape), so each part is masked too.
        spellings.update(part for part in re.split(r"%(?![0-9a-fA-F]{2})", secret) if part)
    return {secret for secret in spellings if secret}
