"""A promptfoo provider file (JavaScript or Python) as a judge: run in the sandbox, never in-process.

promptfoo loads an assertion's ``provider: ./customProvider.js`` as a provider object
(src/providers: a JavaScript class constructed with ``{id, config}``; a Python file with
``call_api(prompt, options, context)`` / ``call_embedding_api(prompt, options, context)``)
and grades through it: ``callEmbeddingApi(text)`` for each text of a similarity check
(``matchesSimilarity``: the reference, then the output), ``callApi(prompt)`` for a judge.
Here each grade runs the file once in the sandbox (an empty directory holding only the
file, no secrets in the environment, no network, 30 s, 1 GB); the calls it makes are
answered from what it prints. A reply with ``error``, no ``embedding`` / ``output``, a
crash or a timeout makes the grade an ``error`` with the reason.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eval_pipelines.grading.graders.text import parse_json_output
from eval_pipelines.run.sandbox.script_runner import MARK, node_runner, python_runner, read_answer

if TYPE_CHECKING:
    from eval_pipelines.grading.judge import JudgeReply

TIMEOUT_S = 30.0
MEMORY_MB = 1024

JS_RUNNER = node_runner("""
    let Provider = mod.default ?? mod;
    if (Provider && typeof Provider !== 'function' && typeof Provider.default === 'function') Provider = Provider.default;
    const provider = typeof Provider === 'function' ? new Provider({id: req.id, config: {}}) : Provider;
    const method = req.kind === 'embedding' ? 'callEmbeddingApi' : 'callApi';
    if (!provider || typeof provider[method] !== 'function') throw new Error(`the provider has no ${method}`);
    const replies = [];
    for (const text of req.texts) replies.push(await provider[method](text));
    answer({replies});
""")
PY_RUNNER = python_runner("""
    name = "call_embedding_api" if req["kind"] == "embedding" else "call_api"
    fn = getattr(mod, name, None)
    if fn is None:
        sys.stderr.write("the provider has no %s" % name)
        sys.exit(3)
    n = len(inspect.signature(fn).parameters)
    answer({"replies": [fn(*[text, {"config": {}}, {"vars": {}}][:max(1, n)]) for text in req["texts"]]})
""")


class ScriptProviderJudge:
    """The ``Judge`` protocol over a provider file: ``embed`` and ``complete_json``."""

    embeddings_configured = True  # semantic_sim embeds through it, never with the local model
    embedding_model = None

    def __init__(self, file: Path, ref: str) -> None:
        self.file = file
        self.model = ref  # what grade details show as the judge model

    def _run(self, kind: str, texts: list[str]) -> list[dict[str, Any]]:
        from eval_pipelines.grading.judge import JudgeError  # imports openai: only when graded
        from eval_pipelines.run.sandbox.runner import run_sandboxed

        try:
            source = self.file.read_bytes()
        except OSError as exc:
            raise JudgeError(f"provider file {self.model}: {exc.strerror or exc}") from None
        python = self.file.suffix.lower() == ".py"
        request = {"file": self.file.name, "id": self.model, "kind": kind, "texts": texts, "mark": MARK}
        result = run_sandboxed(["python", "-c", PY_RUNNER] if python else ["node", "-e", JS_RUNNER],
                               stdin=json.dumps(request).encode(), timeout_s=TIMEOUT_S, memory_mb=MEMORY_MB,
                               files={self.file.name: source})
        answer = read_answer(result.stdout.decode(errors="replace"))
        if answer is None or not isinstance(answer.get("replies"), list):
            lines = result.stderr.decode(errors="replace").strip().splitlines()
            why = result.error or ("timed out" if result.timed_out else
                                   lines[-1] if lines else f"exit code {result.returncode}")
            raise JudgeError(f"provider {self.model} failed: {why}")
        replies = answer["replies"]
        for reply in replies:
            if not isinstance(reply, dict):
                raise JudgeError(f"provider {self.model} returned {type(reply).__name__}, expected an object")
            if reply.get("error"):
                raise JudgeError(f"provider {self.model}: {reply['error']}")
        return replies

    async def embed(self, texts: list[str], model: str | None = None) -> list[list[float]]:
        from eval_pipelines.grading.judge import JudgeError

        replies = await asyncio.to_thread(self._run, "embedding", texts)
        vectors = [r.get("embedding") for r in replies]
        if not all(isinstance(v, list) and v for v in vectors):
            raise JudgeError(f"provider {self.model} returned no `embedding`")
        return vectors  # type: ignore[return-value]

    async def complete_json(self, system: str, user: str, *, temperature: float | None = None,
                            max_attempts: int = 3) -> "JudgeReply":
        from eval_pipelines.grading.judge import JudgeError, JudgeReply

        started = time.perf_counter()
        (reply,) = await asyncio.to_thread(self._run, "text", [f"{system}\n\n{user}"])
        text = reply.get("output")
        text = text if isinstance(text, str) else json.dumps(text)
        try:
            data = parse_json_output(text, allow_fence=True)
        except ValueError as exc:
            raise JudgeError(f"provider {self.model} did not answer with JSON: {exc}") from None
        if not isinstance(data, dict):
            raise JudgeError(f"provider {self.model} answered {type(data).__name__}, expected a JSON object")
        return JudgeReply(data, text, 1, (time.perf_counter() - started) * 1000, None)

    async def aclose(self) -> None:
        return None
