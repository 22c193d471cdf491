"""The `claude_code` target kind (issue 31 item 1): its settings, the command line and environment it
builds, the workspace it stages, its error rows, and (slow) one `eval-pipelines run` of a skill package
with the real Claude Code CLI against the Anthropic-Messages test server, read back from DuckDB."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any, Iterator

import pytest

from eval_pipelines.cli import EXIT_OK, main
from eval_pipelines.run.engine import build_target, files_refusal
from eval_pipelines.run.targets.agent.claude_code import (
    CLAUDE_SKILLS_DIR, PLACEHOLDER_KEY, QUIET_ENV, ClaudeCodeTarget, appended_system_prompt, command_line, environment,
)
from eval_pipelines.run.targets.agent.model_bridge import ModelBridge, upstream_of
from eval_pipelines.run.targets.agent.workspace import stage
from eval_pipelines.run.targets.base import TargetRequest
from eval_pipelines.run.targets.config import ClaudeCodeTargetConfig, load_targets_file
from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.suite.models import InputFile, Message, TestCase
from tests.support import claude_code_cli as cc
from tests.support.fake_anthropic import FakeAnthropicServer, text_turn, tool_turn
from tests.support.field_projects import sql


def refusal(tmp_path: Path, entry: str) -> str:
    path = tmp_path / "targets.yaml"
    path.write_text(f"targets:\n  - name: cc\n    type: claude_code\n{entry}")
    with pytest.raises(SpecErrors) as caught:
        load_targets_file(path)
    return str(caught.value)


@pytest.mark.parametrize(("entry", "said"), [
    ("    memory_mb: 512\n", "aborts below 1024 MB"),
    ("    max_turn: 3\n", "max_turns"),
    ("    allowed_tools: [Read, 'rm -rf']\n", "is not a Claude Code tool name"),
    ("    base_url_env: ANTHROPIC_API_KEY\n", "looks like a secret"),
    ("    allowed_tools: []\n", "allowed_tools"),
])
def test_bad_fields_are_refused_in_one_line(tmp_path: Path, entry: str, said: str) -> None:
    message = refusal(tmp_path, entry)
    assert said in message and "targets.yaml" in message and "\n" not in message.strip()


def test_defaults_and_limits(tmp_path: Path) -> None:
    path = tmp_path / "targets.yaml"
    path.write_text("targets:\n  - name: cc\n    type: claude_code\n")
    (config,) = load_targets_file(path)
    assert isinstance(config, ClaudeCodeTargetConfig)
    assert (config.api_key_env, config.base_url_env, config.memory_mb, config.network) == (
        "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", 1024, False)
    assert config.limits()["allowed_tools"] == ["Skill", "Read", "Glob", "Grep", "Bash", "Write", "Edit"]


def test_a_suites_own_target_keeps_the_key_from_an_untrusted_host_and_may_take_binary_files(tmp_path: Path) -> None:
    from eval_pipelines.formats.skills.evals_json import refuse_files_for_chat_targets
    from eval_pipelines.run.targets.config import connection, mark_declared_by
    from eval_pipelines.suite.models import Suite

    config = mark_declared_by(ClaudeCodeTargetConfig(name="cc", base_url="https://collector.example"), "suite")
    key, base_url, withheld = connection(config, {"ANTHROPIC_API_KEY": "sk-ant-operator"})
    assert key is None and base_url == "https://collector.example" and "collector.example" in withheld
    binary = InputFile(path="scan.bin", source=str(tmp_path / "scan.bin"), inlined=False, reason="a binary file")
    suite = Suite(name="s", format="agent-skills-evals", source_file=str(tmp_path / "evals.json"),
                  tests=[TestCase(id="1", input=[Message(content="q")], input_files=[binary])])
    suite.execution.targets = ["cc"]
    refuse_files_for_chat_targets(suite, {"cc": config})  # an agent kind: no refusal


def test_the_command_line_streams_json_and_takes_the_prompt_on_stdin() -> None:
    config = ClaudeCodeTargetConfig(name="cc", model="claude-x", max_turns=7,
                                    allowed_tools=["Read", "Bash(python3:*)", "Bash(ls:*)", "Skill"])
    argv = command_line(config, Path("claude"), "Answer in French.")
    assert argv[:6] == ["claude", "-p", "--output-format", "stream-json", "--verbose", "--no-session-persistence"]
    options = dict(zip(argv[6::2], argv[7::2]))
    assert options == {"--tools": "Read,Bash,Skill", "--allowedTools": "Read,Bash(python3:*),Bash(ls:*),Skill",
                       "--max-turns": "7", "--model": "claude-x", "--append-system-prompt": "Answer in French."}
    assert "--dangerously-skip-permissions" not in argv
    assert "--model" not in command_line(ClaudeCodeTargetConfig(name="cc"), Path("claude"), None)
    # A suite's system prompt that is the skill's body is not appended: the CLI loads the skill itself.
    assert appended_system_prompt("# Body\r\n\r\nDo it.", "# Body\n\nDo it.\n") is None
    assert appended_system_prompt("Be brief.", "# Body") == "Be brief."


def test_the_environment_holds_no_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-other-SECRET")
    config = ClaudeCodeTargetConfig(name="cc", max_retries=2)
    bridge = ModelBridge("https://gateway.example:8443/anthropic")
    try:
        env = environment(config, "sk-ant-operator", "https://gateway.example:8443/anthropic", bridge)
    finally:
        bridge.folder.rmdir()
    assert set(env) == {*QUIET_ENV, "ANTHROPIC_API_KEY", "CLAUDE_CODE_MAX_RETRIES", "ANTHROPIC_UNIX_SOCKET",
                        "ANTHROPIC_BASE_URL"}
    # The bridge adds the key outside the sandbox: inside there is only a placeholder.
    assert env["ANTHROPIC_API_KEY"] == PLACEHOLDER_KEY and env["CLAUDE_CODE_MAX_RETRIES"] == "2"
    assert "sk-other-SECRET" not in json.dumps(env) and "sk-ant-operator" not in json.dumps(env)
    # The CLI speaks plain HTTP to the socket with the real host and path; the bridge adds TLS.
    assert env["ANTHROPIC_BASE_URL"] == "http://gateway.example:8443/anthropic"
    assert env["ANTHROPIC_UNIX_SOCKET"] == str(bridge.socket)
    # With the host's network the CLI sends the key itself: the one secret it gets.
    open_env = environment(config.model_copy(update={"network": True}), "sk-ant-operator", "http://127.0.0.1:9", None)
    assert open_env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9" and "ANTHROPIC_UNIX_SOCKET" not in open_env
    assert open_env["ANTHROPIC_API_KEY"] == "sk-ant-operator"
    assert environment(config, None, None, None)["ANTHROPIC_API_KEY"] == PLACEHOLDER_KEY  # the CLI needs one


def test_the_bridge_goes_to_the_base_urls_host_only() -> None:
    default = upstream_of(None)
    assert (default.scheme, default.host, default.port, default.cli_base_url) == (
        "https", "api.anthropic.com", 443, "http://api.anthropic.com")
    assert upstream_of("http://127.0.0.1:5000/").cli_base_url == "http://127.0.0.1:5000"
    for bad in ("ftp://host", "http://user:pw@host", "localhost:80"):
        with pytest.raises(ValueError):
            upstream_of(bad)


def skill_package(root: Path) -> Path:
    (root / "scripts").mkdir(parents=True)
    (root / "evals" / "files").mkdir(parents=True)
    (root / "SKILL.md").write_text(f"---\nname: demo\ndescription: {DESCRIPTION}\n---\n{BODY}")
    (root / "scripts" / "inventory.py").write_text(INVENTORY)
    (root / "evals" / "files" / "notes.txt").write_text("alpha beta gamma\n")
    (root / "evals" / "files" / "scan.bin").write_bytes(b"\0\1\2binary\0")
    (root / "evals" / "evals.json").write_text(json.dumps(EVALS))
    return root


def test_the_skill_is_staged_under_dot_claude_skills(tmp_path: Path) -> None:
    skill = skill_package(tmp_path / "demo")
    files = [InputFile(path="evals/files/scan.bin", source=str(skill / "evals/files/scan.bin"), inlined=False)]
    space = stage(skill, "demo", files, CLAUDE_SKILLS_DIR)
    try:
        assert (space.root / ".claude/skills/demo/SKILL.md").read_text().startswith("---\nname: demo")
        assert (space.root / ".claude/skills/demo/scripts/inventory.py").is_file()
        assert not (space.root / ".claude/skills/demo/evals").exists()
        assert (space.root / "evals/files/scan.bin").read_bytes() == b"\0\1\2binary\0"
    finally:
        space.remove()


def request(case_id: str = "1") -> TargetRequest:
    return TargetRequest(test_id=case_id, trial=0, system_prompt=None, messages=[Message(content="Go.")],
                         timeout_s=30)


def test_a_missing_cli_is_an_error_row_and_the_kind_takes_input_files(tmp_path: Path) -> None:
    config = ClaudeCodeTargetConfig(name="cc", binary="no-such-claude-cli-31")
    target = build_target(config, skill_package(tmp_path / "demo"), {})
    assert isinstance(target, ClaudeCodeTarget)
    out = asyncio.run(target.generate(request()))
    assert out.output is None and out.attempts == 0
    assert out.error.startswith("claude_code target 'cc': the Claude Code CLI is missing ('no-such-claude-cli-31' "
                                "not found; install it: npm install") and "\n" not in out.error
    binary = InputFile(path="evals/files/scan.bin", source=str(tmp_path / "demo/evals/files/scan.bin"), inlined=False)
    assert files_refusal(TestCase(id="1", input=[Message(content="q")], input_files=[binary]), target) is None


STREAMS = Path(__file__).resolve().parents[2] / "data" / "claude_code_streams"


def fake_cli(tmp_path: Path, stream: str, *, exit_code: int = 0, stderr: str = "", then: str = "") -> Path:
    """A stand-in for the CLI, run in the sandbox like the real one: prints ``stream``, then exits."""
    fake = tmp_path / "fake-claude"
    fake.write_text(f"#!/bin/sh\ncat > /dev/null\ncat <<'STREAM_END'\n{stream}\nSTREAM_END\n"
                    f"echo '{stderr}' >&2\n{then}\nexit {exit_code}\n")
    fake.chmod(0o755)
    return fake


def run_fake(tmp_path: Path, fake: Path, timeout_s: float = 30) -> Any:
    config = ClaudeCodeTargetConfig(name="cc", binary=str(fake), network=True, timeout_s=timeout_s)
    target = ClaudeCodeTarget(config, skill_package(tmp_path / "demo"), api_key="k", base_url="http://127.0.0.1:9")
    out = asyncio.run(target.generate(request()))
    assert out.limits == config.limits() and (out.error is None or "\n" not in out.error)
    return out


def test_a_cli_that_breaks_its_stream_is_an_error_row_with_what_it_said(tmp_path: Path) -> None:
    broken = "\n".join([
        '{"type": "system", "subtype": "init", "session_id": "s1"}',
        '{"type": "assistant", "message": {"id": "m1", "content": [{"type": "text", "text": "Working on it"}]}}',
        '{"type": "resu'])
    out = run_fake(tmp_path, fake_cli(tmp_path, broken, exit_code=3, stderr="boom: the model vanished"))
    assert out.output is None
    assert out.error.startswith("the stream ended without a result event")
    assert "(exit code 3: boom: the model vanished)" in out.error
    assert [t["text"] for t in out.transcript if t["role"] == "assistant"] == ["Working on it"]
    assert out.run_metrics["claude_code"]["exit_code"] == 3 and out.run_metrics["errors"] == 1


def test_max_turns_is_an_output_that_says_it_stopped(tmp_path: Path) -> None:
    """The recorded stream of a run cut by --max-turns (the CLI exits 1): as for the agent target, the
    last text is the output and run_metrics.stopped says why."""
    out = run_fake(tmp_path, fake_cli(tmp_path, (STREAMS / "max_turns.jsonl").read_text().strip(), exit_code=1))
    assert out.error is None and out.output == "I'll use the word-count skill."
    assert out.run_metrics["stopped"] == "max_turns" and out.trace[-1]["stopped"] == "max_turns"
    assert [t["tool"] for t in out.trace] == ["Skill", "Read"] and out.prompt_tokens > 0


def test_a_cli_past_its_time_is_killed_and_an_error_row(tmp_path: Path) -> None:
    out = run_fake(tmp_path, fake_cli(tmp_path, "", then="exec sleep 30"), timeout_s=0.5)
    assert out.output is None and out.error == "claude code ran out of time: timeout_s 0.5 s (killed)"


# -- the real CLI, end to end (slow) -----------------------------------------------------------

CLI = cc.find_claude_cli()
DESCRIPTION = "Takes stock of input files and writes an inventory. Use when asked to list input files."
BODY_MARK = "BODY-MARK-cc31"
BODY = f"# Inventory\n\n{BODY_MARK}: run `python3 .claude/skills/demo/scripts/inventory.py evals/files`.\n"
# The bundled script: hashes the input files, reports whether the sandbox let it reach the model's
# port directly and whether any other secret reached its environment, and writes out/inventory.json.
INVENTORY = r'''
import hashlib, json, os, socket, sys
files = {}
for folder, dirs, names in os.walk(sys.argv[1]):
    for name in sorted(names):
        path = os.path.join(folder, name)
        files[path] = hashlib.sha256(open(path, "rb").read()).hexdigest()
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[2])), timeout=2).close()
    net = "open"
except OSError:
    net = "blocked"
secrets = sorted(k for k, v in os.environ.items() if "SECRET" in v)
os.makedirs("out", exist_ok=True)
json.dump({"count": len(files), "files": files}, open("out/inventory.json", "w"))
print(json.dumps({"count": len(files), "net": net, "secrets_seen": secrets}))
'''
EVALS = {"skill_name": "demo", "evals": [{
    "id": 1, "prompt": "Take stock of the input files.", "expected_output": "out/summary.md",
    "files": ["evals/files/notes.txt", "evals/files/scan.bin"],
    "expectations": ["The skill's inventory script was run", "out/summary.md says 2 files"]}]}
JUDGE_SCRIPT = """rules:
  - expectation: inventory script
    matches: 'calls Bash .*inventory\\.py'
  - expectation: says 2 files
    holds: "2 input files"
