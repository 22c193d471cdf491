"""What every benchmark figure is made of: a series of measurements, and the progress log."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from datetime import datetime


@dataclass
class Series:
    values: list[float] = field(default_factory=list)

    def add(self, value: float) -> None:
        self.values.append(value)

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    def text(self, unit: str = "s", digits: int = 2) -> str:
        if len(self.values) == 1:
            return f"{self.values[0]:.{digits}f} {unit} (1 run)"
        return (f"{self.median:.{digits}f} {unit} (min {min(self.values):.{digits}f}, "
                f"max {max(self.values):.{digits}f}, {len(self.values)} runs)")


def log(message: str) -> None:
    print(f"[{datetime.now():%H:%M:%S}] {message}", flush=True)
