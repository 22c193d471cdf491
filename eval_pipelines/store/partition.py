"""The key of every table: one evaluation date x one skill version (``name@version``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Partition:
    eval_date: str
    skill_version: str

    @property
    def skill(self) -> str:
        return self.skill_version.partition("@")[0]

    @property
    def version(self) -> str:
        return self.skill_version.partition("@")[2]
