"""The HTML report's results table: one row per case (sortable and filterable
by the page's script), each opening the case's details: input, expected,
output, each assertion's score and reasoning, rubric scores, baseline diff.
"""

from __future__ import annotations

from typing import Iterable

from eval_pipelines.reports.data import CaseResult, Grade, ReportData
from eval_pipelines.reports.html.changes import diff_table
from eval_pipelines.reports.html.format import badge, change_badge, e, fmt_score, pre, pretty, slug
from eval_pipelines.reports.json_report import case_label

OUTCOMES = ("pass", "borderline", "fail", "error", "not_evaluated", "pending_human")
# Keys of grade details shown as text beside the reason (the judge's own words).
REASONING_KEYS = ("feedback", "reasoning", "explanation", "rationale", "judge_reasoning", "comment")
# An input longer than this (a base64 file variable written into a text prompt) is cut on the page.
MAX_INPUT_SHOWN = 20_000


def shown_input(text: str) -> str:
    """The case's input as the page shows it: whole, or its start and how much was left out."""
    if len(text) <= MAX_INPUT_SHOWN:
        return text
    return (f"{text[:MAX_INPUT_SHOWN]}\n... {len(text) - MAX_INPUT_SHOWN} more characters "
            "(the whole input is in test_cases.messages)")


def _grade_rows(grades: list[Grade]) -> str:
    rows = []
    for g in grades:
        extra = []
        rubric = g.details.get("rubric_scores")
        if isinstance(rubric, dict) and rubric:
            items = "".join(f"<tr><td>{e(k)}</td><td>{fmt_score(v) if isinstance(v, (int, float)) else e(v)}</td></tr>"
                            for k, v in rubric.items())
            extra.append(f'<table class="rubric"><caption>rubric scores</caption><tbody>{items}</tbody></table>')
        expectations = g.details.get("expectations") if g.type == "expectations" else None
        if isinstance(expectations, list) and expectations:
            items = "".join(f'<tr class="{"ok" if x.get("passed") else "bad"}"><td>{"✔" if x.get("passed") else "✘"}</td>'
                            f"<td>{e(x.get('text'))}</td><td>{e(x.get('evidence') or '')}</td></tr>"
                            for x in expectations if isinstance(x, dict))
            extra.append(f'<table class="expectations"><caption>expectations</caption><thead><tr><th></th>'
                         f"<th>expectation</th><th>evidence</th></tr></thead><tbody>{items}</tbody></table>")
        for key in REASONING_KEYS:
            if g.details.get(key):
                extra.append(f'<p class="reasoning"><b>{e(key)}:</b> {e(pretty(g.details[key]))}</p>')
        if g.details:
            extra.append(f"<details><summary>details</summary>{pre(g.details)}</details>")
        rows.append(
            f'<tr class="{"ok" if g.passed else "bad"}"><td>{g.index}</td><td><code>{e(g.type)}</code></td>'
            f"<td>{e(g.name)}</td><td>{e(g.family)}</td><td>{fmt_score(g.score)}</td><td>{e(g.status)}</td>"
            f'<td>{"✔" if g.passed else "✘"}</td><td>{e(g.reason)}{"".join(extra)}</td></tr>')
    return "".join(rows)


def _detail(case: CaseResult, data: ReportData) -> str:
    fields = [("Input", pre(shown_input(case.input)))]
    if case.expected is not None:
        fields.append(("Expected", pre(case.expected)))
    if case.criteria:
        fields.append(("Criteria", pre(case.criteria)))
    fields.append(("Output", pre(case.output if case.output is not None else "(no output)", "output")))
    if case.error is not None:
        fields.append(("Error", pre(case.error, "error")))
    fields.append(("Result", f"{badge(case.outcome)} score {fmt_score(case.score)}: {e(case.reason)}"))
    measured = []
    if case.latency_ms is not None:
        measured.append(f"{case.latency_ms:.0f} ms")
    if case.prompt_tokens is not None or case.completion_tokens is not None:
        measured.append(f"{(case.prompt_tokens or 0) + (case.completion_tokens or 0)} tokens")
    if case.cost_usd is not None:
        measured.append(f"${case.cost_usd:.5f}")
    if case.cached:
        measured.append("cached response")
    if measured:
        fields.append(("Call", e(", ".join(measured))))
    if case.baseline is not None and data.baseline is not None:
        b = case.baseline
        fields.append((f"Baseline {data.baseline.version}",
                       f"{badge(b.verdict or b.status)} score {fmt_score(b.score)}: {e(b.reason)}"))
        if (b.output, b.error) != (case.output, case.error):
            fields.append(("Diff", diff_table(case, data.baseline.version, data.run.version)))
    dl = "".join(f"<dt>{e(k)}</dt><dd>{v}</dd>" for k, v in fields)
    grades = ('<table class="grades"><thead><tr><th>#</th><th>type</th><th>name</th><th>grader</th>'
              "<th>score</th><th>status</th><th>passed</th><th>reasoning</th></tr></thead>"
              f"<tbody>{_grade_rows(case.grades)}</tbody></table>") if case.grades else \
        '<p class="muted">No assertions were graded.</p>'
    return f'<div class="case-detail"><dl>{dl}</dl><h4>Assertions</h4>{grades}</div>'


