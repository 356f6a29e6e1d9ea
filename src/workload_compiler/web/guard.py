"""The door of the server, as ASGI middleware in front of the app: the access token (when one is
set), a per-client rate limit (token bucket) and a cap on the request body. Each refusal is a
short page or JSON naming what was refused, never a stack trace."""

from __future__ import annotations

import hmac
import json
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from html import escape
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs, urlencode

from .settings import Settings

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

TOKEN_COOKIE = "wkc_token"
OPEN_PATHS = ("/healthz",)


def wants_json(scope: Scope) -> bool:
    headers = dict(scope.get("headers") or [])
    accept = headers.get(b"accept", b"").decode("latin-1")
    return str(scope.get("path", "")).startswith("/api") or "text/html" not in accept


async def refuse(scope: Scope, send: Send, status: int, field: str, message: str,
                 extra_headers: list[tuple[bytes, bytes]] | None = None) -> None:
    if wants_json(scope):
        body = json.dumps({"error": {"status": status, "field": field, "message": message}}).encode()
        ctype = b"application/json"
    else:
        body = (f"<!DOCTYPE html><html lang=en><meta charset=utf-8><title>{status}</title>"
                f"<body style='font-family:sans-serif;max-width:40em;margin:4em auto'><h1>{status}</h1>"
                f"<p data-testid=error-field><b>{escape(field)}</b>: {escape(message)}</p>"
                f"<p><a href='/'>Back to the workbench</a></p></body></html>").encode()
        ctype = b"text/html; charset=utf-8"
    headers = [(b"content-type", ctype), (b"content-length", str(len(body)).encode()), *(extra_headers or [])]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _same_origin(scope: Scope) -> bool:
    """True unless the browser says the request comes from a page of another origin (Origin header)."""
    headers: dict[bytes, bytes] = dict(scope.get("headers") or [])
    origin = headers.get(b"origin")
    if origin is None:
        return True
    host = headers.get(b"host", b"").decode("latin-1")
    netloc = origin.decode("latin-1").split("://", 1)[-1]
    return bool(netloc == host)


class TokenBuckets:
    """`rate` requests a minute per client, bursts of `burst`; state kept for the clients seen."""

    def __init__(self, rate_per_minute: int, burst: int) -> None:
        self.rate = rate_per_minute / 60.0
        self.burst = float(max(burst, 1))
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def take(self, client: str, now: float | None = None) -> float:
        """0 when the request may go; else the seconds to wait."""
        t = time.monotonic() if now is None else now
        with self._lock:
            tokens, last = self._buckets.get(client, (self.burst, t))
            tokens = min(self.burst, tokens + (t - last) * self.rate)
            if tokens >= 1.0:
                self._buckets[client] = (tokens - 1.0, t)
                return 0.0
            self._buckets[client] = (tokens, t)
            return (1.0 - tokens) / self.rate


class Guard:
    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.settings = settings
        self.buckets = TokenBuckets(settings.rate_per_minute, settings.rate_burst) if settings.rate_per_minute else None

    def _token_ok(self, scope: Scope) -> tuple[bool, bool]:
        """(allowed, came in the query string) for the request's token."""
        expected = self.settings.token
        if not expected:
            return True, False
        headers = dict(scope.get("headers") or [])
        candidates = []
        auth = headers.get(b"authorization", b"").decode("latin-1")
        if auth.lower().startswith("bearer "):
            candidates.append(auth[7:].strip())
        cookie = SimpleCookie(headers.get(b"cookie", b"").decode("latin-1"))
        if TOKEN_COOKIE in cookie:
            candidates.append(cookie[TOKEN_COOKIE].value)
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        from_query = query.get("token", [None])[0]
        ok = any(hmac.compare_digest(c.encode(), expected.encode()) for c in candidates)
        if not ok and from_query and hmac.compare_digest(from_query.encode(), expected.encode()):
            return True, True
        return ok, False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = str(scope.get("path", ""))
        if scope.get("method") not in ("GET", "HEAD", "OPTIONS") and not _same_origin(scope):
            # a page on another site posting to this server (it runs on the user's machine) is refused
            await refuse(scope, send, 403, "origin", "a request from another site's page; use the workbench itself")
            return
        if path not in OPEN_PATHS:
            allowed, via_query = self._token_ok(scope)
            if not allowed:
                await refuse(scope, send, 401, "token", "this server needs its access token: open the URL printed "
                                                        "at start, or send 'Authorization: Bearer TOKEN'")
                return
            if via_query:  # keep the token in a cookie, out of the address bar and the history
                query = {k: v for k, v in parse_qs(scope.get("query_string", b"").decode()).items() if k != "token"}
                location = path + ("?" + urlencode(query, doseq=True) if query else "")
                cookie = f"{TOKEN_COOKIE}={self.settings.token}; HttpOnly; SameSite=Strict; Path=/"
                await send({"type": "http.response.start", "status": 303,
                            "headers": [(b"location", location.encode()), (b"set-cookie", cookie.encode()),
                                        (b"content-length", b"0")]})
                await send({"type": "http.response.body", "body": b""})
                return
        if self.buckets is not None:
            client = (scope.get("client") or ("?", 0))[0]
            wait = self.buckets.take(str(client))
            if wait > 0:
                await refuse(scope, send, 429, "rate", f"too many requests from {client}: "
                                                       f"{self.settings.rate_per_minute} a minute; retry in "
                                                       f"{wait:.1f} s", [(b"retry-after", str(int(wait) + 1).encode())])
                return
        await self._with_body_cap(scope, receive, send)

    async def _with_body_cap(self, scope: Scope, receive: Receive, send: Send) -> None:
        limit = self.settings.max_body_bytes
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length")
        too_big = f"the request body is over the limit of {limit:,} bytes"
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await refuse(scope, send, 413, "body", too_big)
            return
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                await refuse(scope, send, 413, "body", too_big)
                return
            chunks.append(chunk)
            more = bool(message.get("more_body"))
        body = b"".join(chunks)
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        started = time.perf_counter()

        async def timed(message: Message) -> None:
            if message["type"] == "http.response.start":  # the server's own time, for benchmarks/bench_web.py
                elapsed_ms = (time.perf_counter() - started) * 1e3
                message = {**message, "headers": [*message.get("headers", []),
                                                  (b"server-timing", f"app;dur={elapsed_ms:.2f}".encode())]}
            await send(message)

        await self.app(scope, replay, timed)


__all__ = ["TOKEN_COOKIE", "Guard", "TokenBuckets", "refuse", "wants_json"]
