"""The run engine with real subprocesses (command target) and recordings (replay target)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from eval_pipelines.grading.scoring import grade_outputs
from eval_pipelines.run.engine import collect_outputs, run_model_phase
from eval_pipelines.suite.models import Assertion, Execution, Message, Settings, Suite, TestCase, Trials
from eval_pipelines.run.targets.base import ModelOutput, TargetRequest
from eval_pipelines.run.targets.config import CommandTargetConfig, ReplayTargetConfig

pytestmark = pytest.mark.timeout(60)

# A tiny "skill program": input on stdin, answer on stdout.
SKILL_SCRIPT = r'''
import os, subprocess, sys, time
text = sys.stdin.read()
if text.startswith("fail"):
    sys.stderr.write("noise\n" * 200 + "fatal: cannot compute " + text + "\n")
    sys.exit(3)
if text.startswith("sleep"):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "sleeper-" + text.split()[-1]])
    time.sleep(60)
if text.startswith("env"):
    print("cwd=" + ",".join(sorted(os.listdir("."))))
    print("secret=" + os.environ.get("EVAL_TEST_API_KEY", "<absent>"))
    print("plain=" + os.environ.get("EVAL_TEST_PLAIN", "<absent>"))
    sys.exit(0)
if text.startswith("add "):
    a, b = text[4:].split("+")
    print(int(a) + int(b))
    sys.exit(0)
print("echo: " + text)
'''


@pytest.fixture
def skill_dir(tmp_path: Path) -> Path:
    root = tmp_path / "skillpkg"
    root.mkdir()
    (root / "skill.py").write_text(SKILL_SCRIPT, encoding="utf-8")
    return root


def cmd_config(name: str = "cmd", **kw: object) -> CommandTargetConfig:
    return CommandTargetConfig(name=name, command=["python", "skill.py"], **kw)


def case(test_id: str, text: str, *assertions: Assertion, **kw: object) -> TestCase:
    return TestCase(id=test_id, input=[Message(content=text)], assertions=list(assertions), **kw)


def suite_of(*tests: TestCase, targets: list[str], trials: int = 1, settings: Settings | None = None) -> Suite:
    return Suite(name="s", format="eval-yaml", source_file="eval.yaml", tests=list(tests),
                 execution=Execution(targets=targets, trials=Trials(count=trials)),
                 settings=settings or Settings())


def run(suite: Suite, configs: dict, base_dir: Path) -> list[ModelOutput]:
    return asyncio.run(run_model_phase(suite, configs, base_dir, {}))


def contains(value: str, **kw: object) -> Assertion:
    return Assertion(type="contains", config={"value": value}, **kw)


def equals(value: str) -> Assertion:
    return Assertion(type="equals", config={"value": value})


# ---- command target --------------------------------------------------------------

def test_command_target_outputs_are_graded(skill_dir: Path) -> None:
    suite = suite_of(
        case("add", "add 2+2", equals("4")),
        case("wrong", "add 2+3", equals("4")),
        case("echo", "hello", contains("echo: hello"), contains("nope", weight=3)),
        targets=["cmd"],
    )
    outputs = run(suite, {"cmd": cmd_config()}, skill_dir)
    by_id = {o.test_id: o for o in outputs}
    assert by_id["add"].output == "4" and by_id["add"].error is None
    assert by_id["add"].latency_ms is not None and by_id["add"].latency_ms > 0
    assert by_id["echo"].output == "echo: hello"
    graded = {g.output.test_id: g for g in grade_outputs(suite, outputs, skill_dir)}
    assert (graded["add"].result.verdict, graded["add"].result.score) == ("pass", 1.0)
    assert (graded["wrong"].result.verdict, graded["wrong"].result.score) == ("fail", 0.0)
    assert graded["echo"].result.score == pytest.approx(0.25)
    assert [g.passed for g in graded["echo"].grades] == [True, False]


def test_command_nonzero_exit_is_an_error_with_stderr_tail(skill_dir: Path) -> None:
    suite = suite_of(case("f", "fail now", contains("x")), targets=["cmd"])
    (out,) = run(suite, {"cmd": cmd_config()}, skill_dir)
    assert out.output is None
    assert out.error is not None and out.error.startswith("command exited with 3: ")
    assert out.error.endswith("fatal: cannot compute fail now")
    assert len(out.error) < 600  # a tail, not the whole stderr
    (graded,) = grade_outputs(suite, [out])
    assert (graded.result.status, graded.result.verdict, graded.result.score) == ("error", "fail", 0.0)
    assert graded.grades == []


def _alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie waiting for its reaper."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return state not in ("Z", "X")


def test_command_timeout_is_an_error_and_kills_the_process_group(skill_dir: Path) -> None:
    marker = f"m{os.getpid()}x{time.time_ns()}"
    suite = suite_of(case("slow", f"sleep please {marker}", contains("x"), timeout_ms=1500), targets=["cmd"])
    started = time.monotonic()
    (out,) = run(suite, {"cmd": cmd_config(timeout_s=30)}, skill_dir)
    elapsed = time.monotonic() - started
    assert out.output is None and out.error == "command timed out after 1.5 s"
    assert elapsed < 25  # the 1.5 s timeout, not the 30 s target default
    # The program and its child (its command line carries the marker) are gone.
    survivors = [p for p in Path("/proc").iterdir() if p.name.isdigit() and _cmdline_has(p, f"sleeper-{marker}")]
    assert survivors == [], "the command's child survived the timeout"


def _cmdline_has(proc: Path, marker: str) -> bool:
    try:
        return marker.encode() in (proc / "cmdline").read_bytes() and _alive(int(proc.name))
    except OSError:
        return False


def test_command_target_config_timeout_applies(skill_dir: Path) -> None:
    suite = suite_of(case("slow", "sleep", timeout_ms=60_000), targets=["cmd"])
    (out,) = run(suite, {"cmd": cmd_config(timeout_s=1.0)}, skill_dir)
    assert out.error == "command timed out after 1 s"


def test_command_runs_in_a_copy_of_the_package_without_the_callers_environment(
        skill_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A skill program is untrusted: sandboxed, in a copy of its package, none of the caller's variables."""
    monkeypatch.setenv("EVAL_TEST_API_KEY", "sk-should-not-leak")
    monkeypatch.setenv("EVAL_TEST_PLAIN", "visible")
    (out,) = run(suite_of(case("e", "env"), targets=["cmd"]), {"cmd": cmd_config()}, skill_dir)
    assert out.output == "cwd=skill.py\nsecret=<absent>\nplain=<absent>"


