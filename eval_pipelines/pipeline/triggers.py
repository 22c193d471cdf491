"""Trigger evaluation of a skill package (issue 32 item 5): the ``trigger_results`` stage's work and
the numbers of its ``skill_triggers`` check.

When the package holds a trigger set (``formats/skills/triggers.py``: skill-creator's
``[{"query", "should_trigger"}]`` or ``{"evals": [{"prompt", "should_trigger"}]}``, where real
packages keep it: ``evals/trigger-evals.json``, ``evals/trigger_evals.json``, ...), every query is
sent ``runs`` times to the suite's agent target with the skill offered among the project's other
skills and the declared distractors, by name and description only (``run/targets/agent/triggering.py``),
and each run's row says whether the skill's SKILL.md was read, by which tool call. The settings
(runs, threshold, distractors, the check's minimums) are the ``triggers:`` block of the package's
``eval-pipelines.yaml`` (``formats/skills/trigger_settings.py``).

A package without a trigger set stores no rows. One whose suite has no agent target stores none
either, and says why in one line (a chat model is never asked to load a skill); a ``triggers.target``
naming a target that is not an agent is refused in one line.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pandas as pd

from eval_pipelines.analysis.triggers import QueryRuns, TriggerSummary, trigger_summary
from eval_pipelines.formats.skills.trigger_settings import (
    SETTINGS_FILE, TriggerSettings, load_trigger_settings,
)
from eval_pipelines.pipeline.stage_values import Markdown, StageResult
from eval_pipelines.formats.skills.triggers import TriggerSet, find_trigger_sets, load_trigger_set
from eval_pipelines.run.targets.config import AgentTargetConfig
from eval_pipelines.store import tables
from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.suite.package import find_packages, parse_front_matter, skill_folder

TABLE = "trigger_results"
COLUMNS = ["target", "source_file", "query_number", "query", "should_trigger", "run", "triggered", "loaded_by",
           "skills_read", "offered", "seed", "threshold", "turns", "tool_calls", "stopped", "error", "latency_ms",
           "prompt_tokens", "completion_tokens"]


def package_settings(package_root: Path) -> TriggerSettings:
    """The ``triggers:`` settings of the package (its root, else its skill folder)."""
    folder = skill_folder(package_root) or package_root
    root = package_root if (package_root / SETTINGS_FILE).is_file() else folder
    return load_trigger_settings(root)


def trigger_files(package_root: Path, settings: TriggerSettings) -> list[Path]:
    """The package's trigger set files (``triggers.file``, else those found where packages keep them)."""
    if settings.file:
        file = (package_root / settings.file).resolve()
        if not file.is_relative_to(package_root.resolve()) or not file.is_file():
            raise SpecErrors.single(package_root / SETTINGS_FILE, f"no trigger set {settings.file!r} in the package",
                                    ("triggers", "file"), expected="a path inside the package")
        return [file]
    folders = [package_root] + [f for f in [skill_folder(package_root)] if f and f != package_root]
    return [file for folder in folders for file in find_trigger_sets(folder)]


def offered_skills(skills_dir: Path | None, own: str, settings: TriggerSettings) -> list[Any]:
    """The other skills the agent is offered: the project's (one per name, the last version found)
    unless ``project_skills: false``, then the declared distractors (which win on a shared name)."""
    from eval_pipelines.run.targets.agent.triggering import OfferedSkill

    found: dict[str, OfferedSkill] = {}
    if settings.project_skills and skills_dir is not None:
        for folder in find_packages(skills_dir):
            file = folder / "SKILL.md"
            if not file.is_file():
                continue
            try:
                meta, _ = parse_front_matter(file.read_text(encoding="utf-8"), file)
            except (SpecErrors, OSError, UnicodeDecodeError):
                continue  # a package that does not open is reported by its own run, not here
            name, description = str(meta.get("name") or ""), " ".join(str(meta.get("description") or "").split())
            if name and description and name != own:
                found[name] = OfferedSkill(name, description)
    for item in settings.distractors:
        found[item.name] = OfferedSkill(item.name, " ".join(item.description.split()))
    found.pop(own, None)
    return sorted(found.values(), key=lambda s: s.name)


