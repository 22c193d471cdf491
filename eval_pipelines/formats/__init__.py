"""The readers of every suite format, one package per family, each writing the same typed
:class:`~eval_pipelines.suite.models.Suite` (the core in ``eval_pipelines.suite``).

Our own formats (every field honoured or refused): ``eval_yaml`` (seed 001), ``skill_tests``
(seed 000's ``tests.json`` v1/v2), ``harness`` (seed 003), ``prompt_modes`` (seed 002).
Third-party formats, read on their own terms (:mod:`~eval_pipelines.formats.compat`):
``skills`` (Agent Skills' ``evals/evals.json``, skill-creator), ``agentv`` (v2, HEAD, v5) and
``promptfoo``. ``loader`` picks the family for a file or a skill package; ``datasets`` reads
the ``.jsonl``/``.csv``/``.yaml`` case files several families share.
"""
