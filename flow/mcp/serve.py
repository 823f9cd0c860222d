"""The transports of `mdchunks mcp` (docs/mcp.md): stdio (the default: the
client starts the server as its child and talks over its stdin and stdout),
or streamable HTTP on `--http HOST:PORT`.

HTTP listens on loopback unless told otherwise. Another address (reachable
from other machines) is served only with a bearer token, read from the
environment (`MDCHUNKS_MCP_TOKEN`, never from the command line, which other
users of the machine can see); a request without it, or with another, gets
401. On loopback a token is optional and, when set, required alike. The
SDK's own DNS-rebinding guard (Host and Origin headers) stays on for loopback.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from mdchunks.errors import UsageError

TOKEN_VARIABLE = "MDCHUNKS_MCP_TOKEN"
MIN_TOKEN_CHARS = 16
LOOPBACK_NAMES = ("localhost",)

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Address:
    host: str
    port: int

    @property
    def loopback(self) -> bool:
        if self.host in LOOPBACK_NAMES:
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False


def parse_address(text: str) -> Address:
    """`HOST:PORT`, `[v6]:PORT` or `:PORT` (loopback); one line when it is not."""
    host, sep, port = text.strip().rpartition(":")
    if not sep or not port.isdigit():
        raise UsageError(f"--http {text!r}: expected HOST:PORT, e.g. 127.0.0.1:8765")
    if int(port) > 65535:
        raise UsageError(f"--http {text!r}: port {int(port)} is out of range (0 to 65535)")
    host = host.strip("[]") or "127.0.0.1"
    return Address(host, int(port))


def check_token(address: Address, token: str | None) -> str | None:
    """The token the server requires (None: none), refusing an open address without one."""
    token = (token or "").strip() or None
    if token is not None and len(token) < MIN_TOKEN_CHARS:
        raise UsageError(f"${TOKEN_VARIABLE} is too short: at least {MIN_TOKEN_CHARS} characters")
    if token is None and not address.loopback:
        raise UsageError(
            f"--http {address.host}: an address other machines can reach needs a bearer "
            f"token: set ${TOKEN_VARIABLE} (e.g. `export {TOKEN_VARIABLE}=$(openssl rand "
            "-hex 32)`), or listen on 127.0.0.1"
        )
    return token


def require_bearer(app: App, token: str) -> App:
    """`app` behind `Authorization: Bearer <token>` (compared in constant time)."""
    expected = f"Bearer {token}".encode()

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or ()).get(b"authorization", b"")
            if not hmac.compare_digest(given, expected):
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"text/plain; charset=utf-8"),
                            (b"www-authenticate", b'Bearer realm="mdchunks"'),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": b"a bearer token is required\n"})
                return
        await app(scope, receive, send)

    return guarded


def run_stdio(server: Any) -> None:
    server.run("stdio")


def run_http(server: Any, address: Address, token: str | None) -> None:
    import anyio
    import uvicorn

    app: App = server.streamable_http_app(host=address.host)
    if token is not None:
        app = require_bearer(app, token)
    config = uvicorn.Config(
        app, host=address.host, port=address.port, log_level="warning", lifespan="on"
    )
    anyio.run(uvicorn.Server(config).serve)
