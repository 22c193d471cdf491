"""What the commands share: the project options (``--root``, ``--allow-unsandboxed-code``) and their
help text, the project's paths, where reports go, warnings on standard error, the exit codes."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from eval_pipelines.analysis.exit_codes import ExitCode

EXIT_OK, EXIT_FAILED, EXIT_INVALID = ExitCode.OK, ExitCode.GATE_FAILED, ExitCode.INVALID_INPUT
EXIT_BUSY = ExitCode.DATABASE_BUSY

ROOT_HELP = "project folder (skills/, datasets/, targets.yaml); default: $EVAL_PIPELINES_HOME or ."
ALLOW_UNSANDBOXED_HELP = (
    "run untrusted code (code judges, skill programs) even where no sandbox level can stop it "
    "reading keys or writing outside its folder (docs/security.md); "
    "same as EVAL_PIPELINES_ALLOW_UNSANDBOXED_CODE=1")


# The paragraph above is said once, in `eval-pipelines --help`; a command's own help points there.
SANDBOX_POINTER = "run untrusted code even where no sandbox can contain it (details: the top-level --help)"

EXIT_CODE_MEANINGS = {
    ExitCode.OK: "success",
    ExitCode.GATE_FAILED: "a threshold, gate or other check failed (demo: a Dagster run failed)",
    ExitCode.INVALID_INPUT: "invalid input: a suite, dataset, targets file, flag or name (nothing was run)",
    ExitCode.REGRESSION: "gates met, but a significant regression against the baseline",
    ExitCode.ALL_ERRORS: "every model call ended in an error (server or key)",
    ExitCode.DATABASE_BUSY: "the DuckDB file stayed locked by another writer",
}


def epilog(examples: list[tuple[str, str]], codes: tuple[ExitCode, ...] = tuple(ExitCode)) -> str:
    """``examples:`` and ``exit codes:`` sections for a parser's ``--help`` (RawDescriptionHelpFormatter)."""
    lines = ["examples:"]
    for command, what in examples:
        lines += [f"  {command}", f"      {what}"]
    lines += ["", "exit codes:"]
    lines += [f"  {int(code)}  {EXIT_CODE_MEANINGS[code]}" for code in codes]
    return "\n".join(lines)


def add_project_options(parser: argparse.ArgumentParser) -> None:
    """The options every command takes, before the command name."""
    parser.add_argument("--root", default=None, help=ROOT_HELP)
    parser.add_argument("--allow-unsandboxed-code", action="store_true", help=ALLOW_UNSANDBOXED_HELP)


def common_parser() -> argparse.ArgumentParser:
    """The same options after the command name (``eval-pipelines demo --root X``): a parent parser."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--root", default=argparse.SUPPRESS, help=ROOT_HELP)
    common.add_argument("--allow-unsandboxed-code", action="store_true", default=argparse.SUPPRESS,
                        help=SANDBOX_POINTER)
    return common


def package_version() -> str:
    """The installed distribution's version; the package's own when it runs from a source tree."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("eval-pipelines")
    except PackageNotFoundError:
        from eval_pipelines import __version__

        return __version__


def project_paths(root: Path, db: str | None):
    from eval_pipelines.pipeline.project import ProjectPaths

    return ProjectPaths.from_root(root.resolve(), db or os.environ.get("EVAL_PIPELINES_DB"))


def report_root(root: Path) -> Path:
    """``reports/`` of the project; ``.data/reports`` when the project folder is a skill
    folder (`run .` inside it), so the reports do not become part of the skill's content."""
    return root / ".data" / "reports" if (root / "SKILL.md").is_file() else root / "reports"


class StderrWarnings(logging.Handler):
    """``warning: message`` on whatever ``sys.stderr`` is when it is emitted."""

    def emit(self, record: logging.LogRecord) -> None:
        print(f"warning: {record.getMessage()}", file=sys.stderr)