def agent_target(stored: tables.StoredSuite, settings: TriggerSettings) -> tuple[str | None, str]:
    """(the agent target's name, "") or (None, why there is none, in one line)."""
    package = stored.package_root / SETTINGS_FILE
    if settings.target:
        config = stored.targets.get(settings.target)
        if config is None:
            raise SpecErrors.single(package, f"unknown target {settings.target!r}", ("triggers", "target"),
                                    expected=f"one of {sorted(stored.targets)}")
        if not isinstance(config, AgentTargetConfig):
            raise SpecErrors.single(package, f"target {settings.target!r} is type {config.type}",
                                    ("triggers", "target"),
                                    expected="an agent target (type: agent): only an agent can load a skill")
        return settings.target, ""
    names = stored.suite.execution.targets or list(stored.targets)
    for name in names:
        if isinstance(stored.targets.get(name), AgentTargetConfig):
            return name, ""
    kinds = ", ".join(f"{n} ({getattr(stored.targets.get(n), 'type', '?')})" for n in names) or "none"
    return None, (f"trigger set not run: the suite's targets are {kinds}; trigger evaluation needs an agent "
                  "target (type: agent)")


def run_trigger_evals(ctx: Any) -> StageResult:
    """The stage ``trigger_results``. ``ctx`` is the pipeline's StageContext."""
    stored: tables.StoredSuite = ctx.suite()
    suite = stored.suite
    settings = package_settings(stored.package_root)
    files = trigger_files(stored.package_root, settings)
    frames: list[pd.DataFrame] = []
    meta: dict[str, Any] = {"trigger_sets": len(files)}
    name, why_not = agent_target(stored, settings) if files else (None, "no trigger set in the package")
    # Read only when they will run: a chat-target run of a package is not failed by its trigger file.
    sets = [load_trigger_set(file) for file in files] if name is not None else []
    for trigger_set in sets:
        for warning in trigger_set.warnings:
            ctx.log.warning(warning)
    if files and name is None:
        ctx.log.warning(why_not)
    if name is not None:
        from eval_pipelines.run.engine import build_target
        from eval_pipelines.run.targets.agent.triggering import probe_all
        from eval_pipelines.run.targets.key_policy import TRUSTED_HOSTS_ENV

        config = stored.targets[name]
        env = ctx.env([config.api_key_env, config.base_url_env, TRUSTED_HOSTS_ENV])
        ctx.release()  # no DuckDB connection is held while the agent answers
        for trigger_set in sets:
            target = build_target(config, stored.package_root, env)
            if target.skill is None:
                raise SpecErrors.single(trigger_set.source_file, "the package has no SKILL.md to offer")
            others = offered_skills(ctx.paths.skills_dir, target.skill.name, settings)
            runs = asyncio.run(probe_all(target, [q.query for q in trigger_set.queries], settings.runs, others,
                                         settings.max_turns))
            frames.append(encode(runs, trigger_set, name, settings, stored.package_root))
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=COLUMNS)
    rows = frame.assign(**tables.partition_columns(ctx.partition, ctx.run_id, suite.name))
    written = ctx.write(TABLE, rows)
    if name is None:
        meta["not_run"] = why_not
        return StageResult({TABLE: written}, meta)
    summaries = summarise(rows)
    for target_name, summary in summaries.items():
        meta |= summary_numbers(summary)
        meta["triggers"] = Markdown(summary_markdown(target_name, summary, len(rows)))
    return StageResult({TABLE: written}, meta)


