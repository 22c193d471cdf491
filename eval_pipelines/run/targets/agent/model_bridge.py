"""The one way out of a Claude Code sandbox without network: a Unix socket piped to the model's host.

The sandbox (run/sandbox/) gives the CLI no network namespace of the host, so neither the CLI nor
the commands it runs (a skill's scripts) can reach anything. The CLI still needs its model: it is
pointed at ``ANTHROPIC_UNIX_SOCKET`` (a socket in a folder the sandbox may use) with
``ANTHROPIC_BASE_URL=http://<model host>[:port][/path]``, so the requests it writes carry the real
``Host`` and path (docs/claude-code.md: the CLI then connects to the socket, never resolving the
name). Each connection to the socket is piped to that one host and port, over TLS when the target's
base URL is ``https``. Nothing else is reachable through it.

The key stays outside: the CLI is given a placeholder, and the bridge writes the real key into each
request's ``x-api-key`` header on its way out (reading only the request heads, and the bodies' lengths
to find the next head). So the commands the CLI runs, a skill's scripts among them, cannot read the
operator's key from their environment (nor write it into a file that would be stored); what they can
do is send requests to the model's host through the socket, as the CLI does.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

SOCKET_NAME = "model.sock"
MAX_HEAD_BYTES = 1024 * 1024  # a request head larger than this ends the connection
DEFAULT_BASE_URL = "https://api.anthropic.com"  # the CLI's own default


@dataclass(frozen=True)
class Upstream:
    scheme: str  # http | https
    host: str
    port: int
    # What the CLI is told (plain http: it speaks HTTP to the socket; TLS is the bridge's side).
    cli_base_url: str


def upstream_of(base_url: str | None) -> Upstream:
    """Where the bridge connects for this base URL; ValueError for one that is not http(s)://host."""
    url = (base_url or DEFAULT_BASE_URL).strip()
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"base URL {url!r} is not an http(s) address")
    if parts.username or parts.password:
        raise ValueError("base URL must not hold credentials")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    host = parts.hostname
    shown = f"[{host}]" if ":" in host else host
    # The port is written only when the URL wrote it: the Host header then matches what the server
    # expects for its scheme (the CLI never connects to it: the socket is used).
    netloc = f"{shown}:{parts.port}" if parts.port else shown
    return Upstream(parts.scheme, host, port, f"http://{netloc}{parts.path.rstrip('/')}")


class ModelBridge:
    """``async with ModelBridge(base_url) as bridge``: ``bridge.folder`` (give it to the sandbox as
    writable) holds ``bridge.socket``; ``connections`` and ``failures`` count what went through."""

    def __init__(self, base_url: str | None, api_key: str | None = None) -> None:
        self.upstream = upstream_of(base_url)
        # Written into every request (None: the requests go as the CLI wrote them, placeholder key and all).
        self._api_key = api_key.encode("latin-1") if api_key else None
        self.folder = Path(tempfile.mkdtemp(prefix="eval-cc-bridge-")).resolve()
        self.socket = self.folder / SOCKET_NAME
        self.connections = 0
        self.failures: list[str] = []
        self._server: asyncio.base_events.Server | None = None
        self._tasks: set[asyncio.Task] = set()

    async def __aenter__(self) -> "ModelBridge":
        try:
            self._server = await asyncio.start_unix_server(self._serve, path=str(self.socket), limit=MAX_HEAD_BYTES)
        except OSError:
            shutil.rmtree(self.folder, ignore_errors=True)
            raise
        # The sandbox may run as a uid of its own: connecting needs write permission on the socket
        # (the folder is made group-accessible to that uid by the sandbox, as a writable folder).
        os.chmod(self.socket, 0o770)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        for task in list(self._tasks):
            task.cancel()
        shutil.rmtree(self.folder, ignore_errors=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        up = self.upstream
        try:
            context = ssl.create_default_context() if up.scheme == "https" else None
            up_reader, up_writer = await asyncio.open_connection(
                up.host, up.port, ssl=context, server_hostname=up.host if context else None)
        except (OSError, ssl.SSLError) as exc:
            self.failures.append(f"cannot connect to {up.host}:{up.port}: {exc.strerror or exc}"
                                 if isinstance(exc, OSError) else f"TLS with {up.host} failed: {exc}")
            writer.close()
            return
        outgoing = _pipe(reader, up_writer) if self._api_key is None else self._requests(reader, up_writer)
        pipes = [asyncio.create_task(outgoing), asyncio.create_task(_pipe(up_reader, writer))]
        self._tasks.update(pipes)
        try:
            # Either side closing ends the exchange: what the other had sent is already written.
            await asyncio.wait(pipes, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in pipes:
                task.cancel()
            self._tasks.difference_update(pipes)
            for w in (writer, up_writer):
                w.close()

    async def _requests(self, reader: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        """HTTP/1.1 requests, one after another on the connection, each with the real key."""
        assert self._api_key is not None
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head[:-4].split(b"\r\n")
                kept, length, chunked = [lines[0]], 0, False
                for line in lines[1:]:
                    name, _, value = line.partition(b":")
                    field = name.strip().lower()
                    if field == b"x-api-key":
                        continue
                    if field == b"content-length":
                        length = int(value.strip())
                    elif field == b"transfer-encoding" and b"chunked" in value.lower():
                        chunked = True
                    kept.append(line)
                kept.append(b"x-api-key: " + self._api_key)
                sink.write(b"\r\n".join(kept) + b"\r\n\r\n")
                if chunked:
                    await _copy_chunked(reader, sink)
                elif length:
                    sink.write(await reader.readexactly(length))
                await sink.drain()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError, OSError, ConnectionError):
            return  # the CLI closed the connection, or sent what is not HTTP: the exchange ends


async def _copy_chunked(reader: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    while True:
        size_line = await reader.readuntil(b"\r\n")
        sink.write(size_line)
        size = int(size_line.split(b";", 1)[0].strip(), 16)
        if size == 0:
            while (trailer := await reader.readuntil(b"\r\n")) != b"\r\n":
                sink.write(trailer)
            sink.write(b"\r\n")
            return
        sink.write(await reader.readexactly(size + 2))


async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    try:
        while data := await source.read(65536):
            sink.write(data)
            await sink.drain()
    except (OSError, ConnectionError):
        pass
