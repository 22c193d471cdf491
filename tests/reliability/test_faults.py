"""API faults (issue #9): a Dagster run against the local OpenAI-compatible
server while one response in five is a fault.

The model target and the judge talk to the same ``FakeOpenAIServer``:
``fail_plan`` serves every fault kind once first (429 with and without
``Retry-After``, 500, connection reset, timeout, truncated body, non-JSON body,
prose), then ``fault_rate=0.2`` draws faults from the same list for every later
request, judge calls included. The judge also answers one case in prose every
time. Every case must end as a grade or an error row with its reason, and the
counts must reconcile: cases in = ``model_outputs`` rows = ``test_results``
rows, grades = graded outputs x assertions, as the run's metadata and the
``every_case_has_an_output`` check report them.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

import eval_pipelines.run.targets.openai_compat as openai_compat
from eval_pipelines.definitions import build_definitions
from eval_pipelines.defs.partitions import skill_versions
from eval_pipelines.store.connection import connect
from tests.support.fake_openai import FakeOpenAIServer, last_user_message

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]
FAULTS = ["429", "429-no-retry-after", "500", "reset", "timeout", "truncated", "not-json", "prose"]
N = 60
KEY = "faulty@1.0.0"
PROSE_CASE = "question 7."


def responder(body: dict[str, Any]) -> str:
    text = last_user_message(body)
    if body.get("model") == "judge-model":
        if PROSE_CASE in json.dumps(body.get("messages")):  # re-asks too: prose every time
            return "Honestly the answer looks fine to me, I would give it a good mark."
        return json.dumps({"score": 1, "passed": True, "reasoning": "answers the question"})
    return f"ok, {text}"


def make_skill(root: Path, base_url: str) -> None:
    skill = root / "skills" / "faulty"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: faulty\ndescription: Faults.\nversion: 1.0.0\n---\nAnswer.\n")
    lines = ["judge: judge", "execution:", "  targets: [model]", "tests:"]
    for i in range(N):
        lines += [f"  - id: c{i:02d}", f"    input: question {i}.", "    assert:",
                  "      - type: contains", "        value: question",
                  "      - type: llm_judge", "        prompt: Does {output} answer {input}?"]
    (skill / "eval.yaml").write_text("\n".join(lines) + "\n")
    common = f"    type: openai\n    base_url: {base_url}\n    max_retries: 1\n    timeout_s: 0.5\n" \
             "    concurrency: 8\n    api_key_env: FAKE_KEY_NOT_SET\n"
    (skill / "targets.yaml").write_text(f"targets:\n  - name: model\n    model: fake\n{common}"
                                        f"  - name: judge\n    model: judge-model\n{common}")


def test_one_response_in_five_is_a_fault_and_no_case_is_lost(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(openai_compat, "BACKOFF_BASE_S", 0.01)
    for name in ("EVAL_PIPELINES_SKILLS_DIR", "EVAL_PIPELINES_DB", "EVAL_PIPELINES_HOME", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    db = tmp_path / "results.duckdb"
    with FakeOpenAIServer(fail_plan=FAULTS, fault_rate=0.2, faults=FAULTS, seed=9, hang_s=2.0,
                          retry_after_s=0.2, responder=responder) as server:
        make_skill(tmp_path, server.base_url)
        with dg.DagsterInstance.ephemeral() as instance:
            instance.add_dynamic_partitions(skill_versions.name, [KEY])
            job = build_definitions(str(tmp_path), str(db)).resolve_job_def("evaluate_skill_version")
            started = time.perf_counter()
            result = job.execute_in_process(
                partition_key=dg.MultiPartitionKey({"date": "2026-11-20", "skill_version": KEY}),
                instance=instance, raise_on_error=False,
                run_config={"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}})
            elapsed = time.perf_counter() - started
        served = list(server.faults_served)
        requests = server.request_count
        judge_requests = sum(1 for body in server.requests if body and body.get("model") == "judge-model")
    assert result.success, [e.message for e in result.all_events if e.is_step_failure]
    assert set(FAULTS) <= set(served)

    with connect(db, read_only=True) as con:
        outputs = con.execute("SELECT test_id, output, error FROM model_outputs").fetchall()
        results = con.execute("SELECT test_id, status, reason FROM test_results").fetchall()
        grades = con.execute("SELECT test_id, assertion_type, status, reason FROM grades").fetchall()
    errored = {tid for tid, _, error in outputs if error is not None}
    # Cases in = rows out, at every stage.
    assert sorted(t for t, *_ in outputs) == sorted(t for t, *_ in results) == [f"c{i:02d}" for i in range(N)]
    assert len(grades) == 2 * (N - len(errored))
    for tid, output, error in outputs:
        assert (output is None) != (error is None), tid
        if error:
            assert "attempt" in error, error  # names what failed and after how many attempts
    for tid, status, reason in results:
        assert status in ("graded", "error") and reason, (tid, status, reason)
        assert (status == "error") >= (tid in errored)
    judge_errors = {tid: reason for tid, kind, status, reason in grades if kind == "llm_judge" and status == "error"}
    for tid, kind, status, reason in grades:
        assert status in ("graded", "error") and reason, (tid, kind, status, reason)
    if "c07" not in errored:
        # Prose is an error quoting the last reply: the responder's prose, or the server's own "prose"
        # fault when the injector picked that judge call -- unless two faults in a row hit one of its
        # judge calls first (about one run in ten), which is an error naming the attempts.
        assert "c07" in judge_errors
        reason = judge_errors["c07"]
        quoted = "Honestly" in reason or server.prose_text[:40] in reason
        assert quoted or "attempt(s)" in reason, reason

    # What the run reported matches what the tables hold.
    (check,) = [e for e in result.get_asset_check_evaluations() if e.check_name == "every_case_has_an_output"]
    assert check.passed
    assert check.metadata["rows"].value == check.metadata["expected_rows"].value == N
    assert check.metadata["errors"].value == len(errored)
    (outputs_event,) = [e for e in result.get_asset_materialization_events()
                        if e.asset_key.to_user_string() == "model_outputs"]
    meta = outputs_event.materialization.metadata
    assert meta["dagster/row_count"].value == N and meta["errors"].value == len(errored)
    kinds = {k: served.count(k) for k in sorted(set(served))}
    print(f"\nFIGURES api faults: cases_in={N} model_output_rows={len(outputs)} test_result_rows={len(results)} "
          f"error_rows={len(errored)} grades={len(grades)} judge_error_grades={len(judge_errors)} "
          f"requests={requests} (judge {judge_requests}) faults_served={kinds} seconds={elapsed:.1f}")
