"""Run every promptfoo corpus config that validates through ``eval-pipelines run``.

``validate`` is the issue's measure; this checks that a config that validates also runs: each
config (tests/data/promptfoo_examples) that loads and needs no targets.yaml target runs against
the local fake OpenAI server (tests/support/fake_openai.py; OPENAI_BASE_URL and LITELLM_API_BASE
point there), in a temporary folder with its own DuckDB file. Printed per config: the exit code,
cases, output rows (and error rows), grades by status and the distinct error reasons; then the
totals. A traceback anywhere is reported. Nothing is timed.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/corpus_runs.py [--json out.json]
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import io
import json
import os
import shutil
import tempfile
import traceback
from pathlib import Path

import duckdb

from eval_pipelines.cli import main
from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.formats.loader import load_suite
from tests.support.fake_openai import FakeOpenAIServer

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "data" / "promptfoo_examples"


def run_one(config: Path) -> dict:
    work = Path(tempfile.mkdtemp(prefix="corpus-run-"))
    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    try:
        os.chdir(work)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["run", str(config), "--db", str(work / "r.duckdb")])
    except BaseException:  # noqa: BLE001 - a traceback is what this script looks for
        code, err = "exception", io.StringIO(traceback.format_exc())
    finally:
        os.chdir(cwd)
    info: dict = {"code": str(code)}
    if (work / "r.duckdb").exists():
        with duckdb.connect(str(work / "r.duckdb"), read_only=True) as con:
            info["cases"] = con.execute("SELECT count(*) FROM test_cases").fetchone()[0]
            info["outputs"], info["error_rows"] = con.execute(
                "SELECT count(*), count(error) FROM model_outputs").fetchone()
            info["grades"] = dict(con.execute("SELECT status, count(*) FROM grades GROUP BY 1").fetchall())
            info["error_reasons"] = [r[0][:160] for r in con.execute(
                "SELECT DISTINCT reason FROM grades WHERE status = 'error' LIMIT 5").fetchall()]
    text = out.getvalue() + err.getvalue()
    if "Traceback" in text:
        info["traceback"] = text[-2000:]
    shutil.rmtree(work, ignore_errors=True)
    return info


def main_() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write the per-config results here")
    args = parser.parse_args()
    results: dict[str, object] = {}
    with FakeOpenAIServer() as fake:
        os.environ.update(OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY="sk-fake", LITELLM_API_BASE=fake.base_url)
        for config in sorted(CORPUS.rglob("promptfooconfig*.yaml")):
            name = str(config.relative_to(CORPUS))
            try:
                _, warnings = load_suite(config)
            except SpecErrors:
                continue
            if any("runs only if targets.yaml" in w for w in warnings):
                results[name] = "needs a targets.yaml target"
                continue
            results[name] = info = run_one(config)
            print(name, json.dumps(info)[:400], flush=True)
    ran = {k: v for k, v in results.items() if isinstance(v, dict)}
    print(f"\n{len(results)} configs validate; {len(results) - len(ran)} need a targets.yaml target; {len(ran)} ran")
    print("exit codes:", dict(collections.Counter(v["code"] for v in ran.values())))
    print("with a traceback:", sorted(k for k, v in ran.items() if "traceback" in v))
    print("grades by status:", dict(sum((collections.Counter(v.get("grades", {})) for v in ran.values()),
                                         collections.Counter())))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, default=str))


if __name__ == "__main__":
    main_()
