"""Agent target parts (issue 31): the workspace's file tools stay inside it (links included),
staging refuses paths leaving it, and a file a chat target cannot take is refused in one line
naming the target's type, at load when the targets are known, else as the case's error row."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from eval_pipelines.run.engine import collect_outputs
from eval_pipelines.run.targets.agent.tools import WorkspaceTools
from eval_pipelines.run.targets.agent.workspace import StagingError, changed_files, deleted_files, stage
from eval_pipelines.run.targets.command import CommandTarget
from eval_pipelines.run.targets.config import AgentTargetConfig, CommandTargetConfig, OpenAITargetConfig
from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.formats.loader import load_skill
from eval_pipelines.suite.models import InputFile, Message, Suite, TestCase
from tests.support.agent_skill import make_agent_project

CONFIG = AgentTargetConfig(name="agent", model="m")


def test_file_tools_stay_inside_the_workspace(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("operator secret")
    root = tmp_path / "ws"
    root.mkdir()
    (root / "link.txt").symlink_to(outside / "secret.txt")
    (root / "linkdir").symlink_to(outside, target_is_directory=True)
    tools = WorkspaceTools(root, CONFIG)
    for path in ("link.txt", "linkdir/secret.txt", "../outside/secret.txt", str(outside / "secret.txt")):
        assert "outside the workspace" in tools.read_file(path), path
    assert "outside the workspace" in tools.write_file("linkdir/new.txt", "x")
    assert "outside the workspace" in tools.list_files("linkdir")
    assert not (outside / "new.txt").exists()
    assert tools.errors == 6
    assert tools.write_file("out/a.txt", "hello") == "wrote out/a.txt (5 bytes)"
    assert tools.read_file(str(root / "out" / "a.txt")) == "hello"
    (root / "b.bin").write_bytes(b"\0\1\2")
    assert tools.read_file("b.bin").startswith("b.bin is a binary file (3 bytes")


def test_staging_places_files_and_reports_what_changed(tmp_path: Path) -> None:
    source = tmp_path / "data.bin"
    source.write_bytes(b"\0bin")
    space = stage(None, None, [InputFile(path="in/data.bin", source=str(source), inlined=False)])
    try:
        assert (space.root / "in" / "data.bin").read_bytes() == b"\0bin"
        assert changed_files(space) == []
        (space.root / "in" / "data.bin").write_bytes(b"changed")
        (space.root / "new.txt").write_text("x" * 10)
        files = {f["path"]: f for f in changed_files(space)}
        assert files["in/data.bin"]["status"] == "changed" and files["new.txt"]["text"] == "x" * 10
        (space.root / "in" / "data.bin").unlink()
        assert deleted_files(space) == ["in/data.bin"]
    finally:
        space.remove()
    assert not space.root.exists()
    with pytest.raises(StagingError, match="not a relative path inside the workspace"):
        stage(None, None, [InputFile(path="../escape.txt", source=str(source), inlined=False)])


def test_a_binary_file_on_a_chat_target_is_refused_at_load(tmp_path: Path) -> None:
    skill = make_agent_project(tmp_path)
    with pytest.raises(SpecErrors) as caught:
        load_skill(skill, datasets_dir=None, extract_dir=tmp_path / "x",
                   project_targets={"default": OpenAITargetConfig(name="default", model="chat-model")})
    (line,) = str(caught.value).splitlines()
    assert "input file evals/files/tree/a.csv (a file of the directory evals/files/tree)" in line
    assert "target 'default' (type: openai)" in line and "an agent target (type: agent)" in line


def test_a_binary_file_on_a_target_not_known_at_load_is_an_error_row(tmp_path: Path) -> None:
    case = TestCase(id="c1", input=[Message(role="user", content="go")],
                    input_files=[InputFile(path="scan.pdf", source=str(tmp_path / "scan.pdf"), inlined=False,
                                           reason="a binary file")])
    suite = Suite(name="s", format="eval-yaml", source_file=str(tmp_path / "s.yaml"), tests=[case])
    suite.execution.targets = ["cmd"]
    target = CommandTarget(CommandTargetConfig(name="cmd", command=["cat"]), tmp_path)
    (row,) = asyncio.run(collect_outputs(suite, {"cmd": target}))
    assert row.error == ("input file scan.pdf (a binary file) cannot be given to target 'cmd' (type: command): "
                         "only an agent target (type: agent) or Claude Code (type: claude_code) takes such files")


def test_a_failing_model_call_is_an_error_row_without_the_key(tmp_path: Path) -> None:
    from eval_pipelines.run.targets.agent.loop import AgentTarget
    from eval_pipelines.run.targets.base import TargetRequest
    from tests.support.fake_openai import FakeOpenAIServer

    skill = make_agent_project(tmp_path)
    with FakeOpenAIServer(latency_s=0.0, fail_plan=["401"]) as server:
        target = AgentTarget(AgentTargetConfig(name="agent", model="m", max_retries=0), skill,
                             api_key="sk-secret-401", base_url=server.base_url)
        request = TargetRequest(test_id="1", trial=0, system_prompt=None,
                                messages=[Message(role="user", content="go")], timeout_s=30)

        async def once():
            try:
                return await target.generate(request)
            finally:
                await target.aclose()
        output = asyncio.run(once())
    assert output.output is None and output.error.startswith("agent run failed: HTTP 401")
    assert "sk-secret-401" not in output.error
    assert output.transcript[0]["kind"] == "instructions" and output.run_metrics["errors"] == 1
    assert output.limits == AgentTargetConfig(name="agent", model="m").limits()


def test_a_crlf_skill_md_body_stays_out_of_the_instructions(tmp_path: Path) -> None:
    """The suite's system prompt is the package's body (CRLF kept); the agent reads SKILL.md with LF:
    still the same body, so it reaches the model only through read_file."""
    from eval_pipelines.run.targets.agent.loop import SkillInfo, instructions

    (tmp_path / "SKILL.md").write_bytes(b"---\r\nname: s\r\ndescription: d\r\n---\r\n# Body\r\n\r\nRun it.\r\n")
    skill = SkillInfo(tmp_path)
    text = instructions(skill, "# Body\r\n\r\nRun it.\r\n")
    assert "Run it." not in text and "- s: d" in text
    assert "Own prompt" in instructions(skill, "Own prompt")
