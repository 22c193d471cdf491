"""Report files: render a partition's report data in each format and write it atomically."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, TextIO

from eval_pipelines.reports.data import ReportData, load_report
from eval_pipelines.store.partition import Partition

EXTENSIONS = {"json": "json", "md": "md", "html": "html"}
FORMAT_ALIASES = {"markdown": "md", "json": "json", "md": "md", "html": "html"}


def renderer(fmt: str) -> Callable[[ReportData], str]:
    fmt = FORMAT_ALIASES[fmt]
    if fmt == "json":
        from eval_pipelines.reports.json_report import render_json

        return render_json
    if fmt == "md":
        from eval_pipelines.reports.markdown import render_markdown

        return render_markdown
    from eval_pipelines.reports.html.page import render_html

    return render_html


def report_filename(data: ReportData, fmt: str, name_baseline: bool = False) -> str:
    """``<skill>-<version>.<ext>``; ``-vs-<baseline>`` added when the baseline was chosen explicitly."""
    stem = f"{data.run.skill}-{data.run.version}"
    if name_baseline and data.baseline is not None:
        stem += f"-vs-{data.baseline.version}"
        if data.baseline.version == data.run.version:
            stem += f"-{data.baseline.eval_date}"
    return f"{stem}.{EXTENSIONS[FORMAT_ALIASES[fmt]]}".replace("/", "_")


def write_report(data: ReportData, fmt: str, out: Path) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    if FORMAT_ALIASES[fmt] == "json":  # written as it is encoded: the text of render_json, never whole in memory
        with tmp.open("w", encoding="utf-8") as file:
            write_json(data, file)
    else:
        tmp.write_text(renderer(fmt)(data), encoding="utf-8")
    tmp.replace(out)  # readers never see half a report
    return out


def write_json(data: ReportData, file: TextIO, chunks_per_write: int = 8192) -> None:
    """``render_json(data)`` written to ``file`` piece by piece. With ``indent`` the json module
    encodes in Python, one small string per token, and ``dumps`` joins them all: some 4 million
    strings (~250 MB) for a 100,000-case report. These are the same encoder's pieces, in groups."""
    import json

    from eval_pipelines.reports.json_report import build_report

    encoder = json.JSONEncoder(indent=2, ensure_ascii=False, default=str)  # render_json's settings
    pending: list[str] = []
    for chunk in encoder.iterencode(build_report(data)):
        pending.append(chunk)
        if len(pending) >= chunks_per_write:
            file.write("".join(pending))
            pending.clear()
    pending.append("\n")
    file.write("".join(pending))


def _formats_for(data: ReportData, formats: list[str] | None) -> list[str]:
    if formats:
        return [FORMAT_ALIASES[f] for f in formats]
    wanted = (data.run.reporting or {}).get("format") if isinstance(data.run.reporting, dict) else None
    if wanted:
        return list(dict.fromkeys(FORMAT_ALIASES[f] for f in wanted if f in FORMAT_ALIASES)) or ["json", "md", "html"]
    return ["json", "md", "html"]


def write_reports(db_path: str | Path, skill_version: str, eval_date: str, out_dir: str | Path,
                  formats: list[str] | None = None, against: str | None = None) -> dict[str, Path]:
    """Write the partition's reports into ``out_dir``; returns {format: path}.

    Formats: ``formats``, else the suite's ``reporting.format`` (seed 003), else all three.
    File names: ``<skill>-<version>.<ext>``, written atomically (temporary file, then rename).
    """
    skill, _, version = skill_version.partition("@")
    data = load_report(db_path, skill, version=version, eval_date=eval_date, against=against)
    written: dict[str, Path] = {}
    for fmt in _formats_for(data, formats):
        written[fmt] = write_report(data, fmt, Path(out_dir) / report_filename(data, fmt))
    return written


def write_partition_reports(db_path: str | Path, partition: Partition, out_dir: str | Path, *,
                            con: Any = None) -> tuple[dict[str, Path], str]:
    """The reports of one evaluated partition (the formats its suite asks for), and
    their short Markdown summary: what the pipeline's last stage produces. ``con``: the
    run's open connection to ``db_path`` (``load_report``)."""
    from eval_pipelines.reports.markdown import render_markdown_summary

    data = load_report(db_path, partition.skill, version=partition.version, eval_date=partition.eval_date, con=con)
    written = {fmt: write_report(data, fmt, Path(out_dir) / report_filename(data, fmt))
               for fmt in _formats_for(data, None)}
    return written, render_markdown_summary(data)
