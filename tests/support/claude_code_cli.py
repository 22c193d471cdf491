"""The real Claude Code CLI run offline against ``FakeAnthropicServer`` (tests and the recorder).

The CLI is the npm package ``@anthropic-ai/claude-code`` (a native binary inside a registry
package, no download at install time). Found at, in order: ``$CLAUDE_CODE_CLI``,
the platform binary under ``<repo>/.npm-tools/node_modules/@anthropic-ai/`` or
``<repo>/.npm-tools/node_modules/.bin/claude`` (``npm install --prefix .npm-tools
@anthropic-ai/claude-code@CLI_VERSION``), ``claude`` on PATH.

Recording the streams in tests/data/claude_code_streams/ (see its README)::

    python -m tests.support.claude_code_cli record tests/data/claude_code_streams
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.fake_anthropic import FakeAnthropicServer, RecordedRequest, text_turn, tool_turn

CLI_VERSION = "2.1.332"
REPO = Path(__file__).resolve().parents[2]
SKILL_NAME = "word-count"
SKILL_DESCRIPTION = "Counts the words of a text file and writes report.json. Use when asked to count words."
SKILL_BODY = ("# Word count\n\nRun `python3 .claude/skills/word-count/scripts/count.py <file>` and write what it "
              "prints to `report.json` in the working folder.\n")
COUNT_SCRIPT = "import json, sys\nprint(json.dumps({'words': len(open(sys.argv[1]).read().split())}))\n"
PROMPT = "Count the words in input.txt with the word-count skill."
TOOLS = "Skill,Read,Bash,Write"
# Telemetry, error reports, auto-update and other non-essential traffic off (the CLI's documented
# switches); the key is a dummy: the fake server accepts any.
OFFLINE_ENV = {"DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1", "DISABLE_AUTOUPDATER": "1",
               "DISABLE_BUG_COMMAND": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
               "ANTHROPIC_API_KEY": "sk-ant-test-dummy"}


def find_claude_cli() -> Path | None:
    # The platform package's binary first: it is the real CLI even where npm skipped the wrapper's
    # postinstall (which copies it over the wrapper's placeholder ``bin/claude.exe``).
    platform = sorted((REPO / ".npm-tools/node_modules/@anthropic-ai").glob("claude-code-linux-*/claude"))
    candidates = [os.environ.get("CLAUDE_CODE_CLI"), *map(str, platform),
                  str(REPO / ".npm-tools/node_modules/.bin/claude"), shutil.which("claude")]
    for candidate in candidates:
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return Path(candidate)
    return None


def install_skill(workspace: Path) -> Path:
    """The word-count skill under ``workspace/.claude/skills/``, and an ``input.txt`` of 5 words."""
    skill = workspace / ".claude" / "skills" / SKILL_NAME
    (skill / "scripts").mkdir(parents=True, exist_ok=True)
    (skill / "SKILL.md").write_text(f"---\nname: {SKILL_NAME}\ndescription: {SKILL_DESCRIPTION}\n---\n{SKILL_BODY}")
    (skill / "scripts" / "count.py").write_text(COUNT_SCRIPT)
    (workspace / "input.txt").write_text("one two three four five\n")
    return skill


def skill_script(workspace: Path) -> list[Any]:
    """The scripted agent: load the skill, read its SKILL.md, run its script, write the report, answer."""
    skill = workspace / ".claude" / "skills" / SKILL_NAME
    return [
        tool_turn(("Skill", {"skill": SKILL_NAME}), text="I'll use the word-count skill."),
        tool_turn(("Read", {"file_path": str(skill / "SKILL.md")})),
        tool_turn(("Bash", {"command": "python3 .claude/skills/word-count/scripts/count.py input.txt",
                            "description": "Count the words of input.txt"})),
        tool_turn(("Write", {"file_path": str(workspace / "report.json"), "content": '{"words": 5}\n'})),
        text_turn("input.txt has 5 words; report.json holds the count."),
    ]


@dataclass
class CliRun:
    command: list[str]
    returncode: int
    stdout: str
    stderr: str
    requests: list[RecordedRequest]


def run_cli(cli: Path, workspace: Path, home: Path, server: FakeAnthropicServer, *, prompt: str = PROMPT,
            flags: list[str] | None = None, env: dict[str, str] | None = None, timeout_s: float = 120) -> CliRun:
    """One non-interactive run in ``workspace`` with HOME at ``home`` (the CLI writes its config there)."""
    command = [str(cli), "-p", prompt, "--output-format", "stream-json", "--verbose", "--no-session-persistence",
               *(flags if flags is not None else ["--allowedTools", TOOLS])]
    full_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), **OFFLINE_ENV,
                "ANTHROPIC_BASE_URL": server.root_url, **(env or {})}
    done = subprocess.run(command, cwd=workspace, env=full_env, capture_output=True, text=True,
                          timeout=timeout_s, stdin=subprocess.DEVNULL)
    return CliRun(command, done.returncode, done.stdout, done.stderr, list(server.records))


class UnixSocketBridge:
    """A Unix socket at ``path`` whose connections are piped to 127.0.0.1:``port``.

    The CLI in a sandbox without network reaches the model only through it
    (``ANTHROPIC_UNIX_SOCKET=path`` with ``ANTHROPIC_BASE_URL=http://localhost``): a socket file
    in a folder the sandbox may write is reachable from its own network namespace."""

    def __init__(self, path: Path, port: int) -> None:
        self.path, self.port = path, port
        self._server: socket.socket | None = None

    def __enter__(self) -> "UnixSocketBridge":
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(str(self.path))
        os.chmod(self.path, 0o777)  # the sandbox runs as a uid of its own
        self._server.listen(16)
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        if self._server is not None:
            self._server.close()
        self.path.unlink(missing_ok=True)

    def _accept(self) -> None:
        assert self._server is not None
        while True:
            try:
                client, _ = self._server.accept()
                upstream = socket.create_connection(("127.0.0.1", self.port))
            except OSError:
                return
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=_pipe, args=(source, sink), daemon=True).start()


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        try:
            sink.shutdown(socket.SHUT_WR)
        except OSError:
            pass


# -- recording the test data -------------------------------------------------------------

RECORDINGS: dict[str, dict[str, Any]] = {
    # name: flags (None: --allowedTools with the four tools), the server's fail_plan, extra env
    "skill_read_bash_write": {"flags": None},
    "permission_denied": {"flags": []},  # no permission flag: Bash and Write are refused
    "api_error_529": {"flags": None, "fail_plan": ["ok", "529", "529"], "env": {"CLAUDE_CODE_MAX_RETRIES": "1"}},
    "max_turns": {"flags": ["--allowedTools", TOOLS, "--max-turns", "2"]},
}
WORKSPACE_STAND_IN = "/workspace"  # recorded paths are rewritten to these (no machine's paths in test data)
HOME_STAND_IN = "/home/agent"


def record(destination: Path) -> None:
    cli = find_claude_cli()
    if cli is None:
        raise SystemExit("no Claude Code CLI: npm install --prefix .npm-tools @anthropic-ai/claude-code@" + CLI_VERSION)
    destination.mkdir(parents=True, exist_ok=True)
    for name, options in RECORDINGS.items():
        with tempfile.TemporaryDirectory(prefix="cc-rec-") as tmp:
            workspace, home = Path(tmp) / "ws", Path(tmp) / "home"
            workspace.mkdir()
            home.mkdir()
            install_skill(workspace)
            with FakeAnthropicServer(script=skill_script(workspace), fail_plan=options.get("fail_plan")) as server:
                run = run_cli(cli, workspace, home, server, flags=options["flags"], env=options.get("env"))
            text = (run.stdout.replace(str(workspace), WORKSPACE_STAND_IN).replace(str(home), HOME_STAND_IN)
                    .replace(re.sub(r"[^A-Za-z0-9]", "-", str(workspace)), "-workspace"))
            (destination / f"{name}.jsonl").write_text(text)
            print(f"{name}: exit {run.returncode}, {len(text.splitlines())} lines, "
                  f"{len(run.requests)} requests, stderr {run.stderr.strip()[:200]!r}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "record":
        record(Path(sys.argv[2]))
    else:
        print(json.dumps({"usage": "python -m tests.support.claude_code_cli record DESTINATION"}))
