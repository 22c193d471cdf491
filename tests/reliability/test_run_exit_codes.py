"""`run`'s documented exit codes for a busy database and for a run in which every case
errored (issue 19): one line on standard error, never a traceback, never a silent wait."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Iterator

import pytest

from eval_pipelines.cli import main
from eval_pipelines.analysis.exit_codes import ExitCode
from eval_pipelines.store.connection import connect

pytestmark = pytest.mark.timeout(180)


def skill(root: Path, program: str) -> Path:
    folder = root / "skills" / "exit-codes"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: exit-codes\ndescription: Exit codes.\nversion: 1.0.0\n---\n")
    (folder / "prog.py").write_text(program)
    (folder / "eval.yaml").write_text("tests:\n" + "".join(
        f"  - id: c{i}\n    input: hello\n    assert:\n      - type: contains\n        value: hello\n"
        for i in range(3)))
    (folder / "targets.yaml").write_text("targets:\n  - name: prog\n    type: command\n"
                                         "    command: [python, prog.py]\n    timeout_s: 10\n")
    return folder


def test_every_case_an_error_row_exits_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = skill(tmp_path, "import sys\nsys.stdin.read()\nsys.exit('broken skill')\n")
    code = main(["--root", str(tmp_path), "run", str(folder), "--db", str(tmp_path / "r.duckdb"), "--no-cache"])
    out = capsys.readouterr().out
    assert code == ExitCode.ALL_ERRORS == 4, out
    assert "every one of the 3 model calls ended in an error" in out


def test_a_working_skill_without_threshold_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = skill(tmp_path, "import sys\nprint(sys.stdin.read())\n")
    code = main(["--root", str(tmp_path), "run", str(folder), "--db", str(tmp_path / "r.duckdb"), "--no-cache"])
    assert code == ExitCode.OK, capsys.readouterr().out


@contextmanager
def held_open(db: Path) -> Iterator[None]:
    """Another process holds the DuckDB file open for writing while the block runs."""
    with connect(db):
        pass
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import duckdb, sys
        con = duckdb.connect({str(db)!r})
        print("holding", flush=True)
        sys.stdin.read()
        """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "holding"
        yield
    finally:
        holder.communicate("", timeout=30)


def test_a_busy_database_is_announced_and_ends_in_one_line(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    folder = skill(tmp_path, "import sys\nprint(sys.stdin.read())\n")
    db = tmp_path / "r.duckdb"
    with held_open(db):
        monkeypatch.setenv("EVAL_PIPELINES_DB_WAIT_S", "1")
        code = main(["--root", str(tmp_path), "run", str(folder), "--db", str(db), "--no-cache"])
    captured = capsys.readouterr()
    assert code == ExitCode.DATABASE_BUSY == 5, captured
    assert "Traceback" not in captured.err + captured.out
    errors = [line for line in captured.err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "is busy" in errors[0] and "retry later" in errors[0], captured.err
    assert "waiting up to 1 s" in captured.err  # said before waiting, not after


def test_cache_entries_kept_while_the_file_is_busy_are_counted_not_dropped(tmp_path: Path) -> None:
    """The response cache never waits on the lock during the model phase; entries it could not
    write stay buffered (``unwritten``), are written at the next flush, and the engine warns
    about any still unwritten at the end instead of losing them without a word."""
    from eval_pipelines.run.cache import ResponseCache
    from eval_pipelines.run.targets.base import ModelOutput

    db = tmp_path / "cache.duckdb"
    cache = ResponseCache(str(db))
    with held_open(db):
        for i in range(3):
            cache._pending.append({  # what put() buffers
                "request_hash": f"h{i}", "target": "t", "model": "m", "output": f"answer {i}",
                "latency_ms": 1.0, "prompt_tokens": 1, "completion_tokens": 1, "cost_usd": None,
                "llm_calls": 1, "tool_calls": 0, "trace": "[]", "created_at": datetime(2026, 1, 1)})
        cache.flush(0.0)
        assert cache.unwritten == 3 and cache.stored == 0
    cache.flush(5.0)
    assert cache.unwritten == 0 and cache.stored == 3
    cache.preload(["h0", "h1", "h2"])
    hit = cache.get("h1", type("R", (), {"test_id": "c", "trial": 0})(), "t")
    assert isinstance(hit, ModelOutput) and hit.output == "answer 1" and hit.cached


def test_one_key_twice_in_a_batch_is_written_once(tmp_path: Path) -> None:
    """Two targets with the same model and base URL ask identical requests: the same key twice in
    one flush. DuckDB refuses a key twice in one INSERT OR REPLACE; the whole batch was lost and
    a re-run paid again (seen as a flaky test_field_effects run). The last answer is kept."""
    from eval_pipelines.run.cache import ResponseCache

    db = tmp_path / "cache.duckdb"
    cache = ResponseCache(str(db))
    for i, key in enumerate(["same", "other", "same"]):
        cache._pending.append({
            "request_hash": key, "target": f"t{i}", "model": "m", "output": f"answer {i}",
            "latency_ms": 1.0, "prompt_tokens": 1, "completion_tokens": 1, "cost_usd": None,
            "llm_calls": 1, "tool_calls": 0, "trace": "[]", "created_at": datetime(2026, 1, 1)})
    cache.flush(5.0)
    assert cache.unwritten == 0 and cache.stored == 2
    cache.preload(["same", "other"])
    request = type("R", (), {"test_id": "c", "trial": 0})()
    assert cache.get("same", request, "t").output == "answer 2"
    assert cache.get("other", request, "t").output == "answer 1"
