"""Reports of a run or a comparison (JSON ``eval_report``, Markdown phase report,
self-contained HTML) and the SQL views users query.

Modules: ``data`` (load from DuckDB), ``json_report``, ``markdown``, ``html``,
``views`` (``install_views``), ``cli_report`` (``eval-pipelines report`` and
``write_reports`` for the Dagster asset). Import them directly; this package
imports nothing heavy on its own.
"""
