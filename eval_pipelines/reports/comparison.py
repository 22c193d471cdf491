"""A run against its baseline: which run is the baseline, each case's change
(now_failing, now_passing, changed, same, new) and the pipeline's statistical verdicts.

A trial's change is a description, not a verdict: one trial that passed before and
fails now is ``now_failing``. Only the regression stage says "regressed" - of a
target (a significant and large enough drop) or of a case (a q-value within the
false-discovery rate) - and the reports take those words from it alone.

The baseline is the suite's pinned ``baseline`` or the previous version with
results (``store.queries.previous_version``, the pipeline's own rule), or an
explicit ``against`` version; ``"none"`` means no comparison.
"""

from __future__ import annotations

from typing import Any

from eval_pipelines.reports import NO_BASELINE
from eval_pipelines.reports.loading import (
    as_float,
    dict_rows,
    eval_dates,
    first_row,
    resolve_version,
)
from eval_pipelines.reports.records import COUNTED, BaselineCase, CaseResult, ReportError, RunInfo
from eval_pipelines.reports.run_info import load_run_info
from eval_pipelines.store.partition import Partition
from eval_pipelines.store.queries import previous_version



def baseline_run(con, run: RunInfo, versions: list[str], against: str | None) -> RunInfo | None:  # noqa: ANN001
    """The run ``run`` is compared with, or None: no baseline, or ``against`` is ``"none"``."""
    skill, version, key, eval_date = run.skill, run.version, run.skill_version, run.eval_date
    if against is not None and against.strip().lower() == NO_BASELINE:
        return None
    if against is None:
        # One field of the spec, extracted by the database (the spec holds every case).
        row = first_row(con, "SELECT json_extract_string(spec, '$.baseline') FROM suites "
                             "WHERE skill_version = ? AND eval_date = ?", [key, eval_date])
        pinned = row[0] if row else None
        # The pipeline's own rule: a pinned baseline without results means no comparison.
        chosen = previous_version(con, Partition(eval_date, key), pinned)
        base_version = chosen.version if chosen is not None else None
    else:
        base_version = resolve_version(skill, against, versions, what="baseline version")
    if base_version is None:
        return None
    base_dates = eval_dates(con, f"{skill}@{base_version}")
    if base_version == version:  # the same version on an earlier night
        base_dates = [d for d in base_dates if d < eval_date]
        if not base_dates:
            raise ReportError(f"no earlier evaluation of {key} than {eval_date} to compare with")
    return load_run_info(con, skill, base_version, base_dates[-1])


def classify_change(case: CaseResult, base: BaselineCase | None) -> str:
    if base is None:
        return "new"
    if base.passed and case.counted and not case.passed:
        return "now_failing"
    if case.passed and base.status in COUNTED and not base.passed:
        return "now_passing"
    if case.verdict != base.verdict or case.status != base.status:
        return "changed"
    return "same"


def attach_baseline(con, cases: list[CaseResult], skill: str, version: str,  # noqa: ANN001
                    eval_date: str) -> list[str]:
    """Set each case's baseline and change; returns the baseline's case ids missing from ``cases``."""
    key = f"{skill}@{version}"
    rows = dict_rows(con, """
        SELECT r.test_id, r.target, r.trial, r.verdict, r.status, r.score, r.reason, o.output, o.error
        FROM test_results r
        LEFT JOIN model_outputs o
               ON o.eval_date = r.eval_date AND o.skill_version = r.skill_version AND o.test_id = r.test_id
              AND o.target = r.target AND o.trial = r.trial AND o.configuration = r.configuration
        WHERE r.skill_version = ? AND r.eval_date = ? AND r.configuration = 'with_skill'""", [key, eval_date])
    exact = {(r["test_id"], r["target"], int(r["trial"])): r for r in rows}
    loose: dict[tuple[str, int], dict[str, Any]] = {}
    for r in rows:
        loose.setdefault((r["test_id"], int(r["trial"])), r)
    for case in cases:
        row = exact.get((case.test_id, case.target, case.trial)) or loose.get((case.test_id, case.trial))
        if row is not None:
            case.baseline = BaselineCase(
                version=version, eval_date=eval_date, output=row["output"], error=row["error"],
                verdict=row["verdict"], status=row["status"], score=as_float(row["score"]), reason=row["reason"] or "")
        case.change = classify_change(case, case.baseline)
    present = {c.test_id for c in cases}
    return sorted({r["test_id"] for r in rows} - present)


def significance(con, run: RunInfo, baseline: RunInfo | None) -> list[dict[str, Any]]:  # noqa: ANN001
    """The regression stage's per-target verdicts for this run against this baseline (none without one):
    the suite-level test (significant? large enough?), the breakage signal, and the cases labelled
    regressed with their false-discovery q-values."""
    if baseline is None:
        return []
    keys = [run.skill_version, run.eval_date, baseline.skill_version, baseline.eval_date]
    where = """skill_version = ? AND eval_date = ? AND baseline_skill_version = ? AND baseline_eval_date = ?"""
    rows = dict_rows(con, f"""
        SELECT target, pass_rate_delta, ci_low, ci_high, p_value, adjusted_p, change,
               significant, large_enough, verdict AS wording
        FROM regressions WHERE level = 'target' AND {where} ORDER BY target""", keys)
    breakage = {r["target"]: r for r in dict_rows(con, f"""
        SELECT target, change, adjusted_p, verdict AS wording
        FROM regressions WHERE level = 'breakage' AND {where}""", keys)}
    labelled: dict[str, list[tuple[str, float]]] = {}
    for r in dict_rows(con, f"""
            SELECT target, test_id, q_value FROM regressions
            WHERE level = 'case' AND change = 'regressed' AND {where} ORDER BY q_value, test_id""", keys):
        labelled.setdefault(r["target"], []).append((r["test_id"], as_float(r["q_value"])))
    for r in rows:
        found = breakage.get(r["target"])
        r["breakage"] = found["wording"] if found else None
        r["broken"] = bool(found and found["change"] == "broken")
        r["labelled"] = labelled.get(r["target"], [])
    return rows


def labelled_regressed(significance: list[dict[str, Any]]) -> list[str]:
    """The cases the regression stage labelled regressed on any target (q-value <= case_fdr),
    lowest q first; empty without a baseline (``significance`` as ``significance()`` gives it)."""
    ranked = sorted((q, test_id) for sig in significance for test_id, q in sig.get("labelled", []))
    return list(dict.fromkeys(test_id for _, test_id in ranked))


def verdict_flags(sig: dict[str, Any]) -> str:
    """' (significant: yes; large enough: no)' - the statistical and the practical answer side by side
    (empty for rows stored before the columns existed)."""
    if sig.get("significant") is None:
        return ""
    yes = {True: "yes", False: "no"}
    return f" (significant: {yes[bool(sig['significant'])]}; large enough: {yes[bool(sig['large_enough'])]})"


def verdict_notes(sig: dict[str, Any]) -> list[str]:
    """The verdict in words, the breakage signal, and the cases labelled regressed with their q-values."""
    notes = []
    if sig.get("wording"):
        notes.append(f"Verdict: {sig['wording']}.")
    if sig.get("breakage"):
        notes.append(f"Breakage signal: {sig['breakage']}.")
    if sig.get("labelled"):
        shown = ", ".join(f"{test_id} (q = {q:.2g})" for test_id, q in sig["labelled"][:20])
        more = f" and {len(sig['labelled']) - 20} more" if len(sig["labelled"]) > 20 else ""
        notes.append(f"Cases labelled regressed (false-discovery q-value <= case_fdr): {shown}{more}.")
    return notes
