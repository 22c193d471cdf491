"""promptfoo's `delay` (src/evaluator.ts runEval: after a response not from the cache it sleeps
`provider.delay ?? evaluateOptions.delay` ms; src/commands/eval.ts: a delay runs at concurrency 1).
Counted, not timed: the pauses are recorded, and the one wall-clock check is a lower bound."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from eval_pipelines.run import engine
from eval_pipelines.run.engine import collect_outputs
from eval_pipelines.run.targets.base import ModelOutput, TargetRequest
from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.formats.loader import load_suite
from eval_pipelines.suite.models import Execution, Message, Settings, Suite, TestCase
from tests.support.fake_openai import FakeOpenAIServer

pytestmark = pytest.mark.timeout(120)


def _load(tmp_path: Path, text: str):
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(text)
    return load_suite(config)


def test_evaluate_options_delay_pauses_every_target_and_runs_one_call_at_a_time(tmp_path: Path) -> None:
    suite, warnings = _load(tmp_path, "prompts: ['{{ q }}']\nproviders: [echo]\n"
                                      "evaluateOptions: {delay: 250, maxConcurrency: 4}\ntests: [{vars: {q: x}}]\n")
    assert suite.settings.delay_ms == 250 and suite.settings.max_concurrency == 1
    assert any("maxConcurrency 4: a delay runs one call at a time" in w for w in warnings)


def test_a_provider_delay_is_its_own_and_a_bad_one_is_one_line(tmp_path: Path) -> None:
    suite, _ = _load(tmp_path, "prompts: ['{{ q }}']\nproviders: [{id: echo, label: slow, delay: 300}, "
                               "{id: 'openai:chat:m'}]\ntests: [{vars: {q: x}}]\n")
    assert suite.settings.target_delay_ms == {"slow": 300} and suite.settings.delay_ms is None
    with pytest.raises(SpecErrors) as caught:
        _load(tmp_path, "prompts: ['{{ q }}']\nproviders: [{id: echo, delay: soon}]\ntests: [{vars: {q: x}}]\n")
    assert "providers[0].delay: invalid delay 'soon'" in str(caught.value).splitlines()[0]


class _PartlyCached:
    """Answers every request; the answer to test `b` comes "from the cache"."""

    concurrency = 2

    def __init__(self, name: str) -> None:
        self.name = name

    async def generate(self, request: TargetRequest) -> ModelOutput:
        return ModelOutput(request.test_id, self.name, request.trial, "ok", cached=request.test_id == "b")

    async def aclose(self) -> None:
        return None


def test_the_pause_follows_each_call_the_cache_did_not_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    pauses: list[float] = []
    real_sleep = asyncio.sleep

    async def recording_sleep(seconds: float, *args: object) -> None:
        pauses.append(seconds)
        await real_sleep(0)

    monkeypatch.setattr(engine.asyncio, "sleep", recording_sleep)
    suite = Suite(name="s", format="eval-yaml", source_file="eval.yaml",
                  tests=[TestCase(id=i, input=[Message(content=i)]) for i in ("a", "b", "c")],
                  execution=Execution(targets=["slow", "fast"]), settings=Settings())
    targets = {"slow": _PartlyCached("slow"), "fast": _PartlyCached("fast")}
    outputs = asyncio.run(collect_outputs(suite, targets, delays={"slow": 0.4}))
    assert len(outputs) == 6
    assert pauses.count(0.4) == 2  # slow: a and c; b came from the cache; fast has no delay
    assert all(p in (0, 0.4) for p in pauses)


def test_a_run_with_evaluate_options_delay_calls_the_model_one_at_a_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from eval_pipelines.cli import main

    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "promptfooconfig.yaml").write_text(
        "prompts: ['Say {{ q }}']\nproviders: ['openai:chat:fake-model']\n"
        "evaluateOptions: {delay: 150, maxConcurrency: 4, cache: false}\n"
        "tests: [{vars: {q: a}}, {vars: {q: b}}, {vars: {q: c}}, {vars: {q: d}}]\n")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.chdir(tmp_path)
    with FakeOpenAIServer(latency_s=0.05) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        started = time.monotonic()
        main(["--root", str(tmp_path), "run", str(folder / "promptfooconfig.yaml"), "--db", str(tmp_path / "r.duckdb")])
        elapsed = time.monotonic() - started
        assert server.request_count == 4
        assert server.max_in_flight == 1  # maxConcurrency 4 gave way to the delay
    assert elapsed >= 4 * 0.15  # a lower bound only: each call is followed by its pause
    capsys.readouterr()


def test_eval_yaml_settings_delay_ms_and_target_delay_ms_reach_the_engine(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from eval_pipelines.run.engine import run_model_phase
    from eval_pipelines.run.targets.config import CommandTargetConfig

    pauses: list[float] = []
    real_sleep = asyncio.sleep

    async def recording_sleep(seconds: float, *args: object) -> None:
        pauses.append(seconds)
        await real_sleep(0)

    (tmp_path / "eval.yaml").write_text(
        "name: delays\nexecution: {targets: [plain, quick]}\n"
        "settings: {delay_ms: 300, target_delay_ms: {quick: 0}}\n"
        "tests:\n  - {id: one, input: hello}\n  - {id: two, input: world}\n")
    suite, _ = load_suite(tmp_path / "eval.yaml")
    assert suite.settings.delay_ms == 300 and suite.settings.target_delay_ms == {"quick": 0}
    configs = {n: CommandTargetConfig(name=n, command=["cat"]) for n in ("plain", "quick")}
    monkeypatch.setattr(engine.asyncio, "sleep", recording_sleep)
    outputs = asyncio.run(run_model_phase(suite, configs, tmp_path, {}))
    assert sorted((o.target, o.output) for o in outputs) == [
        ("plain", "hello"), ("plain", "world"), ("quick", "hello"), ("quick", "world")]
    assert pauses.count(0.3) == 2  # plain's two calls; quick's own 0 wins over the suite's 300
