"""What ``eval-pipelines run`` ends with: the failures with their reasons, the cases that flipped
against the baseline, the tallies and the duration, in each ``--format``; ``-q``; subset runs
(``--filter-pattern``, ``--filter-first-n``); progress piped and on a terminal; the help conventions.

The suite answers through the fake OpenAI-compatible server over real HTTP; the store is a
real DuckDB file, and every assertion on the summary is checked against what the tables hold.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path

import pytest

from eval_pipelines.analysis.exit_codes import ExitCode
from eval_pipelines.cli import main
from eval_pipelines.cli.progress import PlainProgress
from eval_pipelines.store.connection import connect

REPO = Path(__file__).resolve().parents[2]

SUITE = """\
name: capitals-quiz
version: {version}
description: Answers name the capital.
execution:
  targets: [local]
tests:
  - id: france
    description: the capital of France
    input: capital of France?
    assert: [{{type: contains, value: Paris}}]
  - id: spain
    input: capital of Spain?
    assert: [{{type: equals, value: Madrid}}]
  - id: italy
    input: capital of Italy?
    assert: [{{type: contains, value: Rome}}]
"""


def targets_yaml(base_url: str) -> str:
    return (f"targets:\n  - name: local\n    type: openai\n    model: fake-model\n"
            f"    base_url: {base_url}\n    api_key_env: FAKE_KEY\n    max_retries: 0\n")


@pytest.fixture
def quiz(tmp_path: Path, fake_openai, monkeypatch: pytest.MonkeyPatch) -> Path:  # noqa: ANN001
    folder = tmp_path / "evals"
    folder.mkdir()
    (folder / "quiz.yaml").write_text(SUITE.format(version="1.0.0"))
    (folder / "targets.yaml").write_text(targets_yaml(fake_openai.base_url))
    fake_openai.answers.update({"capital of France?": "Paris.", "capital of Spain?": "Barcelona",
                                "capital of Italy?": "Rome"})
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    monkeypatch.chdir(tmp_path)
    return folder / "quiz.yaml"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def two_versions(capsys: pytest.CaptureFixture[str], quiz: Path, fake_openai, db: Path,  # noqa: ANN001
                 *flags: str) -> tuple[int, str, str]:
    """1.0.0 fails spain; 1.1.0 fixes spain and breaks italy: one failure, two flips."""
    code, out, err = run(capsys, "run", str(quiz), "--db", str(db), "--no-cache")
    assert code == ExitCode.OK, out + err
    quiz.write_text(SUITE.format(version="1.1.0"))
    fake_openai.answers.update({"capital of Spain?": "Madrid", "capital of Italy?": "Milan"})
    return run(capsys, "run", str(quiz), "--db", str(db), "--no-cache", *flags)


def test_run_ends_with_failures_flips_tallies_and_duration(capsys: pytest.CaptureFixture[str], quiz: Path,
                                                           fake_openai, tmp_path: Path) -> None:  # noqa: ANN001
    db = tmp_path / "r.duckdb"
    code, out, err = two_versions(capsys, quiz, fake_openai, db)
    assert code == ExitCode.OK, out + err
    with connect(db, read_only=True) as con:
        failed = con.execute("SELECT test_id FROM test_results WHERE skill_version = 'capitals-quiz@1.1.0' "
                             "AND verdict <> 'pass'").fetchall()
    assert failed == [("italy",)]
    lines = out.splitlines()
    start = lines.index("Failures (1):")
    assert lines[start + 1] == "  FAIL italy: contains: missing ['Rome']"
    changed = next(i for i, line in enumerate(lines) if line.startswith("Changed against previous version "))
    assert lines[changed].startswith("Changed against previous version capitals-quiz@1.0.0 (")
    assert lines[changed].endswith(") (2):")
    # pass -> fail first, then fail -> pass; one trial each cannot be labelled on its own.
    assert lines[changed + 1:changed + 3] == ["  italy: pass → fail (not labelled on its own)",
                                              "  spain: fail → pass (not labelled on its own)"]
    assert "2 passed / 1 failed / 0 errors / 0 not evaluated (pass rate 67%)" in lines
    assert re.fullmatch(r"Duration: \d+\.\ds", lines[-1]), lines[-1]
    # Piped: no box drawing, no colour codes, and one progress line at the end of the model phase.
    assert "┃" not in out and "\x1b[" not in out
    assert "[3/3] 100% 0 errors 0 cached" in err


def test_an_equals_failure_shows_expected_and_actual(capsys: pytest.CaptureFixture[str], quiz: Path,
                                                     tmp_path: Path) -> None:
    code, out, _ = run(capsys, "run", str(quiz), "--db", str(tmp_path / "r.duckdb"), "--format", "json")
    summary = json.loads(out)  # standard output holds the JSON alone
    (failure,) = summary["failures"]
    assert failure["test_id"] == "spain" and failure["status"] == "graded"
    assert (failure["expected"], failure["actual"]) == ("Madrid", "Barcelona")
    assert failure["reason"] == 'equals: Expected output "Barcelona" to equal "Madrid"'
    assert (summary["passed"], summary["failed"], summary["errors"], summary["not_evaluated"]) == (2, 1, 0, 0)
    assert summary["flips"] == [] and summary["exit_code"] == 0 and summary["duration_s"] > 0


def test_json_flips_carry_the_direction_and_label(capsys: pytest.CaptureFixture[str], quiz: Path,
                                                  fake_openai, tmp_path: Path) -> None:  # noqa: ANN001
    code, out, err = two_versions(capsys, quiz, fake_openai, tmp_path / "r.duckdb", "--format", "json")
    summary = json.loads(out)
    assert [(f["test_id"], f["direction"], f["label"], f["comparison"]) for f in summary["flips"]] == [
        ("italy", "pass → fail", None, "previous_version"), ("spain", "fail → pass", None, "previous_version")]
    assert "DuckDB: " in err  # the human lines went to standard error


def test_quiet_and_none(capsys: pytest.CaptureFixture[str], quiz: Path, tmp_path: Path) -> None:
    db = tmp_path / "r.duckdb"
    code, out, _ = run(capsys, "run", str(quiz), "--db", str(db), "-q", "--no-progress")
    assert code == ExitCode.OK
    assert out.splitlines()[0] == "2 passed / 1 failed / 0 errors / 0 not evaluated (pass rate 67%)"
    assert out.splitlines()[1].startswith("Duration: ") and len(out.splitlines()) == 2
    code, out, err = run(capsys, "run", str(quiz), "--db", str(db), "--format", "none", "--no-progress")
    assert "passed /" not in out and "Failures" not in out and "[3/3]" not in err


def test_filter_pattern_and_first_n_run_a_subset(capsys: pytest.CaptureFixture[str], quiz: Path,
                                                 tmp_path: Path) -> None:
    db = tmp_path / "r.duckdb"
    # The pattern is searched in the id, the name and the description ("the capital of France").
    code, out, _ = run(capsys, "run", str(quiz), "--db", str(db), "--filter-pattern", "France|^ita")
    assert code == ExitCode.OK, out
    assert "Filtered out: 1 cases (not run)" in out and "2 passed / 0 failed" in out
    with connect(db, read_only=True) as con:
        ran = con.execute("SELECT test_id FROM model_outputs ORDER BY test_id").fetchall()
    assert ran == [("france",), ("italy",)]
    code, out, _ = run(capsys, "run", str(quiz), "--db", str(db), "--filter-first-n", "2", "--format", "json")
    summary = json.loads(out)
    assert summary["filtered_out"] == 1 and summary["passed"] + summary["failed"] == 2
    with connect(db, read_only=True) as con:
        ran = con.execute("SELECT test_id FROM model_outputs ORDER BY test_id").fetchall()
    assert ran == [("france",), ("spain",)]


def test_bad_filters_are_one_line_errors(capsys: pytest.CaptureFixture[str], quiz: Path, tmp_path: Path) -> None:
    code, out, _ = run(capsys, "run", str(quiz), "--db", str(tmp_path / "r.duckdb"), "--filter-pattern", "(")
    assert code == ExitCode.INVALID_INPUT
    assert out.startswith("--filter-pattern: ") and "is not a regular expression" in out and len(out.splitlines()) == 1
    code, out, _ = run(capsys, "run", str(quiz), "--db", str(tmp_path / "r.duckdb"), "--filter-pattern", "nothing")
    assert code == ExitCode.INVALID_INPUT and "no case of the 3 is left to run" in out
    with pytest.raises(SystemExit) as exit_:
        main(["run", str(quiz), "--filter-first-n", "0"])
    assert exit_.value.code == 2 and "1 or more" in capsys.readouterr().err


def test_plain_progress_prints_every_interval_and_at_the_end() -> None:
    import io

    now = [100.0]
    stream = io.StringIO()
    progress = PlainProgress(100, stream, interval_s=5.0, clock=lambda: now[0])
    for i in range(40):
        now[0] += 0.3  # 12 s for 40 outputs
        progress.advance(f"tc-{i:03d}", error=i < 2, cached=False)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2  # at 5 s and 10 s
    assert progress.line() == "[ 40/100]  40% 2 errors 0 cached, 12s elapsed, ETA 18s, last tc-039"
    progress.finish()  # the phase stopped early (failFast): the last line says where
    progress.finish()
    assert stream.getvalue().splitlines()[-1].startswith("[ 40/100]") and len(stream.getvalue().splitlines()) == 3
    stream = io.StringIO()
    whole = PlainProgress(3, stream, interval_s=3600.0, clock=lambda: now[0])
    for i in range(3):  # the last output prints the last line at once, whatever the interval
        whole.advance(f"tc-{i}", error=False, cached=True)
    whole.finish()  # the phase's end does not print it twice
    assert stream.getvalue().splitlines() == ["[3/3] 100% 0 errors 3 cached, 0s elapsed, last tc-2"]


def _run_in_a_terminal(args: list[str], env: dict[str, str], cwd: Path) -> str:
    """The command's output as a terminal shows it (a pseudo-terminal, 160 columns)."""
    master, slave = pty.openpty()
    import fcntl
    import struct
    import termios

    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 160, 0, 0))
    process = subprocess.Popen(args, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd, close_fds=True)
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 1.0)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        elif process.poll() is not None:
            break
    process.wait()
    os.close(master)
    return b"".join(chunks).decode("utf-8", "replace")


