"""A fast OpenAI-compatible chat server for benchmarks, with configurable latency.

    python -m benchmarks.server --port 8911 --latency-ms 50

It answers ``POST /v1/chat/completions`` with ``"ok " + <last word of the last
user message>`` after sleeping ``latency_ms`` (asyncio, so thousands of requests
wait at once), and counts requests. ``GET /stats`` returns the count,
``POST /reset`` zeroes it, ``POST /config`` sets ``{"latency_ms": ...}`` and/or
``{"tool_plan": [{"name": ..., "arguments": {...}}, ...]}``: a request that offers
``tools`` (an agent's turn) is then answered with the plan's next tool call (the
k-th after k earlier tool-call turns in its messages), and with the usual text
once the plan is done (benchmarks/agent.py).

It runs in its own process on uvloop when available, so it does not share a GIL
with the client under test; ``measure_ceiling`` tells how many requests per
second it serves on this machine, which must be far above what a benchmark
asks of it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

MODEL = "bench-model"


def answer_for(messages: list[dict]) -> str:
    """The deterministic answer every tool gets for the same prompt."""
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):  # content parts
                content = " ".join(p.get("text", "") for p in content if isinstance(p, dict))
            words = str(content or "").split()
            return "ok " + (words[-1] if words else "")
    return "ok"


def build_app(latency_ms: float) -> web.Application:
    state = {"latency_s": latency_ms / 1000.0, "requests": 0, "created": int(time.time()), "tool_plan": []}

    async def chat(request: web.Request) -> web.Response:
        state["requests"] += 1
        body = json.loads(await request.read())
        messages = body.get("messages") or []
        message, finish = {"role": "assistant", "content": answer_for(messages)}, "stop"
        if body.get("tools"):
            done = sum(1 for m in messages if m.get("role") == "assistant" and m.get("tool_calls"))
            if done < len(state["tool_plan"]):
                call = state["tool_plan"][done]
                message = {"role": "assistant", "content": None, "tool_calls": [{
                    "id": f"call_{state['requests']}", "type": "function",
                    "function": {"name": call["name"], "arguments": json.dumps(call.get("arguments", {}))}}]}
                finish = "tool_calls"
        if state["latency_s"]:
            await asyncio.sleep(state["latency_s"])
        n = state["requests"]
        payload = {
            "id": f"chatcmpl-{n}", "object": "chat.completion", "created": state["created"],
            "model": body.get("model") or MODEL,
            "choices": [{"index": 0, "finish_reason": finish, "message": message}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15},
        }
        return web.Response(body=json.dumps(payload).encode(), content_type="application/json")

    async def models(_: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": MODEL, "object": "model",
                                                              "created": 0, "owned_by": "bench"}]})

    async def stats(_: web.Request) -> web.Response:
        return web.json_response({"requests": state["requests"], "latency_ms": state["latency_s"] * 1000})

    async def reset(_: web.Request) -> web.Response:
        state["requests"] = 0
        return web.json_response({"requests": 0})

    async def config(request: web.Request) -> web.Response:
        body = await request.json()
        if "latency_ms" in body:
            state["latency_s"] = float(body["latency_ms"]) / 1000.0
        if "tool_plan" in body:
            state["tool_plan"] = list(body["tool_plan"])
        return web.json_response({"latency_ms": state["latency_s"] * 1000, "tool_plan": state["tool_plan"]})

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    app.router.add_post("/chat/completions", chat)
    app.router.add_get("/v1/models", models)
    app.router.add_get("/stats", stats)
    app.router.add_post("/reset", reset)
    app.router.add_post("/config", config)
    return app


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class BenchServer:
    """The server as a child process (start/stop from the benchmark driver)."""

    latency_ms: float = 50.0
    port: int = 0
    process: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> "BenchServer":
        self.port = self.port or free_port()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.server", "--port", str(self.port),
             "--latency-ms", str(self.latency_ms)],
            cwd=Path(__file__).resolve().parent.parent,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                self.requests()
                return self
            except OSError:
                if self.process.poll() is not None:
                    raise RuntimeError(f"bench server exited: {self.process.stderr.read().decode()[-2000:]}")
                time.sleep(0.05)
        raise RuntimeError("bench server did not start within 30 s")

    def _call(self, path: str, body: dict | None = None) -> dict:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data,
                                     method="GET" if body is None else "POST",
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as response:
            return json.loads(response.read())

    def requests(self) -> int:
        return int(self._call("/stats")["requests"])

    def reset(self) -> None:
        self._call("/reset", {})

    def set_latency(self, latency_ms: float) -> None:
        self.latency_ms = latency_ms
        self._call("/config", {"latency_ms": latency_ms})

    def set_tool_plan(self, plan: list[dict]) -> None:
        self._call("/config", {"tool_plan": plan})

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()

    def __enter__(self) -> "BenchServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


async def _hammer(base_url: str, total: int, concurrency: int) -> float:
    """Requests/second a bare aiohttp client gets from the server (no openai SDK)."""
    import aiohttp

    body = json.dumps({"model": MODEL, "messages": [{"role": "user", "content": "ceiling c1"}]}).encode()
    sem = asyncio.Semaphore(concurrency)
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:
        async def one() -> None:
            async with sem:
                async with session.post(f"{base_url}/chat/completions", data=body,
                                        headers={"Content-Type": "application/json"}) as response:
                    await response.read()

        started = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(total)))
        return total / (time.perf_counter() - started)


def measure_ceiling(server: BenchServer, total: int = 5000, concurrency: int = 64) -> float:
    """The server's throughput at zero latency, driven by a load generator in
    another process (so the client's own CPU does not share the server's core)."""
    previous = server.latency_ms
    server.set_latency(0)
    try:
        out = subprocess.run(
            [sys.executable, "-c",
             "import asyncio, sys; from benchmarks.server import _hammer; "
             f"print(asyncio.run(_hammer({server.base_url!r}, {total}, {concurrency})))"],
            cwd=Path(__file__).resolve().parent.parent, capture_output=True, text=True, check=True)
        return float(out.stdout.strip().splitlines()[-1])
    finally:
        server.set_latency(previous)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8911)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    args = parser.parse_args()
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    web.run_app(build_app(args.latency_ms), host="127.0.0.1", port=args.port, print=None,
                access_log=None, backlog=4096)


if __name__ == "__main__":
    main()
