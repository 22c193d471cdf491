"""Differential harness: users' promptfoo configs run by promptfoo itself and by ``eval-pipelines run``.

For each config of tests/data/promptfoo_users (see its README and MANIFEST.tsv) whose providers are
OpenAI-compatible (``openai:``), ``echo`` or scripts (the stand-ins the corpus holds), both tools run
against the same local fake OpenAI server (tests/support/fake_openai.py, which answers with the last
user message, so an output depends only on the request). The server records every request body.
Compared:

* **runs**: promptfoo produced results, and ``eval-pipelines run`` loaded the config and stored
  outputs (a load refusal is listed with its one line);
* **requests**: the model requests (the config's own models; grading requests are left out, as the
  two tools' judges differ by design) as multisets of ``{model, messages, parameters}``; a promptfoo
  request is identical when ours holds the same body (``stream`` and ``seed: null`` aside);
* **verdicts**: for each test × prompt × provider whose assertions are all deterministic (no model
  grading, no latency or cost), promptfoo's ``success`` against our case verdict, keyed by the
  test's variables, the prompt's index and the provider's index.

    PYTHONPATH=$PWD .venv/bin/python -m benchmarks.promptfoo_differential [--only SLUG ...] [--write-docs]

promptfoo is not a dependency: install it as docs/benchmarks.md says (``.bench-tools``, or
``$BENCH_TOOLS_DIR``); without it the script says so and exits 2.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import yaml

from tests.support.fake_openai import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "promptfoo_users"
DOCS = ROOT / "docs" / "promptfoo.md"
MARK_START, MARK_END = "<!-- differential: made by benchmarks/promptfoo_differential.py -->", "<!-- /differential -->"
# promptfoo assertion types whose verdict depends on a model or on the clock: left out of the comparison.
NOT_DETERMINISTIC = re.compile(r"^(not-)?(llm-rubric|model-graded-.*|factuality|g-eval|answer-relevance|context-.*|"
                               r"similar.*|moderation|select-best|max-score|human|latency|cost|classifier|pi|"
                               r"guardrails|search-rubric|conversation-relevance|perplexity.*|webhook)$")
# Our graders of those (a case holding one, also inside `transformed` or a group, is left out).
OURS_NOT_DETERMINISTIC = re.compile(r'"type":\s*"(llm_judge|model_grader|rubrics|semantic_sim|with_provider|moderation|'
                                    r'select_best|max_score|human|latency|cost|perplexity|perplexity_score|webhook|'
                                    r'agent_judge|code_judge|redteam|conversation_relevance|rag_[a-z_]+)"')
# Request keys that say nothing about what is asked (transport switches).
TRANSPORT_KEYS = {"stream", "stream_options"}


def tools_dir() -> Path:
    return Path(os.environ.get("BENCH_TOOLS_DIR") or ROOT / ".bench-tools")


def promptfoo_binary() -> Path | None:
    binary = tools_dir() / "node_modules" / ".bin" / "promptfoo"
    return binary if binary.exists() else None


@dataclass
class Outcome:
    slug: str
    in_scope: bool = True
    reason: str = ""
    promptfoo_ran: bool = False
    ours_ran: bool = False
    refusal: str = ""
    requests_promptfoo: int = 0
    requests_identical: int = 0
    verdicts: int = 0
    verdicts_agree: int = 0
    differences: list[str] = field(default_factory=list)


def scope(config: dict[str, Any]) -> str:
    """Why a config is out of scope ("" when in): a provider that is not openai:, echo or a script."""
    providers = config.get("providers", config.get("targets"))
    if isinstance(providers, str):
        providers = [providers]
    for item in providers or []:
        pid = item if isinstance(item, str) else (item or {}).get("id") if isinstance(item, dict) else None
        if isinstance(item, dict) and pid is None and len(item) == 1:
            pid = next(iter(item))
        if not isinstance(pid, str):
            return f"provider {item!r}"
        if pid.startswith("file://") and pid.endswith((".yaml", ".yml", ".json")):
            continue
        if not (pid.startswith("openai:") and not pid.startswith(("openai:assistant", "openai:realtime",
                                                                 "openai:responses", "openai:image"))
                or pid == "echo" or (pid.startswith(("file://", "python:")) and ".py" in pid)):
            return f"provider {pid}"
    return ""


def _numbers(value: Any) -> Any:
    """JSON numbers as JSON compares them: 0 and 0.0 are one value (JavaScript has no int/float)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_numbers(v) for v in value]
    return value


def canonical(body: dict[str, Any]) -> str:
    kept = {k: v for k, v in body.items() if k not in TRANSPORT_KEYS and not (k == "seed" and v is None)}
    return json.dumps(_numbers(kept), sort_keys=True, ensure_ascii=False)