@pytest.mark.slow  # two interpreter starts
def test_on_a_terminal_the_summary_is_a_table_and_the_bar_stays(quiz: Path, fake_openai,  # noqa: ANN001
                                                                tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO), "FAKE_KEY": "sk-test", "TERM": "xterm-256color",
           "COLUMNS": "160"}
    env.pop("NO_COLOR", None)
    command = [sys.executable, "-m", "eval_pipelines.cli", "run", str(quiz), "--db", str(tmp_path / "r.duckdb")]
    screen = _run_in_a_terminal(command, env, tmp_path)
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen)
    assert "━" in plain and "100%" in plain and "3/3" in plain  # the bar, left on screen at the end
    assert "┃ Case" in plain and "Madrid" in plain and "Barcelona" in plain  # the failure table
    assert "2 passed / 1 failed / 0 errors / 0 not evaluated" in plain
    assert "\x1b[" in screen  # styled, unlike the piped form
    # No bright red bar: the complete part of the bar is drawn in cyan (SGR 36).
    assert "\x1b[38;5;197m" not in screen and "\x1b[38;2;249;38;114m" not in screen
    bar_line = next(line for line in screen.splitlines() if "━" in line and "3/3" in line)
    assert "\x1b[36m" in bar_line and not re.search(r"\x1b\[(3[1-5]|9[0-9]|38;)", bar_line), repr(bar_line)


# ---- help and version ----------------------------------------------------------------------

def test_version_and_help_conventions(capsys: pytest.CaptureFixture[str]) -> None:
    from eval_pipelines import __version__

    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0 and capsys.readouterr().out.strip() == f"eval-pipelines {__version__}"

    with pytest.raises(SystemExit):
        main(["--help"])
    top = capsys.readouterr().out
    assert "``" not in top and "examples:" in top and "exit codes:" in top
    assert "  3  gates met, but a significant regression" in top
    assert "docs/security.md" in top  # the sandbox paragraph, said once here

    for command in (["run"], ["validate"], ["demo"], ["report"], ["export"], ["grades", "export"]):
        with pytest.raises(SystemExit):
            main([*command, "--help"])
        text = capsys.readouterr().out
        assert "docs/security.md" not in text, command  # a one-line pointer instead
        assert "details: the top-level --help" in " ".join(text.split()), command
        if command != ["grades", "export"]:
            assert "examples:" in text and "exit codes:" in text, command

    with pytest.raises(SystemExit):
        main(["validate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "PATH a skill folder or .zip" in text and "-q, --quiet print only problems" in text
    assert "examples:" in text and "0 success" in text and "2 invalid input" in text
