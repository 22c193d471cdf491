"""``eval-pipelines convert SOURCE``: a v1 ``tests.json`` (seed 000) written as v2."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from eval_pipelines.cli.options import EXIT_INVALID, EXIT_OK
from eval_pipelines.suite.errors import SpecErrors


def cmd_convert(args: argparse.Namespace) -> int:
    from eval_pipelines.formats.skill_tests.loader import is_v1, v1_to_v2
    from eval_pipelines.suite.source import load_document

    source = Path(args.source)
    try:
        doc = load_document(source)
    except SpecErrors as exc:
        print(exc)
        return EXIT_INVALID
    if not is_v1(doc.data):
        print(f"{source}: not a v1 tests.json (already v2?)")
        return EXIT_INVALID
    out = Path(args.out) if args.out else source.parent / "eval" / "tests.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(v1_to_v2(doc.data), indent=2) + "\n")
    print(f"wrote {out}")
    if out.resolve() != source.resolve():  # a package holds one suite: the v1 file would be a second
        print(f"remove {source} once you have checked {out.name}: a skill package holds one suite file")
    return EXIT_OK


def add_convert_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("convert", parents=[common], help="convert a v1 tests.json to the v2 format")
    p.add_argument("source")
    p.add_argument("--out", help="output path (default: eval/tests.json beside the source)")
    p.set_defaults(func=cmd_convert)
