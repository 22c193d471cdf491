"""The pipeline as plain Python, shared by the CLI (``eval-pipelines run``) and Dagster (``defs/``):
``stages`` (the ordered stage list), ``checks`` (the checks after a stage), ``project`` (where a
project's skills, datasets, targets and results live). No Dagster here."""
