"""promptfoo configs (``promptfooconfig.yaml``), read as promptfoo reads them.

``config`` is the entry point (top-level keys, ``options``, ``defaultTest``); ``prompts/``
(templates, files, executable prompts, media, conversation history), ``providers`` (targets
and grading providers), ``cases`` (where tests come from), ``scripts`` (load-time code, run in
the sandbox), ``assertions/`` (the ``assert`` items and promptfoo's assertion vocabulary),
``redteam/`` (``eval-pipelines redteam generate``). Rules come from promptfoo's source
(``src/util/config/load.ts``, ``src/prompts/``, ``src/assertions/``, ...), which the docs
cite per field; a third-party format (:mod:`~eval_pipelines.formats.compat`).
"""
