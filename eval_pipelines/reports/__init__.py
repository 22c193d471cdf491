"""Reports of a run or a comparison (JSON ``eval_report``, Markdown phase report,
self-contained HTML).

Modules: ``data`` (load from DuckDB into ``records``), ``files`` (render and
write), ``summary`` (short Markdown for the UI), ``json_report``,
``markdown``, ``html/`` (the HTML report, a module per section), ``junit``.
``eval-pipelines report`` is ``eval_pipelines.cli.report``. Import them directly; this package imports nothing heavy on its own.
"""

# `--against none`: a report without comparison. Here, not in `comparison`, so that
# building the command line's parser does not import the report machinery.
NO_BASELINE = "none"
