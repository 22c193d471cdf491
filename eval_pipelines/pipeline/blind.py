"""Blind comparison with another version (issue 32 item 6; opt-in): the ``blind_comparisons`` stage.

Asked for by ``eval-pipelines run PATH --compare-blind BASELINE`` or, for the Dagster job as well,
by ``compare_blind:`` in the package's ``eval-pipelines.yaml``::

    compare_blind: previous            # the version the regression report compares with
    compare_blind: 1.0.0               # a version of this skill (or a full key, report-builder@1.0.0)
    compare_blind: {baseline: previous, seed: 7}

For every output of this run (case × target × trial) that the baseline's latest evaluation also
has, the suite's judge compares the two outputs labelled A and B in an order drawn from ``seed``
(``grading/comparator.py``), and the row stores the draw (``a_is``), the judge's label and what it
means (``winner``: current, baseline or tie), its reasoning and rubric. Without the switch the
stage stores nothing and calls no judge.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from eval_pipelines.formats.skills.trigger_settings import SETTINGS_FILE
from eval_pipelines.grading.comparator import compare, current_is_a, shown_output, unblind
from eval_pipelines.grading.judge import JudgeError
from eval_pipelines.pipeline.stage_values import Markdown, StageResult
from eval_pipelines.run.targets.config import OpenAITargetConfig, connection
from eval_pipelines.run.targets.key_policy import TRUSTED_HOSTS_ENV
from eval_pipelines.store import tables
from eval_pipelines.store.partition import Partition
from eval_pipelines.store.queries import previous_version
from eval_pipelines.suite.errors import SpecErrors, pydantic_errors
from eval_pipelines.suite.source import load_document

TABLE = "blind_comparisons"
SETTINGS_KEY = "compare_blind"
COLUMNS = ["target", "test_id", "trial", "baseline_skill_version", "baseline_eval_date", "seed", "a_is",
           "winner_label", "winner", "reasoning", "current_score", "baseline_score", "rubric", "output_quality",
           "judge_model", "error"]
CONCURRENCY = 4


class BlindSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    baseline: str = Field(min_length=1)  # "previous", a version, or skill@version
    seed: int = 0


def package_setting(package_root: Path) -> BlindSettings | None:
    file = package_root / SETTINGS_FILE
    if not file.is_file():
        return None
    doc = load_document(file)
    raw = doc.data.get(SETTINGS_KEY) if isinstance(doc.data, dict) else None
    if raw is None:
        return None
    try:
        return BlindSettings.model_validate({"baseline": raw} if isinstance(raw, str) else raw)
    except ValidationError as exc:
        raise SpecErrors(pydantic_errors(doc, (SETTINGS_KEY,), exc, list(BlindSettings.model_fields))) from None


def _baseline(con: Any, partition: Partition, wanted: str, pinned: str | None) -> Partition | None:
    if wanted == "previous":
        return previous_version(con, partition, pinned)
    key = wanted if "@" in wanted else f"{partition.skill}@{wanted}"
    (date,) = con.execute("SELECT max(eval_date) FROM model_outputs WHERE skill_version = ?", [key]).fetchone()
    return Partition(date, key) if date else None


def _outputs(con: Any, partition: Partition) -> dict[tuple[str, str, int], tuple[str | None, list[dict]]]:
    rows = con.execute("SELECT test_id, target, trial, output, files FROM model_outputs WHERE eval_date = ? AND "
                       "skill_version = ? AND error IS NULL", [partition.eval_date, partition.skill_version]).fetchall()
    return {(t, g, int(k)): (o, json.loads(f) if isinstance(f, str) else (f or [])) for t, g, k, o, f in rows}


def _expectations(case: Any) -> list[str]:
    out = []
    for a in case.assertions if case is not None else []:
        if a.type == "expectations":
            for item in a.config.get("items") or a.config.get("criteria") or []:
                out.append(str(item.get("text") or item.get("description") or item.get("name") or item)
                           if isinstance(item, dict) else str(item))
    return out


def run_blind_comparisons(ctx: Any) -> StageResult:
    """The stage. ``ctx`` is the pipeline's StageContext (``options.compare_blind`` wins over the package's)."""
    stored: tables.StoredSuite = ctx.suite()
    suite = stored.suite
    wanted = getattr(ctx.options, "compare_blind", None)
    settings = BlindSettings(baseline=wanted) if wanted else package_setting(stored.package_root)
    frame = pd.DataFrame(columns=COLUMNS)
    meta: dict[str, Any] = {}
    if settings is None:
        meta["not_run"] = "not asked for (run --compare-blind BASELINE, or compare_blind: in eval-pipelines.yaml)"
    else:
        con = ctx.connection()
        baseline = _baseline(con, ctx.partition, settings.baseline, suite.baseline)
        if baseline is None or baseline == ctx.partition:
            meta["not_run"] = f"no outputs of baseline {settings.baseline!r} to compare with"
            ctx.log.warning(f"blind comparison: {meta['not_run']}")
        else:
            current, before = _outputs(con, ctx.partition), _outputs(con, baseline)
            judge = _judge(ctx, stored)
            ctx.release()  # no DuckDB connection is held while the judge answers
            pairs = sorted(set(current) & set(before))
            rows = asyncio.run(_compare_all(judge, suite, pairs, current, before, settings.seed))
            frame = pd.DataFrame([r | {"baseline_skill_version": baseline.skill_version,
                                       "baseline_eval_date": baseline.eval_date} for r in rows], columns=COLUMNS)
            wins = frame["winner"].value_counts().to_dict()
            meta |= {"baseline": f"{baseline.skill_version} ({baseline.eval_date})", "compared": len(frame),
                     "current_wins": int(wins.get("current", 0)), "baseline_wins": int(wins.get("baseline", 0)),
                     "ties": int(wins.get("tie", 0)), "errors": int(frame["error"].notna().sum())}
            meta["blind_comparison"] = Markdown(
                f"Against **{baseline.skill_version}**: current wins {meta['current_wins']}, baseline wins "
                f"{meta['baseline_wins']}, ties {meta['ties']} of {len(frame)} outputs (judge blind to the versions).")
    rows_out = frame.assign(**tables.partition_columns(ctx.partition, ctx.run_id, suite.name))
    return StageResult({TABLE: ctx.write(TABLE, rows_out)}, meta)


def preflight(stored: tables.StoredSuite, compare_blind: str | None) -> None:
    """Refuse, before any model is paid for, what the trigger and blind comparison stages would refuse
    later: bad ``triggers:``/``compare_blind:`` settings, a trigger target that is not an agent, a blind
    comparison without an OpenAI-compatible judge."""
    from eval_pipelines.pipeline import triggers

    settings = triggers.package_settings(stored.package_root)
    files = triggers.trigger_files(stored.package_root, settings)
    if files and triggers.agent_target(stored, settings)[0] is not None:
        for file in files:
            triggers.load_trigger_set(file)
    if compare_blind or package_setting(stored.package_root) is not None:
        _judge_config(stored)


def _judge_config(stored: tables.StoredSuite) -> OpenAITargetConfig:
    config = stored.targets.get(stored.suite.judge or "")
    if not isinstance(config, OpenAITargetConfig):
        raise SpecErrors.single(stored.package_root / SETTINGS_FILE,
                                f"blind comparison needs the suite's judge to be an OpenAI-compatible model; the "
                                f"judge is {stored.suite.judge or 'not set'}", (SETTINGS_KEY,))
    return config


def _judge(ctx: Any, stored: tables.StoredSuite) -> Any:
    config = _judge_config(stored)
    from eval_pipelines.grading.judge import OpenAIJudge

    env = ctx.env([config.api_key_env, config.base_url_env, TRUSTED_HOSTS_ENV])
    return OpenAIJudge(config, **connection(config, env)._asdict())


async def _compare_all(judge: Any, suite: Any, pairs: list[tuple[str, str, int]], current: dict, before: dict,
                       seed: int) -> list[dict[str, Any]]:
    cases = {c.id: c for c in suite.tests}
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(key: tuple[str, str, int]) -> dict[str, Any]:
        test_id, target, trial = key
        as_a = current_is_a(seed, test_id, target, trial)
        mine, theirs = shown_output(*current[key]), shown_output(*before[key])
        a, b = (mine, theirs) if as_a else (theirs, mine)
        case = cases.get(test_id)
        row = {"target": target, "test_id": test_id, "trial": trial, "seed": f"{seed}:{test_id}:{target}:{trial}",
               "a_is": "current" if as_a else "baseline", "judge_model": judge.model}
        async with gate:
            try:
                verdict, _ = await compare(judge, case.user_text if case else "", a, b, _expectations(case))
            except JudgeError as exc:
                return row | {"error": str(exc)}
        mine_label, their_label = ("A", "B") if as_a else ("B", "A")
        return row | {"winner_label": verdict.winner, "winner": unblind(verdict.winner, as_a),
                      "reasoning": verdict.reasoning, "current_score": verdict.overall(mine_label),
                      "baseline_score": verdict.overall(their_label),
                      "rubric": json.dumps(verdict.rubric) if verdict.rubric is not None else None,
                      "output_quality": json.dumps(verdict.output_quality)
                      if verdict.output_quality is not None else None}

    try:
        return list(await asyncio.gather(*(one(k) for k in pairs)))
    finally:
        await judge.aclose()
