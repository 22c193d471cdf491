"""The configurations a skill version is evaluated in (issue 32, docs/skill-creator.md).

``with_skill``: the skill installed (staged in the agent's workspace and listed to it, SKILL.md as a
chat target's system prompt). ``without_skill``: the same target, prompts and files, the skill not
installed: the baseline the skill's uplift is measured against (analysis/uplift.py). Stored in the
``configuration`` column. ``with_skill`` is always run: gates, regressions and reports judge the
skill as shipped.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator

WITH_SKILL = "with_skill"
WITHOUT_SKILL = "without_skill"
Configuration = Literal["with_skill", "without_skill"]


def _checked(value: list[str]) -> list[str]:
    if len(set(value)) != len(value) or WITH_SKILL not in value:
        raise ValueError("each configuration once, with_skill among them")
    return value


Configurations = Annotated[list[Configuration], AfterValidator(_checked)]