def model_requests(bodies: list[dict[str, Any] | None], models: set[str]) -> list[str]:
    return [canonical(b) for b in bodies if isinstance(b, dict) and b.get("model") in models]


def config_models(config: dict[str, Any], folder: Path) -> set[str]:
    providers = config.get("providers", config.get("targets")) or []
    if isinstance(providers, str):
        providers = [providers]
    models = set()
    for item in providers:
        pid = item if isinstance(item, str) else item.get("id") if isinstance(item, dict) else None
        if isinstance(pid, str) and pid.startswith("file://") and pid.endswith((".yaml", ".yml", ".json")):
            file = folder / pid.removeprefix("file://")
            loaded = yaml.safe_load(file.read_text()) if file.is_file() else []
            models |= config_models({"providers": loaded if isinstance(loaded, list) else [loaded]}, folder)
        elif isinstance(pid, str) and pid.startswith("openai:"):
            models.add(pid.split(":")[-1])
    return models


def run_promptfoo(binary: Path, work: Path, server: FakeOpenAIServer) -> tuple[dict[str, Any] | None, str]:
    node = tools_dir() / "node22" / "node_modules" / ".bin"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "PROMPTFOO_"))}
    env.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-differential", PROMPTFOO_DISABLE_TELEMETRY="1",
               PROMPTFOO_DISABLE_UPDATE="1", PROMPTFOO_CONFIG_DIR=str(work / ".promptfoo"), NO_COLOR="1",
               PROMPTFOO_DISABLE_SHARING="1", PROMPTFOO_DISABLE_REDTEAM_REMOTE_GENERATION="1",
               PATH=f"{node}{os.pathsep}{os.environ.get('PATH', '')}" if node.exists() else os.environ["PATH"])
    done = subprocess.run([str(binary), "eval", "-c", "promptfooconfig.yaml", "--no-cache", "-j", "1",
                           "--no-progress-bar", "--no-table", "--no-write", "-o", "pf-out.json"],
                          cwd=work, env=env, capture_output=True, text=True, timeout=600)
    out = work / "pf-out.json"
    if not out.exists():
        lines = [line.strip() for line in (done.stderr + done.stdout).splitlines() if line.strip()]
        errors = [line for line in lines if re.match(r"^(\w*(Error|Exception)\b|\[?error)", line, re.I)
                  or re.search(r"\bError: ", line) and not line.startswith(("at ", "throw "))]
        return None, (errors or lines or ["no output"])[0][:300]
    return json.loads(out.read_text()), ""


def run_ours(work: Path, server: FakeOpenAIServer) -> tuple[Path | None, str]:
    from eval_pipelines.cli import main
    saved = {k: os.environ.get(k) for k in ("OPENAI_BASE_URL", "OPENAI_API_KEY")}
    os.environ.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-differential")
    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    db = work / "ours.duckdb"
    try:
        os.chdir(work)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            main(["run", str(work / "promptfooconfig.yaml"), "--db", str(db), "--no-cache", "--concurrency", "1"])
    except SystemExit:
        pass
    finally:
        os.chdir(cwd)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    text = (err.getvalue() + out.getvalue()).strip()
    if not db.exists():
        lines = [line for line in text.splitlines() if line.strip() and not line.startswith("warning")]
        return None, (lines[0] if lines else text[:300])
    return db, ""


def _vars_key(variables: Any) -> str:
    return json.dumps(variables or {}, sort_keys=True, ensure_ascii=False, default=str)


def promptfoo_verdicts(result: dict[str, Any], provider_index: dict[str, int]) -> dict[str, list[bool]]:
    verdicts: dict[str, list[bool]] = collections.defaultdict(list)
    for row in result["results"]["results"]:
        asserts = (row.get("testCase") or {}).get("assert") or []
        if not asserts or any(NOT_DETERMINISTIC.match(str(a.get("type", ""))) for a in asserts):
            continue
        if row.get("error") and not row.get("gradingResult"):
            continue
        provider = row.get("provider") or {}
        index = provider_index.get(provider.get("label") or "", provider_index.get(provider.get("id") or "", -1))
        verdicts[f"{_vars_key(row.get('vars'))}|p{row.get('promptIdx', 0)}|t{index}"].append(bool(row["success"]))
    return verdicts


