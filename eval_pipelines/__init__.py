"""eval-pipelines: continuous evaluation of AI skills.

The evaluation core (``suite``, ``formats``, ``run``, ``grading``, ``analysis``, ``store``,
``reports``) is plain Python; ``pipeline`` is the stage list both front ends run. Only
``eval_pipelines.defs``, ``eval_pipelines.definitions`` and ``eval_pipelines.cli`` import Dagster.
"""

__version__ = "0.1.0"
