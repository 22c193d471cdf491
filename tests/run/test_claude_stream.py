"""Claude Code's stream-json read into a ClaudeRun: real recorded streams (tests/data/claude_code_streams,
see its README), a broken stream, the trace the trajectory graders read, and one slow run of the
real CLI against the Anthropic-Messages test server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval_pipelines.grading.base import GradeInput
from eval_pipelines.grading.dispatch import grade_output
from eval_pipelines.run.targets.agent.claude_stream import (
    AssistantEntry,
    ToolResultEntry,
    UserTextEntry,
    parse_claude_stream,
    to_trace,
)
from eval_pipelines.suite.models import Assertion, Message, TestCase
from tests.support import claude_code_cli as cc
from tests.support.fake_anthropic import FakeAnthropicServer

STREAMS = Path(__file__).resolve().parents[1] / "data" / "claude_code_streams"


def stream(name: str) -> str:
    return (STREAMS / f"{name}.jsonl").read_text()


def test_a_whole_skill_run_gives_answer_calls_results_tokens_and_cost() -> None:
    run = parse_claude_stream(stream("skill_read_bash_write"))
    assert run.notes == [] and run.other_events == []
    assert run.error is None
    assert run.answer == "input.txt has 5 words; report.json holds the count."
    assert run.init is not None and run.init.cli_version == "2.1.332"
    assert "word-count" in run.init.skills and {"Skill", "Read", "Bash", "Write"} <= set(run.init.tools)
    assert run.session_id == run.init.session_id and run.session_id
    assert run.turns == 5 and run.result is not None and run.result.num_turns == 6
    assert run.tool_calls_by_name == {"Skill": 1, "Read": 1, "Bash": 1, "Write": 1}
    assert [c.step for c in run.tool_calls] == [1, 2, 3, 4]
    bash = run.tool_calls[2]
    assert bash.input["command"] == "python3 .claude/skills/word-count/scripts/count.py input.txt"
    assert bash.result is not None and bash.result.content == '{"words": 5}' and not bash.result.is_error
    assert bash.result.structured["stdout"] == '{"words": 5}'
    read = run.tool_calls[1]
    assert read.input == {"file_path": "/workspace/.claude/skills/word-count/SKILL.md"}
    assert "name: word-count" in read.result.content
    assert all(c.result is not None and not c.permission_denied for c in run.tool_calls)
    # The result event's totals, not the per-message copies taken at each message's start.
    assert run.usage.input_tokens == 13383 and run.usage.output_tokens == 30
    assert run.usage.cache_read_input_tokens == 0 and run.usage.cache_creation_input_tokens == 0
    assert run.message_usage.output_tokens == 5  # what the message lines alone would say
    assert run.result.total_cost_usd == pytest.approx(0.054132)
    assert run.result.duration_ms and run.result.duration_ms > 0


def test_the_transcript_keeps_order_and_the_skill_body_the_cli_injected() -> None:
    run = parse_claude_stream(stream("skill_read_bash_write"))
    kinds = [e.kind for e in run.transcript]
    assert kinds == ["assistant", "tool_result", "user_text", "assistant", "tool_result", "assistant",
                     "tool_result", "assistant", "tool_result", "assistant"]
    first = run.transcript[0]
    assert isinstance(first, AssistantEntry) and first.text == "I'll use the word-count skill."
    assert [c.name for c in first.tool_calls] == ["Skill"]
    skill_result = run.transcript[1]
    assert isinstance(skill_result, ToolResultEntry) and skill_result.tool == "Skill"
    assert skill_result.call_id == first.tool_calls[0].call_id
    injected = run.transcript[2]
    assert isinstance(injected, UserTextEntry) and injected.synthetic
    assert "Base directory for this skill: /workspace/.claude/skills/word-count" in injected.text
    assert "# Word count" in injected.text and "description:" not in injected.text  # body only


def test_refused_tools_are_errors_marked_denied_and_the_run_still_answers() -> None:
    run = parse_claude_stream(stream("permission_denied"))
    assert run.error is None and run.answer == "input.txt has 5 words; report.json holds the count."
    by_name = {c.name: c for c in run.tool_calls}
    for name in ("Bash", "Write"):
        assert by_name[name].permission_denied and by_name[name].result.is_error
    assert by_name["Bash"].result.content == "This command requires approval"
    assert not by_name["Read"].permission_denied and not by_name["Read"].result.is_error
    assert [e["subtype"] for e in run.other_events] == ["permission_denied", "permission_denied"]
    assert [d["tool_name"] for d in run.result.permission_denials] == ["Bash", "Write"]


def test_an_api_error_after_retries_is_an_error_not_an_answer() -> None:
    run = parse_claude_stream(stream("api_error_529"))
    assert run.answer is None
    assert run.error is not None
    assert run.error.startswith("claude code run failed (api_error, HTTP 529): API Error: 529")
    assert "\n" not in run.error
    assert [(r.attempt, r.error_status, r.error) for r in run.retries] == [(1, 529, "overloaded")]
    assert run.turns == 1  # the CLI's "<synthetic>" error message is not a model turn
    assert run.transcript[-1].kind == "assistant" and run.transcript[-1].synthetic
    assert run.tool_calls_by_name == {"Skill": 1}
    assert run.usage.input_tokens == 2607 and run.result.total_cost_usd == pytest.approx(0.010568)


def test_max_turns_is_an_error_and_the_trace_says_where_it_stopped() -> None:
    run = parse_claude_stream(stream("max_turns"))
    assert run.answer is None and run.last_text == "I'll use the word-count skill."
    assert run.error == "claude code run failed (error_max_turns): Reached maximum number of turns (2)"
    trace = to_trace(run)
    assert [t["tool"] for t in trace] == ["Skill", "Read"] and trace[-1]["stopped"] == "max_turns"


def test_trace_items_have_the_tool_loop_shape() -> None:
    trace = to_trace(parse_claude_stream(stream("permission_denied")))
    assert [set(t) >= {"tool", "args", "result", "step", "call_id"} for t in trace] == [True] * 4
    assert trace[2] == {"tool": "Bash", "step": 3, "call_id": "toolu_fake0003",
                        "result": "This command requires approval",
                        "args": {"command": "python3 .claude/skills/word-count/scripts/count.py input.txt",
                                 "description": "Count the words of input.txt"},
                        "is_error": True, "permission_denied": True}


def _grade(type_: str, trace: list[dict], **config) -> float:
    case = TestCase(id="t1", input=[Message(content="q")])
    return grade_output(Assertion(type=type_, config=config), GradeInput(case=case, output="", trace=trace)).score


def test_tool_trajectory_grades_a_claude_code_run_unchanged() -> None:
    trace = to_trace(parse_claude_stream(stream("skill_read_bash_write")))
    in_order = [{"tool": "Skill", "args": {"skill": "word-count"}}, {"tool": "Bash"}, {"tool": "Write"}]
    assert _grade("tool_trajectory", trace, mode="in_order", expected=in_order) == 1
    assert _grade("tool_trajectory", trace, mode="any_order", minimums={"Bash": 1, "Read": 1}) == 1
    assert _grade("tool_trajectory", trace, mode="in_order", expected=[{"tool": "Write"}, {"tool": "Skill"}]) < 1
    assert _grade("tool_trajectory", trace, mode="any_order", minimums={"WebFetch": 1}) == 0


def test_a_broken_stream_is_read_up_to_where_it_broke_without_raising() -> None:
    lines = stream("skill_read_bash_write").splitlines()
    broken = [
        lines[0],
        "not json at all {",
        "[1, 2, 3]",
        json.dumps({"type": "stream_event", "event": {"type": "message_start"}}),
        json.dumps({"type": "assistant", "message": "a string where an object belongs"}),
        json.dumps({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_nobody", "content": "orphan"}]}}),
        *lines[1:8],
        lines[8][: len(lines[8]) // 2],  # the CLI was killed mid-line (the Bash result's)
    ]
    run = parse_claude_stream("\n".join(broken))
    assert run.result is None and run.answer is None
    assert run.error is not None and run.error.startswith("the stream ended without a result event")
    assert any(n.startswith("line 2: not JSON") for n in run.notes)
    assert any(n.startswith("line 3: a JSON list") for n in run.notes)
    assert any("unexpected shape" in n and n.startswith("line 5") for n in run.notes)
    assert any("'toolu_nobody', which no assistant message made" in n for n in run.notes)
    assert any(n.startswith("line 14: not JSON") for n in run.notes)
    assert [e["type"] for e in run.other_events] == ["stream_event", "assistant"]
    # What came before the break is kept: Skill and Read answered, the Bash call without a result.
    calls = run.tool_calls
    assert [c.name for c in calls] == ["Skill", "Read", "Bash"] and calls[2].result is None
    assert to_trace(run)[2]["answered"] is False
    assert run.usage.input_tokens > 0  # summed from the messages when no result event came


def test_empty_and_bytes_input() -> None:
    empty = parse_claude_stream("")
    assert empty.lines == 0 and empty.transcript == [] and empty.error is not None
    assert parse_claude_stream(stream("max_turns").encode()).result.subtype == "error_max_turns"


# -- the real CLI against the test server (slow) ------------------------------------------

CLI = cc.find_claude_cli()


@pytest.mark.slow
@pytest.mark.skipif(CLI is None, reason="the Claude Code CLI is not installed (npm install --prefix .npm-tools "
                    f"@anthropic-ai/claude-code@{cc.CLI_VERSION}, or set CLAUDE_CODE_CLI)")
def test_the_real_cli_runs_a_skill_offline_against_the_test_server(tmp_path: Path) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "home"
    workspace.mkdir()
    home.mkdir()
    cc.install_skill(workspace)
    with FakeAnthropicServer(script=cc.skill_script(workspace)) as server:
        done = cc.run_cli(CLI, workspace, home, server)
    assert done.returncode == 0, done.stderr
    run = parse_claude_stream(done.stdout)
    assert run.notes == [] and run.error is None
    assert run.answer == "input.txt has 5 words; report.json holds the count."
    assert run.tool_calls_by_name == {"Skill": 1, "Read": 1, "Bash": 1, "Write": 1}
    assert all(c.result is not None and not c.result.is_error for c in run.tool_calls)
    assert run.tool_calls[2].result.content == '{"words": 5}'  # the skill's script really ran
    assert json.loads((workspace / "report.json").read_text()) == {"words": 5}
    assert run.usage.input_tokens > 0 and run.result.total_cost_usd > 0
    # What the CLI sent: five scripted requests, each offering the four tools, with the dummy key.
    sent = server.scripted_requests
    assert len(sent) == 5 and server.paths.count("POST /v1/messages") == 5
    first = sent[0]
    assert {"Skill", "Read", "Bash", "Write"} <= {t["name"] for t in first["tools"]}
    assert all(r.headers.get("x-api-key") == cc.OFFLINE_ENV["ANTHROPIC_API_KEY"] for r in done.requests)
    # Skills are listed by name and description in the conversation, not in the system prompt;
    # the body reaches the model only through the Skill and Read tools.
    system = json.dumps(first["system"])
    conversation = json.dumps(first["messages"])
    assert f"- word-count: {cc.SKILL_DESCRIPTION}" in conversation
    assert "word-count" not in system and "# Word count" not in system and "# Word count" not in conversation
    results = [b for m in sent[2]["messages"] if isinstance(m["content"], list) for b in m["content"]
               if b.get("type") == "tool_result"]
    assert any("Launching skill: word-count" in json.dumps(b["content"]) for b in results)
    assert "# Word count" in json.dumps(sent[1]["messages"])  # the Skill tool loaded the body


@pytest.mark.slow
@pytest.mark.skipif(CLI is None, reason="the Claude Code CLI is not installed (npm install --prefix .npm-tools "
                    f"@anthropic-ai/claude-code@{cc.CLI_VERSION}, or set CLAUDE_CODE_CLI)")
def test_the_real_cli_runs_in_the_project_sandbox_without_network(tmp_path: Path) -> None:
    """The CLI and the commands it runs get no network: the model is reached through a Unix socket
    in a folder the sandbox may write. Bun needs more than the default 512 MB of address space."""
    from eval_pipelines.run.sandbox.runner import run_sandboxed
    from eval_pipelines.run.sandbox.isolation import choose_isolation

    if not choose_isolation().strong:
        pytest.skip("no strong sandbox level here (namespaces or bubblewrap), so no network namespace")
    workspace, bridge_dir = tmp_path / "ws", tmp_path / "bridge"
    workspace.mkdir()
    bridge_dir.mkdir(mode=0o777)
    bridge_dir.chmod(0o777)
    cc.install_skill(workspace)
    argv = [str(CLI), "-p", cc.PROMPT, "--output-format", "stream-json", "--verbose", "--no-session-persistence",
            "--allowedTools", cc.TOOLS]
    with FakeAnthropicServer(script=cc.skill_script(workspace)) as server, \
            cc.UnixSocketBridge(bridge_dir / "api.sock", server.port) as bridge:
        env = {**cc.OFFLINE_ENV, "ANTHROPIC_UNIX_SOCKET": str(bridge.path), "ANTHROPIC_BASE_URL": "http://localhost"}
        done = run_sandboxed(argv, stdin=b"", timeout_s=120, memory_mb=2048, writable=(workspace, bridge_dir),
                             cwd=workspace, extra_env=env, network=False)
    assert done.returncode == 0 and not done.timed_out, done.stderr.decode(errors="replace")[-2000:]
    run = parse_claude_stream(done.stdout)
    assert run.error is None and run.answer == "input.txt has 5 words; report.json holds the count."
    assert [c.result.content for c in run.tool_calls if c.name == "Bash"] == ['{"words": 5}']
    assert json.loads((workspace / "report.json").read_text()) == {"words": 5}
    assert len(server.scripted_requests) == 5 and {r.headers["host"] for r in server.records} == {"localhost"}