def our_verdicts(db: Path) -> tuple[dict[str, list[bool]], int]:
    verdicts: dict[str, list[bool]] = collections.defaultdict(list)
    with duckdb.connect(str(db), read_only=True) as con:
        targets = [r[0] for r in con.execute("SELECT DISTINCT target FROM model_outputs").fetchall()]
        spec = con.execute("SELECT spec FROM suites LIMIT 1").fetchone()
        order = json.loads(spec[0]).get("execution", {}).get("targets") if spec else None
        index = {t: i for i, t in enumerate(order or sorted(targets))}
        rows = con.execute("""
            SELECT c.test_id, c.metadata, r.target, r.verdict = 'pass'
            FROM test_results r JOIN test_cases c USING (test_id) WHERE r.verdict IS NOT NULL
        """).fetchall()
        outputs = con.execute("SELECT count(*) FROM model_outputs").fetchone()[0]
        assertions = dict(con.execute("SELECT test_id, CAST(assertions AS VARCHAR) FROM test_cases").fetchall())
    for test_id, metadata, target, passed in rows:
        if OURS_NOT_DETERMINISTIC.search(assertions.get(test_id) or "") or assertions.get(test_id) in (None, "[]"):
            continue
        meta = json.loads(metadata) if isinstance(metadata, str) else metadata or {}
        prompt = int(m.group(1)) - 1 if (m := re.search(r"-p(\d+)$", test_id)) else 0
        verdicts[f"{_vars_key(meta.get('vars'))}|p{prompt}|t{index.get(target, -1)}"].append(bool(passed))
    return verdicts, outputs


def provider_indexes(config: dict[str, Any], folder: Path) -> dict[str, int]:
    providers = config.get("providers", config.get("targets")) or []
    if isinstance(providers, str):
        providers = [providers]
    out: dict[str, int] = {}
    flat: list[Any] = []
    for item in providers:
        pid = item if isinstance(item, str) else item.get("id") if isinstance(item, dict) else None
        if isinstance(pid, str) and pid.startswith("file://") and pid.endswith((".yaml", ".yml", ".json")):
            file = folder / pid.removeprefix("file://")
            loaded = yaml.safe_load(file.read_text()) if file.is_file() else []
            flat += loaded if isinstance(loaded, list) else [loaded]
        else:
            flat.append(item)
    for i, item in enumerate(flat):
        if isinstance(item, str):
            out.setdefault(item, i)
        elif isinstance(item, dict):
            for name in (item.get("label"), item.get("id")):
                if isinstance(name, str):
                    out.setdefault(name, i)
    return out


def manifest() -> list[dict[str, str]]:
    """The corpus's rows: folder, repository, path (of the config inside the folder), commit, scripts."""
    lines = (CORPUS / "MANIFEST.tsv").read_text().splitlines()
    head = lines[0].split("\t")
    return [dict(zip(head, line.split("\t"))) for line in lines[1:] if line.strip()]


