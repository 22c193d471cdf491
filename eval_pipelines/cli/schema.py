"""``eval-pipelines schema``: the JSON Schema of the eval suite YAML format (seed 001)."""

from __future__ import annotations

import argparse
import json

from eval_pipelines.cli.options import EXIT_OK


def cmd_schema(args: argparse.Namespace) -> int:
    from eval_pipelines.suite.schema_export import eval_suite_schema

    print(json.dumps(eval_suite_schema(), indent=2))
    return EXIT_OK


def add_schema_parser(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("schema", parents=[common], help="print the JSON Schema of the eval suite YAML format")
    p.set_defaults(func=cmd_schema)
