"""What a stage hands back (``StageResult``) and the metadata kinds the Dagster layer renders
(``Markdown``, ``FilePath``): apart from ``stages`` so that a stage whose work lives in its own
module (``triggers``, ``blind``) returns them without importing the stage list."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


# One class each, defined with the stage facts (catalog.py), which the Dagster layer reads.
from eval_pipelines.pipeline.catalog import FilePath, Markdown  # noqa: E402,F401


@dataclass
class StageResult:
    rows: dict[str, int]  # table -> rows written
    metadata: dict[str, Any] = field(default_factory=dict)
