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


def add_project_options(parser: argparse.ArgumentParser) -> None:
    """The options every command takes, before the command name."""
    parser.add_argument("--root", default=None, help=ROOT_HELP)
    parser.add_argument("--allow-unsandboxed-code", action="store_true", help=ALLOW_UNSANDBOXED_HELP)


def common_parser() -> argparse.ArgumentParser:
    """The same options after the command name (``eval-pipelines demo --root X``): a parent parser."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--root", default=argparse.SUPPRESS, help=ROOT_HELP)
    common.add_argument("--allow-unsandboxed-code", action="store_true", default=argparse.SUPPRESS,
                        help=ALLOW_UNSANDBOXED_HELP)
    return common


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
