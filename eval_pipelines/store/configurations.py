"""Rows per configuration (``with_skill`` / ``without_skill``, suite/models.py): splitting a
partition's rows by their ``configuration`` column, and the ``uplifts`` table's codec.

Rows stored before the column existed read back as ``with_skill`` (schema.sql's default).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Iterable

import pandas as pd

from eval_pipelines.store.partition import Partition
from eval_pipelines.suite.models import WITH_SKILL, WITHOUT_SKILL

if TYPE_CHECKING:
    from eval_pipelines.analysis.policy import RegressionPolicy
    from eval_pipelines.analysis.uplift import Uplift

ORDER = (WITH_SKILL, WITHOUT_SKILL)


def column(frame: pd.DataFrame) -> pd.Series:
    """Each row's configuration (with_skill where the column is missing or NULL)."""
    if "configuration" not in frame.columns:
        return pd.Series(WITH_SKILL, index=frame.index, dtype=object)
    return frame["configuration"].astype(object).where(frame["configuration"].notna(), WITH_SKILL)


def configurations_in(frame: pd.DataFrame) -> list[str]:
    """The configurations the rows hold, with_skill first."""
    found = set(column(frame)) if len(frame) else set()
    return sorted(found, key=lambda c: (ORDER.index(c) if c in ORDER else len(ORDER), c))


def of_configuration(frame: pd.DataFrame, configuration: str) -> pd.DataFrame:
    return frame[column(frame) == configuration]


def primary(configurations: Iterable[str]) -> str:
    """The configuration regressions and gates look at: with_skill when it ran, else the first."""
    found = list(configurations)
    return WITH_SKILL if WITH_SKILL in found or not found else found[0]


UPLIFT_COLUMNS = ["target", "value", "cases_compared", "with_skill", "without_skill", "delta", "ci_low",
                  "ci_high", "p_rise", "p_drop", "significant", "large_enough", "verdict", "wording", "detail"]
# What the uplift compares: each run's share of expectations met (1/0 for a case without expectations).
UPLIFT_VALUE = "run_pass_rate"


def encode_uplifts(uplifts: Iterable["Uplift"], policy: "RegressionPolicy", partition: Partition,
                   run_id: str | None, suite: str) -> pd.DataFrame:
    base = {"eval_date": partition.eval_date, "skill_version": partition.skill_version,
            "skill": partition.skill, "version": partition.version, "run_id": run_id, "suite": suite}
    detail = json.dumps({"alpha": policy.alpha, "min_effect": policy.min_effect, "effect_rule": policy.effect_rule,
                         "interval_level": policy.interval_level, "test": "exact one-sided sign-flip, alpha/2 per side",
                         "paired_by": "case (its mean over trials)"})
    rows = [{"target": u.target, "value": UPLIFT_VALUE, "cases_compared": u.cases_compared,
             "with_skill": u.with_skill, "without_skill": u.without_skill, "delta": u.delta, "ci_low": u.ci_low,
             "ci_high": u.ci_high, "p_rise": u.p_rise, "p_drop": u.p_drop, "significant": u.significant,
             "large_enough": u.large_enough, "verdict": u.verdict, "wording": u.wording, "detail": detail}
            for u in uplifts]
    if not rows:
        return pd.DataFrame(columns=[*base, *UPLIFT_COLUMNS])
    return pd.DataFrame(rows, columns=UPLIFT_COLUMNS).assign(**base)[[*base, *UPLIFT_COLUMNS]]
