"""``eval-pipelines redteam generate CONFIG [-o OUT]``: promptfoo's ``promptfoo redteam generate``
for what we can generate (eval_pipelines/redteam, docs/promptfoo.md "Red-team generation").

Exit codes: 0 written; 2 the recipe is refused (one line per problem) or generation failed (one
line); nothing is written then.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from eval_pipelines.analysis.exit_codes import ExitCode
from eval_pipelines.suite.errors import SpecErrors


def cmd_redteam_generate(args: argparse.Namespace) -> int:
    from eval_pipelines.formats.promptfoo.redteam.generate import GenerationError, generate

    config = Path(args.config)
    if not config.is_file():
        print(f"{config}: no such file")
        return ExitCode.INVALID_INPUT
    try:
        result = generate(config, Path(args.output) if args.output else None)
    except SpecErrors as exc:
        print(exc)
        return ExitCode.INVALID_INPUT
    except GenerationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return ExitCode.INVALID_INPUT
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(f"wrote {result.out}: {len(result.tests)} tests ({result.requests} red-team provider request(s)); "
          f"run it with `eval-pipelines run {result.out}`")
    return ExitCode.OK


def add_redteam_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("redteam", parents=[common], help="promptfoo red-team recipes: generate their tests")
    redteam_sub = p.add_subparsers(dest="redteam_command", required=True)
    q = redteam_sub.add_parser("generate", parents=[common],
                               help="write a promptfoo config with generated red-team tests (promptfoo redteam generate)")
    q.add_argument("config", metavar="CONFIG", help="a promptfoo config with a `redteam` block")
    q.add_argument("-o", "--output", metavar="OUT", help="file to write (default: redteam.yaml beside CONFIG)")
    q.set_defaults(func=cmd_redteam_generate)