def test_command_that_cannot_start(tmp_path: Path) -> None:
    config = CommandTargetConfig(name="cmd", command=["/nonexistent/program-xyz"])
    (out,) = run(suite_of(case("a", "x"), targets=["cmd"]), {"cmd": config}, tmp_path)
    assert out.output is None and out.error is not None and out.error.startswith("cannot start")


def test_fail_fast_stops_later_cases(skill_dir: Path) -> None:
    settings = Settings(fail_fast=True, max_concurrency=1)
    suite = suite_of(case("ok-first", "hello"), case("boom", "fail"), case("later-1", "hello"),
                     case("later-2", "add 1+1"), targets=["cmd"], settings=settings)
    outputs = run(suite, {"cmd": cmd_config()}, skill_dir)
    by_id = {o.test_id: o for o in outputs}
    assert len(outputs) == 4
    assert by_id["ok-first"].output == "echo: hello"
    assert by_id["boom"].error is not None and by_id["boom"].error.startswith("command exited with 3")
    for later in ("later-1", "later-2"):
        assert by_id[later].output is None
        assert by_id[later].error is not None and by_id[later].error.startswith("not run: failFast")
        assert by_id[later].attempts == 0


def test_without_fail_fast_every_case_runs(skill_dir: Path) -> None:
    suite = suite_of(case("boom", "fail"), case("later", "hello"), targets=["cmd"],
                     settings=Settings(max_concurrency=1))
    by_id = {o.test_id: o for o in run(suite, {"cmd": cmd_config()}, skill_dir)}
    assert by_id["later"].output == "echo: hello"