def _options(values: Iterable[str], label: str) -> str:
    return f'<option value="">{e(label)}</option>' + "".join(
        f'<option value="{e(v)}">{e(v.replace("_", " "))}</option>' for v in values)


COLUMNS = (("id", "Case", "text"), ("name", "Name", "text"), ("category", "Category", "text"),
           ("target", "Target", "text"), ("trial", "Trial", "number"), ("verdict", "Verdict", "text"),
           ("score", "Score", "number"), ("latency", "Latency (ms)", "number"))


# Past this many cases the page lists every case that did not pass or changed,
# then passing ones up to the limit: a 100,000-case page weighed 146 MB, more
# than a browser (or the run's memory) should carry. The JSON report and
# DuckDB keep every case.
HTML_CASE_LIMIT = 5000


def listed_cases(data: ReportData) -> list:
    if len(data.cases) <= HTML_CASE_LIMIT:
        return list(data.cases)
    notable = {id(c) for c in data.cases if c.outcome != "pass" or (c.change not in (None, "same"))}
    room = max(0, HTML_CASE_LIMIT - len(notable))
    listed = []
    for case in data.cases:
        if id(case) in notable:
            listed.append(case)
        elif room:
            listed.append(case)
            room -= 1
    return listed


def results_section(data: ReportData) -> str:
    compared = data.baseline is not None
    listed = listed_cases(data)
    omitted = len(data.cases) - len(listed)
    columns = list(COLUMNS) + ([("change", "Change", "text")] if compared else [])
    outcomes = [o for o in OUTCOMES if any(c.outcome == o for c in data.cases)]
    verdict_options = _options(outcomes, "all verdicts").replace(
        '</option>', '</option><option value="nonpass">not pass</option>', 1)
    filters = [
        f'<label>Verdict <select id="filter-verdict" data-filter="verdict">{verdict_options}</select></label>',
        f'<label>Category <select id="filter-category" data-filter="category">'
        f'{_options(sorted({c.category for c in data.cases}), "all categories")}</select></label>',
        f'<label>Target <select id="filter-target" data-filter="target">'
        f'{_options(sorted({c.target for c in data.cases}), "all targets")}</select></label>',
    ]
    if compared:
        changes = [k for k in ("now_failing", "now_passing", "changed", "same", "new") if data.changed(k)]
        filters.append(f'<label>Change <select id="filter-change" data-filter="change">'
                       f'{_options(changes, "all changes")}</select></label>')
    filters.append('<label>Search <input id="filter-text" type="search" placeholder="id, name, output"></label>')
    filters.append('<button type="button" id="expand-all">expand all</button>'
                   '<button type="button" id="collapse-all">collapse all</button>')
    head = "".join(f'<th data-key="{k}" data-type="{t}" tabindex="0" scope="col">{e(label)}</th>'
                   for k, label, t in columns)
    bodies = []
    for order, case in enumerate(listed):
        label = case_label(case, data)
        search = " ".join(filter(None, [case.test_id, case.name, shown_input(case.input),
                                         case.output, case.error])).lower()
        attrs = {
            "id": f"case-{slug(label)}", "data-order": order, "data-id": case.test_id, "data-name": case.name or "",
            "data-category": case.category, "data-target": case.target, "data-trial": case.trial,
            "data-verdict": case.outcome, "data-score": "" if case.score is None else f"{case.score:.6f}",
            "data-latency": "" if case.latency_ms is None else f"{case.latency_ms:.3f}",
            "data-change": case.change or "", "data-search": search[:4000],
        }
        attr_html = " ".join(f'{k}="{e(v)}"' for k, v in attrs.items())
        cells = [
            f'<td><button type="button" class="toggle" aria-expanded="false">{e(case.test_id)}</button></td>',
            f"<td>{e(case.name or '')}</td>", f"<td>{e(case.category)}</td>", f"<td>{e(case.target)}</td>",
            f"<td>{case.trial}</td>", f"<td>{badge(case.outcome)}</td>", f"<td>{fmt_score(case.score)}</td>",
            f"<td>{'' if case.latency_ms is None else f'{case.latency_ms:.0f}'}</td>",
        ]
        if compared:
            cells.append(f"<td>{change_badge(case.change)}</td>")
        bodies.append(f'<tbody class="case" {attr_html}><tr class="row">{"".join(cells)}</tr>'
                      f'<tr class="detail" hidden><td colspan="{len(columns)}">{_detail(case, data)}</td></tr></tbody>')
    return (f'<section id="results"><h2>Results</h2><div class="filters">{"".join(filters)}</div>'
            f'<p id="results-count" class="muted">{len(listed)} of {len(listed)} results shown</p>'
            + (f'<p id="results-omitted" class="muted">{omitted} more passing, unchanged results are not listed '
               f'on this page (it lists at most {HTML_CASE_LIMIT}, every failure and change first); the JSON '
               f'report and the <code>test_results</code> table in DuckDB have them all.</p>' if omitted else "")
            + f'<table id="results-table" class="results"><thead><tr>{head}</tr></thead>{"".join(bodies)}</table>'
            "</section>")
