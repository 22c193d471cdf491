"""eval-pipelines: continuous evaluation of AI skills.

The evaluation core (``spec``, ``graders``, ``targets``, ``store``, ``engine``,
``scoring``, ``metrics``) is plain Python. Only ``eval_pipelines.defs`` and
``eval_pipelines.definitions`` import Dagster.
"""

__version__ = "0.1.0"
