"""A small asyncio HTTP/1.1 client for one thing: POST a JSON body and read the Server-Sent Events that an
OpenAI-compatible server streams back, stamping each event with the time it arrived.

The standard library only (no runtime dependency for one command): one connection per request, as vLLM's
benchmark_serving opens one aiohttp session per request; `Connection: close`; chunked or length-delimited
bodies; http and https. Every failure is an `EndpointError` with one line saying what went wrong and where."""

from __future__ import annotations

import asyncio
import json
import ssl
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

MAX_HEADER_BYTES = 64 * 1024  # a status line and headers longer than this are not an API server's
MAX_ERROR_BODY = 300  # characters of a failed response's body shown in the one-line error


class EndpointError(Exception):
    """The endpoint could not be reached or answered wrongly; the message is one line."""


@dataclass(frozen=True)
class Endpoint:
    """Where the server is: scheme, host, port and the API's base path (without a trailing slash)."""

    scheme: str
    host: str
    port: int
    base_path: str

    @property
    def origin(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}"

    def url(self, path: str) -> str:
        return f"{self.origin}{self.base_path}{path}"

    @property
    def root_path(self) -> str:
        """The server's own prefix (before '/v1'): where engines put their tokenizer endpoints."""
        return self.base_path.removesuffix("/v1")


def parse_endpoint(url: str) -> Endpoint:
    """'http://host:8000', 'http://host:8000/v1' or '.../v1/completions' -> the endpoint with base path '/v1'
    (or the URL's own prefix before '/v1'); ValueError on anything that is not an http(s) URL."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http(s) URL: {url!r} (e.g. http://127.0.0.1:8000)")
    if parts.query or parts.fragment:
        raise ValueError(f"{url!r}: give the server's address without a query or fragment")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise ValueError(f"{url!r}: the port is not a number from 1 to 65535") from None
    path = parts.path.rstrip("/")
    for tail in ("/completions", "/chat/completions", "/models"):
        if path.endswith("/v1" + tail):
            path = path[: -len(tail)]
    if not path.endswith("/v1"):
        path += "/v1"
    return Endpoint(parts.scheme, parts.hostname, port, path)


@dataclass
class Response:
    status: int
    reason: str
    headers: dict[str, str]
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter

    def close(self) -> None:
        self.writer.close()


async def _open(ep: Endpoint, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> Response:
    context = ssl.create_default_context() if ep.scheme == "https" else None
    try:
        reader, writer = await asyncio.open_connection(ep.host, ep.port, ssl=context, limit=MAX_HEADER_BYTES)
    except (OSError, ssl.SSLError) as e:
        raise EndpointError(f"cannot connect to {ep.origin}: {_reason(e)}") from None
    lines = [f"{method} {path} HTTP/1.1", f"Host: {ep.host}:{ep.port}", "Connection: close",
             *(f"{k}: {v}" for k, v in headers.items())]
    if body is not None:
        lines.append(f"Content-Length: {len(body)}")
    try:
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (body or b""))
        await writer.drain()
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.LimitOverrunError:
        writer.close()
        raise EndpointError(f"{ep.origin}{path}: response headers longer than {MAX_HEADER_BYTES} bytes") from None
    except asyncio.IncompleteReadError:
        writer.close()
        raise EndpointError(f"{ep.origin}{path}: the server closed the connection before answering") from None
    except (OSError, ssl.SSLError) as e:
        writer.close()
        raise EndpointError(f"{ep.origin}{path}: {_reason(e)}") from None
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    try:
        version, code, *reason = status_line.split(" ", 2)
        status = int(code)
        if not version.startswith("HTTP/"):
            raise ValueError
    except ValueError:
        writer.close()
        raise EndpointError(f"{ep.origin}{path}: not an HTTP response ({status_line[:60]!r})") from None
    fields = {}
    for line in header_lines:
        if ":" in line:
            k, v = line.split(":", 1)
            fields[k.strip().lower()] = v.strip()
    return Response(status, reason[0] if reason else "", fields, reader, writer)


def _reason(e: BaseException) -> str:
    text = getattr(e, "strerror", None) or str(e) or type(e).__name__
    return " ".join(str(text).split())


async def _body(resp: Response) -> AsyncIterator[bytes]:
    """The response body as it arrives: de-chunked where Transfer-Encoding is chunked, else up to Content-Length,
    else until the server closes the connection."""
    r = resp.reader
    if "chunked" in resp.headers.get("transfer-encoding", "").lower():
        while True:
            size_line = await r.readline()
            if not size_line:
                raise asyncio.IncompleteReadError(b"", None)
            size = int(size_line.split(b";", 1)[0].strip() or b"0", 16)
            if size == 0:
                return
            yield await r.readexactly(size)
            await r.readexactly(2)  # the CRLF after each chunk
    elif "content-length" in resp.headers:
        left = int(resp.headers["content-length"])
        while left > 0:
            data = await r.read(min(left, 65536))
            if not data:
                raise asyncio.IncompleteReadError(b"", left)
            left -= len(data)
            yield data
    else:
        while data := await r.read(65536):
            yield data


async def _read_all(resp: Response, limit: int = 4 * 2**20) -> bytes:
    out = bytearray()
    async for data in _body(resp):
        out += data
        if len(out) > limit:
            break
    return bytes(out)


def _headers(api_key: str | None, accept: str) -> dict[str, str]:
    h = {"Accept": accept, "User-Agent": "gpuadvisor-serve-check"}
    if api_key:
        h["Authorization"] = f"Bearer {api_key}"
    return h


def _failed(url: str, status: int, reason: str, body: bytes) -> EndpointError:
    text = body.decode("utf-8", "replace")
    try:  # OpenAI-style {"error": {"message": ...}} or {"detail": ...}
        data = json.loads(text)
        err = data.get("error") if isinstance(data, dict) else None
        text = str((err.get("message") if isinstance(err, dict) else err) or data.get("detail") or text)
    except (ValueError, AttributeError):
        pass
    text = " ".join(text.split())[:MAX_ERROR_BODY]
    return EndpointError(f"{url} answered HTTP {status} {reason}".rstrip() + (f": {text}" if text else ""))


async def request_json(ep: Endpoint, path: str, payload: dict[str, Any] | None = None, *,
                       api_key: str | None = None, timeout_s: float = 10.0, at_root: bool = False) -> Any:
    """GET (no payload) or POST a JSON document and read the JSON answer; `path` is under the API's base ('/v1'),
    or under the server's root with `at_root`."""
    full = (ep.root_path if at_root else ep.base_path) + path
    url = ep.origin + full

    async def go() -> Any:
        body = None if payload is None else json.dumps(payload).encode()
        headers = _headers(api_key, "application/json")
        if body is not None:
            headers["Content-Type"] = "application/json"
        resp = await _open(ep, "GET" if body is None else "POST", full, body, headers)
        try:
            answer = await _read_all(resp)
        except (OSError, asyncio.IncompleteReadError, ValueError) as e:
            raise EndpointError(f"{url}: the answer broke off ({_reason(e)})") from None
        finally:
            resp.close()
        if resp.status != 200:
            raise _failed(url, resp.status, resp.reason, answer)
        try:
            return json.loads(answer)
        except ValueError:
            raise EndpointError(f"{url}: the answer is not JSON") from None

    try:
        return await asyncio.wait_for(go(), timeout_s)
    except asyncio.TimeoutError:
        raise EndpointError(f"{url}: no answer within {timeout_s:g} s") from None


