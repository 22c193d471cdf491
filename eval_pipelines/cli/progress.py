"""Progress of ``eval-pipelines run``'s model phase, on standard error.

On a terminal: a rich bar in neutral colours with the percentage, done/total, the
errors and cached answers so far, the elapsed time, the ETA and the case that just
finished; it stays on screen when the phase ends. Piped (CI logs): a plain line
every ``interval_s`` seconds and one when the phase ends, e.g.
``[ 40/100]  40% 2 errors 10 cached, 12s elapsed, ETA 18s, last tc-040``.

Passes and failures are not known during the model phase (the grades stage grades
the stored outputs afterwards, in batches, and a judge may grade them): the run's
closing summary gives them (``cli/run_summary.py``).
"""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from typing import Callable, Iterator, TextIO

PIPE_INTERVAL_S = 5.0


def _clock_text(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds}s" if seconds < 60 else f"{seconds // 60}m{seconds % 60:02d}s"


class PlainProgress:
    """Lines for a pipe; ``clock`` is injectable so tests need no waiting."""

    def __init__(self, total: int, stream: TextIO, interval_s: float = PIPE_INTERVAL_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.total, self.stream, self.interval_s, self.clock = total, stream, interval_s, clock
        self.done = self.errors = self.cached = 0
        self.last_case = ""
        self.started = clock()
        self.printed_at: float | None = None
        self.finished = False

    def line(self) -> str:
        elapsed = self.clock() - self.started
        width = len(str(self.total))
        percent = self.done / self.total if self.total else 1.0
        text = f"[{self.done:>{width}}/{self.total}] {percent:>4.0%} {self.errors} errors {self.cached} cached, " \
               f"{_clock_text(elapsed)} elapsed"
        if 0 < self.done < self.total:
            text += f", ETA {_clock_text(elapsed / self.done * (self.total - self.done))}"
        return text + (f", last {self.last_case}" if self.last_case else "")

    def advance(self, test_id: str, error: bool, cached: bool) -> None:
        self.done += 1
        self.errors += error
        self.cached += cached
        self.last_case = test_id
        now = self.clock()
        if self.done == self.total:
            self.finish()
        elif now - (self.printed_at or self.started) >= self.interval_s:
            self.printed_at = now
            print(self.line(), file=self.stream, flush=True)

    def finish(self) -> None:
        """The last line, once: when the last output arrives, or when the phase stopped early (failFast)."""
        if not self.finished:
            self.finished = True
            print(self.line(), file=self.stream, flush=True)


@contextmanager
def model_phase_progress(suite, options, stream: TextIO | None = None,  # noqa: ANN001
                         enabled: bool = True) -> Iterator[None]:
    """Sets ``options.on_output`` for the model phase; a rich bar on a terminal, lines otherwise."""
    stream = stream or sys.stderr
    total = sum(len(suite.targets_for(c)) * suite.trials_for(c) for c in suite.tests)
    if not enabled or total == 0:
        yield
        return
    if not stream.isatty():
        plain = PlainProgress(total, stream)
        options.on_output = lambda o: plain.advance(o.test_id, o.error is not None, o.cached)
        try:
            yield
        finally:
            if plain.done:
                plain.finish()
        return
    from rich.console import Console
    from rich.theme import Theme
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TaskProgressColumn, TextColumn,
                               TimeElapsedColumn, TimeRemainingColumn)

    # Neutral: the default text colour everywhere, a cyan bar (rich's own theme draws the bar
    # bright pink-red, which reads as a failure, and every number in a colour of its own).
    neutral = Theme({"bar.complete": "cyan", "bar.finished": "cyan",
                     "progress.percentage": "default", "progress.download": "default",
                     "progress.elapsed": "default", "progress.remaining": "default"})
    columns = [TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(), MofNCompleteColumn(),
               TextColumn("•"), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
               TextColumn("{task.fields[errors]} errors, {task.fields[cached]} cached  [dim]{task.fields[last]}")]
    with Progress(*columns, console=Console(file=stream, theme=neutral), transient=False) as bar:
        task = bar.add_task(suite.name, total=total, errors=0, cached=0, last="")
        counts = {"errors": 0, "cached": 0}

        def advance(output) -> None:  # noqa: ANN001
            counts["errors"] += output.error is not None
            counts["cached"] += output.cached
            bar.update(task, advance=1, last=output.test_id, **counts)

        options.on_output = advance
        yield
        bar.update(task, last="")