otherwise: fail
"""
ANSWER = "Done: out/summary.md lists the 2 input files."


def workspace_of(body: dict[str, Any]) -> str:
    return re.search(r"Primary working directory: (\S+?)\\n", json.dumps(body)).group(1)


def scripted_turns(port: int) -> list[Any]:
    return [
        lambda body: tool_turn(("Read", {"file_path": f"{workspace_of(body)}/.claude/skills/demo/SKILL.md"})),
        tool_turn(("Bash", {"command": f"python3 .claude/skills/demo/scripts/inventory.py evals/files {port}",
                            "description": "Run the skill's inventory script"})),
        lambda body: tool_turn(("Write", {"file_path": f"{workspace_of(body)}/out/summary.md",
                                          "content": "# Summary\n\n2 input files.\n"})),
        text_turn(ANSWER),
    ]


@pytest.fixture(scope="module")
def cc_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, FakeAnthropicServer, int]]:
    root = tmp_path_factory.mktemp("cc-project")
    skill = skill_package(root / "skills" / "demo" / "1.0.0")
    (skill / "judge-script.yaml").write_text(JUDGE_SCRIPT)
    # The operator's targets.yaml (its key goes where the operator's ANTHROPIC_BASE_URL says).
    (root / "targets.yaml").write_text(
        f"targets:\n  - name: default\n    type: claude_code\n    model: claude-test-model\n"
        f"    binary: {json.dumps(str(CLI))}\n    max_turns: 8\n    timeout_s: 90\n    max_retries: 0\n"
        "  - name: judge\n    type: scripted_judge\n    script: judge-script.yaml\n")
    db = root / "results.duckdb"
    with pytest.MonkeyPatch.context() as mp, FakeAnthropicServer() as server:
        for name in ("EVAL_PIPELINES_SKILLS_DIR", "EVAL_PIPELINES_DB", "EVAL_PIPELINES_HOME"):
            mp.delenv(name, raising=False)
        mp.setenv("ANTHROPIC_BASE_URL", server.root_url)
        mp.setenv("ANTHROPIC_API_KEY", "sk-ant-operator-SECRET-31")
        mp.setenv("OPENAI_API_KEY", "sk-openai-SECRET-31")
        server.script = scripted_turns(server.port)
        code = main(["--root", str(root), "run", str(skill), "--db", str(db), "--configurations", "with_skill"])
        assert code == EXIT_OK
        yield db, server, code


needs_cli = pytest.mark.skipif(CLI is None, reason="the Claude Code CLI is not installed (npm install --prefix "
                               f".npm-tools @anthropic-ai/claude-code@{cc.CLI_VERSION}, or set CLAUDE_CODE_CLI)")


@pytest.mark.slow
@needs_cli
def test_claude_code_runs_a_skill_package_and_everything_is_stored(cc_run) -> None:
    from eval_pipelines.run.sandbox.isolation import choose_isolation

    db, server, _ = cc_run
    ((output, error, trace, files, transcript, metrics, limits, tokens, cost, calls),) = sql(
        db, "SELECT output, error, trace, files, transcript, run_metrics, limits, prompt_tokens, cost_usd, "
            "tool_calls FROM model_outputs")
    assert error is None and output == ANSWER
    trace, files, transcript, metrics = map(json.loads, (trace, files, transcript, metrics))
    # The tool calls, in order, as tool_trajectory reads them.
    assert [t["tool"] for t in trace] == ["Read", "Bash", "Write"] and calls == 3
    assert trace[0]["args"]["file_path"].endswith("/.claude/skills/demo/SKILL.md")
    assert BODY_MARK in trace[0]["result"]  # SKILL.md reached the model through the Read tool
    ran = json.loads(trace[1]["result"])
    # Both input files were staged; no secret reached the script's environment (the model key included:
    # the bridge adds it outside the sandbox).
    assert ran["count"] == 2 and ran["secrets_seen"] == []
    if choose_isolation().strong:
        assert ran["net"] == "blocked"  # the skill's script cannot reach even the model's port
    # Files the run wrote: by the Write tool and by the script the Bash tool ran.
    by_path = {f["path"]: f for f in files}
    assert set(by_path) == {"out/summary.md", "out/inventory.json"}
    assert by_path["out/summary.md"]["text"] == "# Summary\n\n2 input files.\n"
    assert by_path["out/summary.md"]["status"] == "created" and by_path["out/summary.md"]["sha256"]
    # The transcript: the task, the calls and their results, the answer.
    assert transcript[0] == {"role": "user", "kind": "text", "step": 0, "text": transcript[0]["text"]}
    assert transcript[0]["text"].startswith("Take stock of the input files.")
    assert [i["tool"] for i in transcript if i["kind"] == "tool_call"] == ["Read", "Bash", "Write"]
    assert transcript[-1]["text"] == ANSWER
    # Tokens, cost, turns, and what the CLI said about itself.
    assert tokens > 0 and metrics["input_tokens"] > 0 and cost > 0
    assert metrics["turns"] == 4 and metrics["tool_calls_by_tool"] == {"Read": 1, "Bash": 1, "Write": 1}
    assert metrics["claude_code"]["cli_version"] == cc.CLI_VERSION and "demo" in metrics["claude_code"]["skills"]
    assert metrics["input_files"] == ["evals/files/notes.txt", "evals/files/scan.bin"]
    assert json.loads(limits)["max_turns"] == 8
    # The judge's verdicts on the expectations (the transcript and files were judged).
    assert sql(db, "SELECT count(*), count(*) FILTER (WHERE passed) FROM grades")[0][0] >= 1
    assert all(passed for (passed,) in sql(db, "SELECT passed FROM grades"))
    # What the model server saw: the model asked for, the operator's key, the skill not in the system prompt.
    sent = server.scripted_requests
    assert len(sent) == 4 and {b["model"] for b in sent} == {"claude-test-model"}
    offered = {t["name"] for t in sent[0]["tools"]}
    assert {"Skill", "Read", "Glob", "Grep", "Bash", "Write", "Edit"} <= offered and "WebFetch" not in offered
    assert {r.headers.get("x-api-key") for r in server.records} == {"sk-ant-operator-SECRET-31"}
    assert BODY_MARK not in json.dumps(sent[0]["system"]) and BODY_MARK not in json.dumps(sent[0]["messages"])
    assert f"- demo: {DESCRIPTION}" in json.dumps(sent[0]["messages"])
    # No secret in the database file.
    assert b"SECRET-31" not in db.read_bytes()


def test_the_bridge_adds_the_key_on_the_way_out() -> None:
    """Two requests on one connection to the socket (one with a chunked body) reach the model server
    with the operator's key in place of the placeholder the sandbox holds."""
    async def exchange(bridge: ModelBridge) -> bytes:
        reader, writer = await asyncio.open_unix_connection(str(bridge.socket))
        body = b'{"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}'
        writer.write(b"POST /v1/messages HTTP/1.1\r\nHost: h\r\nx-api-key: " + PLACEHOLDER_KEY.encode()
                     + b"\r\ncontent-type: application/json\r\ncontent-length: " + str(len(body)).encode()
                     + b"\r\n\r\n" + body)
        writer.write(b"POST /v1/messages HTTP/1.1\r\nHost: h\r\nX-Api-Key: other\r\ntransfer-encoding: chunked\r\n"
                     b"connection: close\r\n\r\n" + f"{len(body):x}".encode() + b"\r\n" + body + b"\r\n0\r\n\r\n")
        await writer.drain()
        answer = await reader.read()
        writer.close()
        return answer

    async def run() -> bytes:
        async with ModelBridge(server.root_url, "sk-ant-operator-31") as bridge:
            return await exchange(bridge)

    with FakeAnthropicServer(script=[text_turn("one"), text_turn("two")], scripted=lambda body: True) as server:
        answer = asyncio.run(run())
    assert answer.count(b"HTTP/1.1 200") == 2 and b'"one"' in answer and b'"two"' in answer
    assert [r.headers.get("x-api-key") for r in server.records] == ["sk-ant-operator-31"] * 2
