"""``eval-pipelines redteam generate``: promptfoo's ``promptfoo redteam generate`` for the plugins our
``redteam`` grader grades and the strategies that are plain text transforms (see docs/promptfoo.md,
"Red-team generation"). No Dagster here: the CLI hook is ``eval_pipelines.cli.redteam``."""
