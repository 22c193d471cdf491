"""What a stage hands back (``StageResult``) and the metadata kinds the Dagster layer renders
(``Markdown``, ``FilePath``): apart from ``stages`` so that a stage whose work lives in its own
module (``triggers``, ``blind``) returns them without importing the stage list."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class Markdown(str):
    """Metadata text to show as Markdown (the Dagster layer renders it so)."""


class FilePath(str):
    """Metadata naming a file the stage wrote."""


@dataclass
class StageResult:
    rows: dict[str, int]  # table -> rows written
    metadata: dict[str, Any] = field(default_factory=dict)