def compare(row: dict[str, str], binary: Path) -> Outcome:
    slug = row["folder"]
    folder = CORPUS / slug
    config_path = folder / row["path"]
    config = yaml.safe_load(config_path.read_text())
    outcome = Outcome(slug)
    outcome.reason = scope(config) if isinstance(config, dict) else "not a mapping"
    absent = [s for s in (row.get("scripts not copied") or "").split() if not (folder / s).exists()]
    if not outcome.reason and absent:  # third-party code is not copied; no stand-in written for it
        outcome.reason = f"reads scripts not in the corpus (third-party code, no stand-in): {', '.join(absent)}"
    if outcome.reason:
        outcome.in_scope = False
        return outcome
    here = config_path.parent
    models = config_models(config, here)
    relative = config_path.parent.relative_to(folder)
    work = Path(tempfile.mkdtemp(prefix="pf-diff-"))
    try:
        with FakeOpenAIServer(latency_s=0.0) as server:
            shutil.copytree(folder, work / "pf")
            result, problem = run_promptfoo(binary, work / "pf" / relative, server)
            theirs = model_requests(list(server.requests), models)
            server.reset_counts()
            shutil.copytree(folder, work / "ours")
            db, refusal = run_ours(work / "ours" / relative, server)
            ours = model_requests(list(server.requests), models)
        outcome.promptfoo_ran = result is not None and bool(result["results"]["results"])
        if result is None:
            outcome.differences.append(f"promptfoo: {problem}")
        outcome.ours_ran = db is not None
        outcome.refusal = refusal.replace(str(work / "ours"), slug)
        if outcome.promptfoo_ran and outcome.ours_ran:
            remaining = collections.Counter(ours)
            outcome.requests_promptfoo = len(theirs)
            for body in theirs:
                if remaining[body] > 0:
                    remaining[body] -= 1
                    outcome.requests_identical += 1
                elif len(outcome.differences) < 3:
                    outcome.differences.append(f"promptfoo sent, we did not: {body[:300]}")
            if outcome.requests_identical < len(theirs) and ours:
                extra = [b for b, n in remaining.items() if n > 0]
                if extra:
                    outcome.differences.append(f"we sent, promptfoo did not: {extra[0][:300]}")
            mine, _ = our_verdicts(db)
            for key, values in promptfoo_verdicts(result, provider_indexes(config, here)).items():
                if key not in mine:
                    continue
                outcome.verdicts += len(values)
                same = sum(a == b for a, b in zip(sorted(values), sorted(mine[key])))
                outcome.verdicts_agree += same
                if same < len(values) and len(outcome.differences) < 6:
                    outcome.differences.append(f"verdicts differ at {key[:200]}: promptfoo {values}, ours {mine[key]}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return outcome


def figures(outcomes: list[Outcome]) -> dict[str, Any]:
    scoped = [o for o in outcomes if o.in_scope]
    pf_ran = [o for o in scoped if o.promptfoo_ran]
    both = [o for o in pf_ran if o.ours_ran]
    requests = sum(o.requests_promptfoo for o in both)
    verdicts = sum(o.verdicts for o in both)
    return {
        "configs": len(outcomes), "in_scope": len(scoped), "promptfoo_runs": len(pf_ran), "both_run": len(both),
        "run_share": len(both) / len(pf_ran) if pf_ran else 0.0,
        "requests": requests, "requests_identical": sum(o.requests_identical for o in both),
        "verdicts": verdicts, "verdicts_agree": sum(o.verdicts_agree for o in both),
        "refusals": {o.slug: o.refusal for o in scoped if o.refusal},
        "out_of_scope": {o.slug: o.reason for o in outcomes if not o.in_scope},
    }


def markdown(f: dict[str, Any], outcomes: list[Outcome]) -> str:
    pct = lambda a, b: f"{a / b:.0%}" if b else "n/a"  # noqa: E731
    lines = [MARK_START, "",
             f"Measured on {f['configs']} users' configs (tests/data/promptfoo_users, MANIFEST.tsv), promptfoo "
             "0.121 against `eval-pipelines run`, both on the same local fake OpenAI server:", "",
             "| measure | figure | target |", "|---|---|---|",
             f"| configs in scope (openai:, echo, scripts) | {f['in_scope']} of {f['configs']} | |",
             f"| promptfoo runs them | {f['promptfoo_runs']} | |",
             f"| of those, run here too | {f['both_run']} ({pct(f['both_run'], f['promptfoo_runs'])}) | ≥ 90% |",
             f"| model requests identical (messages and parameters) | {f['requests_identical']} of {f['requests']} "
             f"({pct(f['requests_identical'], f['requests'])}) | ≥ 95% |",
             f"| deterministic verdicts agree (test × prompt × provider) | {f['verdicts_agree']} of {f['verdicts']} "
             f"({pct(f['verdicts_agree'], f['verdicts'])}) | 100% |", ""]
    if f["refusals"]:
        lines += ["Refused here (each one line):", ""]
        lines += [f"- `{slug}`: {text.replace(str(ROOT), '.')}" for slug, text in sorted(f["refusals"].items())]
        lines.append("")
    reasons = collections.Counter(re.sub(r":.*", "", r) for r in f["out_of_scope"].values())
    lines += ["Out of scope: " + ", ".join(f"{n} × {why}" for why, n in reasons.most_common()) + ".", ""]
    lines += ["Differences left, and why promptfoo did not run a config (first few per config):", ""]
    for o in outcomes:
        for d in o.differences[:3]:
            lines.append(f"- `{o.slug}`: {d.replace(str(ROOT), '.')[:300]}")
    lines += ["", MARK_END]
    return "\n".join(lines)


def write_docs(text: str) -> None:
    doc = DOCS.read_text()
    if MARK_START in doc:
        head, rest = doc.split(MARK_START, 1)
        doc = head + text + rest.split(MARK_END, 1)[1]
    else:
        doc += "\n## Users' configs, promptfoo side by side\n\n" + text + "\n"
    DOCS.write_text(doc)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="corpus folders (slugs) to run")
    parser.add_argument("--write-docs", action="store_true", help="write the figures into docs/promptfoo.md")
    parser.add_argument("--json", help="write every outcome as JSON")
    args = parser.parse_args(argv)
    binary = promptfoo_binary()
    if binary is None:
        print(f"promptfoo is not installed in {tools_dir()} (see docs/benchmarks.md, Reproduce)")
        return 2
    rows = [r for r in manifest() if not args.only or r["folder"] in args.only]
    outcomes = []
    for row in rows:
        try:
            outcome = compare(row, binary)
        except Exception as exc:  # noqa: BLE001 - one config's failure is recorded, the others still run
            outcome = Outcome(row["folder"], differences=[f"harness: {type(exc).__name__}: {str(exc)[:200]}"])
        outcomes.append(outcome)
        print(json.dumps(outcome.__dict__, ensure_ascii=False)[:600], flush=True)
    f = figures(outcomes)
    print(json.dumps({k: v for k, v in f.items() if k not in ("refusals", "out_of_scope")}))
    if args.json:
        Path(args.json).write_text(json.dumps({"figures": f, "outcomes": [o.__dict__ for o in outcomes]}, indent=1))
    if args.write_docs:
        write_docs(markdown(f, outcomes))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
