"""Workspace setup/teardown scripts and command targets are the package's code (issue 19):
they run sandboxed, write only the workspace (and their own folder), see no key and
leave no process behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from eval_pipelines.run.sandbox.isolation import choose_isolation
from eval_pipelines.run.workspace import WorkspaceError, prepare, teardown
from eval_pipelines.suite.models import Message, Suite, TestCase, Workspace, WorkspaceScript
from tests.support.hostile import READ_ENVIRON, survivors_after

pytestmark = pytest.mark.timeout(120)
CANARY = "sk-FAKE-workspace-canary-0b5e55ed"
REPO = Path(__file__).resolve().parents[2]

SETUP = '''
import json, os, subprocess, sys
open("made-by-setup.txt", "w").write(os.environ["GREETING"])
try:
    open(os.environ["OUTSIDE"], "w").write("escaped")
    outside = "written"
except OSError as exc:
    outside = type(exc).__name__
subprocess.Popen(["/usr/bin/sleep" if os.path.exists("/usr/bin/sleep") else "/bin/sleep", sys.argv[1]],
                 start_new_session=True)
json.dump({"outside": outside, "cwd": os.getcwd(), "key_variable": "MY_API_KEY" in os.environ},
          open("setup-report.json", "w"))
'''


def suite(script: list[str], env: dict[str, str]) -> Suite:
    return Suite(name="ws", format="eval-yaml", source_file="eval.yaml",
                 tests=[TestCase(id="a", input=[Message(content="hi")])],
                 workspace=Workspace(setup=WorkspaceScript(script=script, environment=env),
                                     teardown=WorkspaceScript(script=["python", "hunt.py"])))


@pytest.fixture
def strong() -> str:
    isolation = choose_isolation()
    if not isolation.strong:
        pytest.skip(f"no strong sandbox level here ({isolation.label}); untrusted scripts are refused")
    return isolation.level


def test_setup_writes_the_workspace_only_and_leaves_nothing_running(tmp_path: Path, strong: str) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "setup.py").write_text(SETUP)
    (package / "hunt.py").write_text(READ_ENVIRON)
    marker = f"67.{uuid.uuid4().int % 10**12:012d}"
    outside = tmp_path / "outside.txt"
    folder = tmp_path / "workspace"
    space = prepare(suite(["python", "setup.py", marker], {"GREETING": "hello", "OUTSIDE": str(outside),
                                                            "MY_API_KEY": CANARY}), package, folder)
    assert (folder / "made-by-setup.txt").read_text() == "hello"
    report = json.loads((folder / "setup-report.json").read_text())
    assert report["cwd"] == str(folder.resolve())  # it started in the workspace
    assert report["outside"] != "written" and not outside.exists()
    assert report["key_variable"] is False  # a secret-looking variable is not handed over
    assert survivors_after(marker) == []  # its setsid child died with the script
    assert teardown(suite([], {}), package, space) is None


def test_a_hunting_setup_script_cannot_see_the_pipelines_key(tmp_path: Path, strong: str) -> None:
    """The pipeline process starts with the key in its environment; setup hunts /proc for it."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "hunt.py").write_text(READ_ENVIRON + "open('hunt.json', 'w').write(json.dumps(found))\n")
    program = ("import sys\nfrom pathlib import Path\nfrom eval_pipelines.run.workspace import prepare\n"
               "from eval_pipelines.suite.models import *\n"
               "s = Suite(name='ws', format='eval-yaml', source_file='e', tests=[TestCase(id='a', "
               "input=[Message(content='x')])], workspace=Workspace(setup=WorkspaceScript(script=['python', "
               "'hunt.py'])))\nprepare(s, Path(sys.argv[1]), Path(sys.argv[2]))\n")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(REPO), "OPENAI_API_KEY": CANARY}
    done = subprocess.run([sys.executable, "-c", program, str(package), str(tmp_path / "ws")], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads((tmp_path / "ws" / "hunt.json").read_text())
    assert [item for item in found if CANARY in item] == []


def test_a_failing_setup_is_a_workspace_error(tmp_path: Path, strong: str) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "bad.py").write_text("import sys\nsys.exit('no database for you')\n")
    with pytest.raises(WorkspaceError, match="setup exited with 1: no database for you"):
        prepare(suite(["python", "bad.py"], {}), package, tmp_path / "ws")