# ---- replay target ---------------------------------------------------------------

def test_replay_target_with_csv_recording(tmp_path: Path) -> None:
    (tmp_path / "rec.csv").write_text(
        "test_id,trial,output,latency_ms,prompt_tokens,completion_tokens,cost_usd\n"
        "a,0,DENIED - listed,120.5,10,5,0.001\n"
        "a,1,APPROVED,80,,,\n"
        "b,0,\"multi\nline\",,,,\n",
        encoding="utf-8")
    suite = suite_of(case("a", "Screen Huawei", contains("DENIED")), case("b", "x", contains("line")),
                     targets=["rec"], trials=2)
    outputs = run(suite, {"rec": ReplayTargetConfig(name="rec", path="rec.csv")}, tmp_path)
    by_key = {(o.test_id, o.trial): o for o in outputs}
    assert set(by_key) == {("a", 0), ("a", 1), ("b", 0), ("b", 1)}
    a0 = by_key[("a", 0)]
    assert (a0.output, a0.latency_ms, a0.prompt_tokens, a0.completion_tokens, a0.cost_usd) == \
        ("DENIED - listed", 120.5, 10, 5, 0.001)
    assert by_key[("a", 1)].prompt_tokens is None
    assert by_key[("b", 0)].output == "multi\nline"
    missing = by_key[("b", 1)]
    assert missing.output is None
    assert missing.error == "no recorded output for test 'b' trial 1 in rec.csv"
    results = {(g.output.test_id, g.output.trial): g.result for g in grade_outputs(suite, outputs)}
    assert results[("a", 0)].verdict == "pass"
    assert results[("a", 1)].verdict == "fail" and results[("a", 1)].status == "graded"
    assert results[("b", 1)].status == "error" and results[("b", 1)].verdict == "fail"
    assert "no recorded output" in results[("b", 1)].reason


def test_replay_jsonl_recording_with_error_and_trace(tmp_path: Path) -> None:
    (tmp_path / "rec.jsonl").write_text(
        '{"test_id": "a", "output": "ok", "trace": [{"tool": "search"}, {"tool": "report"}]}\n'
        '{"test_id": "b", "output": null, "error": "rate limited"}\n', encoding="utf-8")
    suite = suite_of(case("a", "x"), case("b", "y"), targets=["rec"])
    by_id = {o.test_id: o for o in run(suite, {"rec": ReplayTargetConfig(name="rec", path="rec.jsonl")}, tmp_path)}
    assert by_id["a"].tool_calls == 2 and by_id["a"].trace[0] == {"tool": "search"}
    assert by_id["b"].error == "rate limited" and by_id["b"].output is None


# ---- fan-out -----------------------------------------------------------------------

def test_every_case_target_trial_yields_exactly_one_output(skill_dir: Path) -> None:
    lines = ["test_id,trial,output"] + [f"{t},{i},rec-{t}-{i}" for t in ("c1", "c2") for i in range(2)]
    (skill_dir / "rec.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    suite = suite_of(
        case("c1", "hello"),
        case("c2", "fail"),  # errors on the command target
        case("c3", "add 1+2", targets=["cmd"]),  # per-test override; no recording needed
        targets=["cmd", "rec"], trials=3,
    )
    configs = {"cmd": cmd_config(concurrency=4), "rec": ReplayTargetConfig(name="rec", path="rec.csv")}
    outputs = run(suite, configs, skill_dir)
    keys = Counter((o.test_id, o.target, o.trial) for o in outputs)
    expected = {(t, tg, i) for t in ("c1", "c2") for tg in ("cmd", "rec") for i in range(3)}
    expected |= {("c3", "cmd", i) for i in range(3)}
    assert set(keys) == expected and all(n == 1 for n in keys.values())
    for o in outputs:
        assert (o.output is None) != (o.error is None), o  # an output or an error, never both/neither
    assert {o.error.split(" for ")[0] for o in outputs if o.target == "rec" and o.error} == {"no recorded output"}
    graded = grade_outputs(suite, outputs)
    assert len(graded) == len(outputs)


