"""The HTML report's changes section: a side-by-side diff, line by line with
word-level marks, of the baseline's and this run's output for every case that
flipped, and the pipeline's significance verdicts per target.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from itertools import zip_longest

from eval_pipelines.reports.comparison import verdict_flags, verdict_notes
from eval_pipelines.reports.data import CaseResult, ReportData
from eval_pipelines.reports.html.format import badge, change_badge, e, fmt_score, slug
from eval_pipelines.reports.json_report import case_label

MAX_DIFF_LINES = 400


_TOKEN = re.compile(r"\w+|\s+|[^\w\s]", re.U)


def _word_diff(old: str, new: str) -> tuple[str, str]:
    a, b = _TOKEN.findall(old), _TOKEN.findall(new)
    left, right = [], []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            left.append(e("".join(a[i1:i2])))
            right.append(e("".join(b[j1:j2])))
            continue
        if i2 > i1:
            left.append(f"<del>{e(''.join(a[i1:i2]))}</del>")
        if j2 > j1:
            right.append(f"<ins>{e(''.join(b[j1:j2]))}</ins>")
    return "".join(left), "".join(right)


def diff_rows(old: str, new: str) -> list[tuple[str, str, str]]:
    """Side-by-side rows (left html, right html, kind) of a line diff with word-level changes."""
    a = old.splitlines()[:MAX_DIFF_LINES] or [""]
    b = new.splitlines()[:MAX_DIFF_LINES] or [""]
    rows: list[tuple[str, str, str]] = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            rows += [(e(x), e(y), "same") for x, y in zip(a[i1:i2], b[j1:j2])]
        elif tag == "replace":
            for x, y in zip_longest(a[i1:i2], b[j1:j2]):
                if x is None:
                    rows.append(("", f"<ins>{e(y)}</ins>", "add"))
                elif y is None:
                    rows.append((f"<del>{e(x)}</del>", "", "del"))
                else:
                    left, right = _word_diff(x, y)
                    rows.append((left, right, "chg"))
        elif tag == "delete":
            rows += [(f"<del>{e(x)}</del>", "", "del") for x in a[i1:i2]]
        elif tag == "insert":
            rows += [("", f"<ins>{e(y)}</ins>", "add") for y in b[j1:j2]]
    return rows


def _side(output: str | None, error: str | None) -> str:
    if output is not None:
        return output
    return f"[error] {error}" if error is not None else "[no output]"


def diff_table(case: CaseResult, baseline_label: str, current_label: str) -> str:
    base = case.baseline
    assert base is not None
    rows = diff_rows(_side(base.output, base.error), _side(case.output, case.error))
    same = all(kind == "same" for _, _, kind in rows)
    body = "".join(f'<tr class="{kind}"><td class="old"><pre>{left}</pre></td>'
                   f'<td class="new"><pre>{right}</pre></td></tr>' for left, right, kind in rows)
    note = '<p class="muted">The outputs are identical; the verdict changed with the grading.</p>' if same else ""
    return (f'<table class="diff"><thead><tr><th>{e(baseline_label)}: {badge(base.verdict or base.status)} '
            f'score {fmt_score(base.score)}</th><th>{e(current_label)}: {badge(case.outcome)} '
            f'score {fmt_score(case.score)}</th></tr></thead><tbody>{body}</tbody></table>{note}')


def regressions_section(data: ReportData) -> str:
    if data.baseline is None:
        return ""
    flipped = data.changed("now_failing") + data.changed("now_passing")
    parts = [f'<section id="regressions"><h2>Changes since {e(data.baseline.version)}</h2>']
    for sig in data.significance:
        parts.append(
            f'<p class="significance">{e(sig["target"])}: {sig["pass_rate_delta"] * 100:+.1f} points, '
            f'95% interval [{sig["ci_low"] * 100:+.1f}, {sig["ci_high"] * 100:+.1f}], '
            f'p = {sig["p_value"]:.3g} (Holm-adjusted {sig["adjusted_p"]:.3g}): '
            f'<strong>{e(sig["change"])}</strong>{e(verdict_flags(sig))}</p>')
        parts += [f'<p class="significance muted">{e(line)}</p>' for line in verdict_notes(sig)]
    if not flipped:
        parts.append('<p class="muted">No case flipped between pass and non-pass.</p>')
    for case in flipped:
        base = case.baseline
        parts.append(
            f'<div class="diff-block {e(case.change)}" id="diff-{e(slug(case_label(case, data)))}">'
            f'<h3>{change_badge(case.change)} <a href="#case-{e(slug(case_label(case, data)))}">'
            f'{e(case_label(case, data))}</a> {e(case.name or "")}: '
            f'{e(base.verdict or base.status if base else "")} → {e(case.outcome)}</h3>'
            f'{diff_table(case, data.baseline.version, data.run.version)}</div>')
    if data.removed:
        parts.append(f'<p>Removed since {e(data.baseline.version)}: {e(", ".join(data.removed))}</p>')
    parts.append("</section>")
    return "".join(parts)
