"""Agent Skills packages (``SKILL.md``, ``scripts/``, ``references/``): their eval files.

``evals_json`` reads skill-creator's ``evals/evals.json`` (anthropics/skills,
``skill-creator/references/schemas.md``). A third-party format: fields skill-creator's own
tools ignore are warned, not refused (:mod:`~eval_pipelines.formats.compat`).
"""
