"""``eval-pipelines``, the command line: one module per command, ``options`` for what they share
(the project options, the sandbox paragraph, help text).

The only place besides ``defs/`` and ``definitions.py`` that may import Dagster (``demo``).
"""

from eval_pipelines.cli.app import EXIT_BUSY, EXIT_FAILED, EXIT_INVALID, EXIT_OK, build_parser, main

__all__ = ["EXIT_BUSY", "EXIT_FAILED", "EXIT_INVALID", "EXIT_OK", "build_parser", "main"]