class _Exploding:
    name = "boom"
    concurrency = 2

    async def generate(self, request: TargetRequest) -> ModelOutput:
        raise RuntimeError(f"bug on {request.test_id}")

    async def aclose(self) -> None:
        return None


def test_a_target_that_raises_still_yields_an_error_output() -> None:
    suite = suite_of(case("a", "x"), case("b", "y"), targets=["boom"], trials=2)
    seen: list[ModelOutput] = []
    outputs = asyncio.run(collect_outputs(suite, {"boom": _Exploding()}, on_output=seen.append))
    assert len(outputs) == 4 and len(seen) == 4
    assert all(o.error is not None and o.error.startswith("target failed: RuntimeError: bug on") for o in outputs)


def test_core_modules_do_not_import_dagster() -> None:
    code = ("import sys, eval_pipelines.run.engine, eval_pipelines.pipeline.stages, eval_pipelines.formats.loader, "
            "eval_pipelines.store.connection, eval_pipelines.analysis.metrics, eval_pipelines.analysis.gates; "
            "bad = sorted(m for m in sys.modules if m == 'dagster' or m.startswith('dagster.')); "
            "print(bad); sys.exit(1 if bad else 0)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


class _Answering:
    """Answers with the request's messages joined, after a pause, recording what it was sent."""

    concurrency = 4

    def __init__(self, name: str) -> None:
        self.name, self.sent = name, []

    async def generate(self, request: TargetRequest) -> ModelOutput:
        await asyncio.sleep(0.01)
        self.sent.append((request.test_id, request.trial, [m.content for m in request.messages]))
        return ModelOutput(request.test_id, self.name, request.trial, "|".join(m.content for m in request.messages))

    async def aclose(self) -> None:
        return None


@pytest.mark.parametrize("concurrency", [1, 4])
def test_a_conversation_turn_is_sent_with_the_earlier_answers_of_its_target_and_trial(concurrency: int) -> None:
    from eval_pipelines.suite.models import output_mark

    first = case("a", "hi")
    second = TestCase(id="b", input=[Message(content="hi"), Message(role="assistant", content=output_mark("a")),
                                     Message(content="more")], after=["a"])
    # c follows a, which has no third trial and does not run on "other": those answers are "".
    third = TestCase(id="c", input=[Message(content=output_mark("a"))], after=["a"], trials=3)
    suite = suite_of(first, second, third, targets=["t", "other"], trials=2)
    suite.tests[0].targets = ["t"]
    targets = {"t": _Answering("t"), "other": _Answering("other")}
    outputs = asyncio.run(collect_outputs(suite, targets, concurrency=concurrency))
    sent = {(tid, trial): msgs for tid, trial, msgs in targets["t"].sent}
    assert sent[("b", 0)] == ["hi", "hi", "more"] and sent[("b", 1)] == ["hi", "hi", "more"]
    assert [sent[("c", i)] for i in range(3)] == [["hi"], ["hi"], [""]]
    assert {tuple(m) for tid, _, m in targets["other"].sent} == {("hi", "", "more"), ("",)}
    assert len(outputs) == 2 + 4 + 6 and all(o.error is None for o in outputs)
    assert next(o for o in outputs if o.test_id == "b").answers == {"a": "hi"}
