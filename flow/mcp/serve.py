"""The transports of `mdchunks mcp` (docs/mcp.md): stdio (the default: the
client starts the server as its child and talks over its stdin and stdout),
or streamable HTTP on `--http HOST:PORT`.

HTTP listens on loopback unless told otherwise. Another address (reachable
from other machines) is served only with a bearer token, read from the
environment (`MDCHUNKS_MCP_TOKEN`, never from the command line, which other
users of the machine can see); a request without it, or with another, gets
401. On loopback a token is optional and, when set, required alike, and the
SDK's DNS-rebinding guard (Host and Origin headers) is on for every loopback
address (`rebinding_guard`): the SDK turns it on by itself only for the
literal hosts `127.0.0.1`, `localhost` and `::1`, so `127.0.0.2` or
`[0:0:0:0:0:0:0:1]` answered a page whose name resolved there (issue 42).

The listening socket is bound before the server starts, so `:0` is told the
port it got; and a connection that has not sent its request's headers within
`HEADERS_SECONDS` is closed (`_HeadersInTime`: uvicorn times out idle
keep-alive connections only, and any byte received resets that timer).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hmac
import ipaddress
import socket
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

import h11
from mcp.server.transport_security import TransportSecuritySettings
from mdchunks.errors import UsageError
from uvicorn.protocols.http.h11_impl import H11Protocol

TOKEN_VARIABLE = "MDCHUNKS_MCP_TOKEN"
MIN_TOKEN_CHARS = 16
LOOPBACK_NAMES = ("localhost",)
# What a client gets to send its request line and headers: a browser or an
# agent sends them at once; a connection that trickles them ties up a slot.
HEADERS_SECONDS = 10.0
# The names every loopback server answers to besides its own address (the
# SDK's list: a client configured with any of them reaches a loopback server).
_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")

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


def in_url(host: str) -> str:
    """A host as a URL and a Host header write it: an IPv6 address in brackets."""
    return f"[{host}]" if ":" in host else host


def rebinding_guard(address: Address) -> TransportSecuritySettings | None:
    """The SDK's DNS-rebinding guard for a loopback address: Host and Origin
    must name a loopback host (this one, as given and as written canonically,
    or one of the SDK's three), else 421 or 403. None off loopback, where a
    token is required instead (`check_token`): a page cannot know it."""
    if not address.loopback:
        return None
    names = {*_LOOPBACK_HOSTS, in_url(address.host)}
    with contextlib.suppress(ValueError):  # localhost is no address
        names.add(in_url(str(ipaddress.ip_address(address.host))))
    hosts = sorted({*names, *(f"{name}:*" for name in names)})
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=[f"http://{host}" for host in hosts],
    )


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


class _HeadersInTime(H11Protocol):
    """uvicorn's HTTP/1.1 connection, closed when a request's line and headers
    have not all arrived `HEADERS_SECONDS` after the connection opened (or
    after the last response on it). Bytes that trickle in do not move the
    deadline; a request whose headers are in is never cut."""

    _headers_due: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._expect_headers()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:  # the request's headers are in
            self._headers_in()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():  # the next request's headers, in time too
            self._expect_headers()

    def connection_lost(self, exc: Exception | None) -> None:
        self._headers_in()
        super().connection_lost(exc)

    def _expect_headers(self) -> None:
        self._headers_in()
        self._headers_due = self.loop.call_later(HEADERS_SECONDS, self._headers_late)

    def _headers_in(self) -> None:
        if self._headers_due is not None:
            self._headers_due.cancel()
            self._headers_due = None

    def _headers_late(self) -> None:
        self._headers_due = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()


def listening_socket(address: Address) -> socket.socket:
    """A socket bound to `address` (`:0`: a free port, read back from it)."""
    family = socket.AF_INET6 if ":" in address.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((address.host, address.port))
    except OSError as exc:
        sock.close()
        raise UsageError(
            f"--http {in_url(address.host)}:{address.port}: cannot listen there "
            f"({exc.strerror or exc})"
        ) from None
    return sock


def run_http(
    server: Any, address: Address, token: str | None, on_listening: Callable[[str], None]
) -> None:
    """Serve `server` over streamable HTTP on `address`; `on_listening` is
    given the URL (with the port bound) before the first request is taken."""
    import anyio
    import uvicorn

    sock = listening_socket(address)
    port = int(sock.getsockname()[1])
    app: App = server.streamable_http_app(
        host=address.host, transport_security=rebinding_guard(address)
    )
    if token is not None:
        app = require_bearer(app, token)
    config = uvicorn.Config(
        app,
        host=address.host,
        port=port,
        log_level="warning",
        lifespan="on",
        http=_HeadersInTime,
    )
    on_listening(f"http://{in_url(address.host)}:{port}/mcp")
    anyio.run(functools.partial(uvicorn.Server(config).serve, sockets=[sock]))
