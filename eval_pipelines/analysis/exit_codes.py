"""The exit codes of ``eval-pipelines`` (documented in README.md and docs/ci.md).

CI scripts branch on them, so they are defined once here and nowhere else.
When several apply, the lowest-numbered non-zero code of this precedence wins:
invalid input, every case an error, a gate failed, a regression (significant, or breakage hidden
by the mean). A busy database ends any command with its own code.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Iterable


class ExitCode(IntEnum):
    OK = 0
    # A threshold or blocking gate missed, another check failed, or a Dagster run failed.
    GATE_FAILED = 1
    # A suite, dataset, targets file or flag is invalid: nothing was run (or paid for).
    INVALID_INPUT = 2
    # Gates met, but the pass rate dropped significantly against the baseline.
    REGRESSION = 3
    # Every model call of the run ended as an error row (no output to grade):
    # an unreachable server or a missing key rather than a bad skill.
    ALL_ERRORS = 4
    # The DuckDB file stayed locked by another writer past the wait (EVAL_PIPELINES_DB_WAIT_S).
    DATABASE_BUSY = 5


REGRESSION_CHECKS = frozenset({"no_significant_regression", "no_hidden_breakage"})


def run_exit_code(failed_checks: Iterable[str], outputs: int, errors: int) -> ExitCode:
    """The exit code of a finished run from the checks that failed and its output/error row counts."""
    failed = set(failed_checks)
    if outputs and errors == outputs:
        return ExitCode.ALL_ERRORS
    if failed - REGRESSION_CHECKS:
        return ExitCode.GATE_FAILED
    if failed:
        return ExitCode.REGRESSION
    return ExitCode.OK