async def get_json(ep: Endpoint, path: str, *, api_key: str | None = None, timeout_s: float = 10.0) -> Any:
    """GET a JSON document under the API's base (e.g. /models)."""
    return await request_json(ep, path, api_key=api_key, timeout_s=timeout_s)


@dataclass(frozen=True)
class Event:
    """One Server-Sent Event: its `data` parsed as JSON (None for '[DONE]') and when it arrived."""

    arrived: float  # time.perf_counter()
    data: dict[str, Any] | None


async def stream_events(ep: Endpoint, path: str, payload: dict[str, Any], *,
                        api_key: str | None = None) -> AsyncIterator[Event]:
    """POST `payload` and yield each `data:` event as it arrives; the caller bounds the time (asyncio timeouts)."""
    body = json.dumps(payload).encode()
    headers = {**_headers(api_key, "text/event-stream"), "Content-Type": "application/json"}
    resp = await _open(ep, "POST", ep.base_path + path, body, headers)
    try:
        if resp.status != 200:
            try:
                text = await _read_all(resp, 65536)
            except (OSError, asyncio.IncompleteReadError, ValueError):
                text = b""
            raise _failed(ep.url(path), resp.status, resp.reason, text)
        pending = b""
        try:
            async for data in _body(resp):
                arrived = time.perf_counter()
                pending += data
                *lines, pending = pending.split(b"\n")
                for raw in lines:
                    line = raw.strip()
                    if not line.startswith(b"data:"):
                        continue  # blank separators, comments (': ping'), event:/id: fields
                    text = line[5:].strip()
                    if text == b"[DONE]":
                        yield Event(arrived, None)
                        return
                    try:
                        parsed = json.loads(text)
                    except ValueError:
                        raise EndpointError(f"{ep.url(path)}: a streamed event is not JSON: "
                                            f"{text[:80].decode('utf-8', 'replace')!r}") from None
                    if isinstance(parsed, dict) and "error" in parsed and "choices" not in parsed:
                        raise _failed(ep.url(path), 200, "(streamed error)", text)
                    yield Event(arrived, parsed if isinstance(parsed, dict) else {})
        except (OSError, asyncio.IncompleteReadError, ValueError, ssl.SSLError) as e:
            raise EndpointError(f"{ep.url(path)}: the stream broke off ({_reason(e)})") from None
    finally:
        resp.close()