def encode(runs: list[Any], trigger_set: TriggerSet, target: str, settings: TriggerSettings,
           package_root: Path) -> pd.DataFrame:
    source = Path(trigger_set.source_file)
    shown = source.relative_to(package_root).as_posix() if source.is_relative_to(package_root) else source.name
    out = []
    for r in runs:
        query = trigger_set.queries[r.query_number - 1]
        out.append({
            "target": target, "source_file": shown, "query_number": r.query_number, "query": query.query,
            "should_trigger": query.should_trigger, "run": r.run, "triggered": r.triggered,
            "loaded_by": None if r.loaded_by is None else json.dumps(r.loaded_by, ensure_ascii=False),
            "skills_read": json.dumps(r.skills_read), "offered": json.dumps(r.offered), "seed": r.seed,
            "threshold": settings.threshold, "turns": r.turns, "tool_calls": r.tool_calls, "stopped": r.stopped,
            "error": r.error, "latency_ms": round(r.latency_ms, 1), "prompt_tokens": r.prompt_tokens,
            "completion_tokens": r.completion_tokens})
    return pd.DataFrame(out, columns=COLUMNS)


def query_runs(rows: pd.DataFrame) -> dict[str, list[QueryRuns]]:
    """target -> each query's runs without an error and how many of them loaded the skill."""
    out: dict[str, list[QueryRuns]] = {}
    if rows.empty:
        return out
    ok = rows[rows["error"].isna()]
    for (target, _, _, query, should), group in rows.groupby(
            ["target", "source_file", "query_number", "query", "should_trigger"], sort=True):
        good = ok.loc[ok.index.intersection(group.index)]
        out.setdefault(str(target), []).append(QueryRuns(str(query), bool(should), len(good),
                                                         int(good["triggered"].astype(bool).sum())))
    return out


def summarise(rows: pd.DataFrame) -> dict[str, TriggerSummary]:
    threshold = float(rows["threshold"].iloc[0]) if not rows.empty else 0.5
    return {target: trigger_summary(queries, threshold) for target, queries in query_runs(rows).items()}


def summary_numbers(summary: TriggerSummary) -> dict[str, Any]:
    return {"trigger_queries": summary.queries, "trigger_precision": summary.precision,
            "trigger_recall": summary.recall, "trigger_accuracy": summary.accuracy,
            "true_positives": summary.true_positives, "false_positives": summary.false_positives,
            "false_negatives": summary.false_negatives, "true_negatives": summary.true_negatives}


def _shown(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def summary_markdown(target: str, summary: TriggerSummary, runs: int) -> str:
    return "\n".join([
        f"Target `{target}`: {summary.queries} queries, {runs} runs; a query triggers at a rate >= "
        f"{summary.threshold:g}.", "",
        "| precision | recall | accuracy | TP | FP | FN | TN |", "|---|---|---|---|---|---|---|",
        f"| {_shown(summary.precision)} | {_shown(summary.recall)} | {summary.accuracy:.3f} | "
        f"{summary.true_positives} | {summary.false_positives} | {summary.false_negatives} | "
        f"{summary.true_negatives} |"])


def check_numbers(rows: pd.DataFrame, settings: TriggerSettings) -> tuple[bool | None, str, dict[str, Any]]:
    """The ``skill_triggers`` check: (passed, or None when there is nothing to check; its line; metadata)."""
    summaries = summarise(rows)
    if not summaries:
        return None, "skipped: no trigger runs stored (no trigger set, or no agent target)", {}
    minimums = settings.thresholds()
    misses: list[str] = []
    meta: dict[str, Any] = {"minimums": json.dumps(minimums)}
    parts: list[str] = []
    for target, summary in summaries.items():
        values = {"precision": summary.precision, "recall": summary.recall, "accuracy": summary.accuracy}
        for metric, minimum in sorted(minimums.items()):
            value = values[metric]
            if value is None or value < minimum:
                misses.append(f"{target} {metric} {_shown(value)} < {minimum:.3f}")
        parts.append(f"{target}: precision {_shown(summary.precision)}, recall {_shown(summary.recall)}, "
                     f"accuracy {summary.accuracy:.3f} over {summary.queries} queries")
        meta |= summary_numbers(summary)
    text = "; ".join(parts)
    if not minimums:
        return True, f"{text} (no minimum declared)", meta
    return not misses, ("; ".join(misses) + f" ({text})") if misses else f"{text}: minimums met", meta
