"""The human review loop (seed 003 human grader).

``export_queue`` lists the outputs whose ``human`` assertion is
``pending_human`` as a CSV people fill in (or a self-contained HTML form that
produces the same CSV); ``read_ratings`` validates a filled-in CSV; the store
keeps ratings in ``human_ratings``; the next grading of the partition (a
re-run, or ``eval-pipelines grades import --regrade``) reads them back.
"""

from __future__ import annotations

import csv
import hashlib
import html
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from eval_pipelines.grading.base import output_hash
from eval_pipelines.suite.errors import SpecError, SpecErrors
from eval_pipelines.suite.source import read_text

QUEUE_COLUMNS = ["review_id", "skill_version", "test_id", "target", "trial", "output_hash",
                 "input", "output", "rubric", "scale", "rater", "rating", "comment"]


def review_id(skill_version: str, test_id: str, target: str, trial: int, digest: str) -> str:
    raw = f"{skill_version}|{test_id}|{target}|{trial}|{digest}"
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


def queue_rows(pending: pd.DataFrame) -> list[dict[str, Any]]:
    """One row per pending output, from a frame joining grades, outputs and cases."""
    rows = []
    for r in pending.to_dict("records"):
        digest = output_hash(r["output"])
        details = json.loads(r["details"]) if isinstance(r["details"], str) else (r["details"] or {})
        scale = details.get("scale") or {}
        rows.append({
            "review_id": review_id(r["skill_version"], r["test_id"], r["target"], int(r["trial"]), digest),
            "skill_version": r["skill_version"], "test_id": r["test_id"], "target": r["target"],
            "trial": int(r["trial"]), "output_hash": digest, "input": r["input"], "output": r["output"],
            "rubric": details.get("rubric") or "",
            "scale": f"{scale.get('type', 'likert')} {scale.get('range', [1, 5])}",
            "rater": "", "rating": "", "comment": "",
        })
    return rows


def write_csv(rows: list[dict[str, Any]], out: Path) -> None:
    with out.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=QUEUE_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)


def write_html(rows: list[dict[str, Any]], out: Path) -> None:
    """A self-contained review form: people rate in the browser and download the CSV."""
    items = []
    for i, r in enumerate(rows):
        items.append(f"""
<section class="item" data-row='{html.escape(json.dumps({k: r[k] for k in QUEUE_COLUMNS[:6]}), quote=True)}'>
  <h2>{i + 1}. {html.escape(r['test_id'])} <small>{html.escape(r['skill_version'])} · {html.escape(r['target'])} · trial {r['trial']}</small></h2>
  <h3>Input</h3><pre>{html.escape(r['input'])}</pre>
  <h3>Output</h3><pre>{html.escape(r['output'])}</pre>
  {f"<h3>Rubric</h3><pre>{html.escape(r['rubric'])}</pre>" if r['rubric'] else ""}
  <label>Rating ({html.escape(r['scale'])}) <input name="rating" type="number" step="any" required></label>
  <label>Comment <input name="comment" type="text"></label>
</section>""")
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Human review queue</title>
<style>
body {{ font: 15px/1.4 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; }}
.item {{ border: 1px solid #ccc; border-radius: 6px; padding: 0 1rem 1rem; margin: 1rem 0; }}
pre {{ background: #f6f6f6; padding: .5rem; white-space: pre-wrap; }}
label {{ display: block; margin: .5rem 0; }} small {{ color: #666; font-weight: normal; }}
</style></head><body>
<h1>Human review queue ({len(rows)} outputs)</h1>
<label>Your name <input id="rater" required></label>
{''.join(items)}
<button id="download">Download ratings CSV</button>
<script>
document.getElementById('download').addEventListener('click', () => {{
  const rater = document.getElementById('rater').value.trim();
  if (!rater) {{ alert('Enter your name first.'); return; }}
  const quote = v => '"' + String(v).replaceAll('"', '""') + '"';
  const lines = ['review_id,skill_version,test_id,target,trial,output_hash,rater,rating,comment'];
  for (const item of document.querySelectorAll('.item')) {{
    const row = JSON.parse(item.dataset.row);
    const rating = item.querySelector('[name=rating]').value;
    if (rating === '') continue;
    const comment = item.querySelector('[name=comment]').value;
    lines.push([row.review_id, row.skill_version, row.test_id, row.target, row.trial, row.output_hash,
                rater, rating, comment].map(quote).join(','));
  }}
  const blob = new Blob([lines.join('\\n') + '\\n'], {{type: 'text/csv'}});
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob); a.download = 'ratings-' + rater + '.csv'; a.click();
}});
</script></body></html>
"""
    out.write_text(page, encoding="utf-8")


@dataclass(frozen=True)
class Rating:
    review_id: str
    skill_version: str
    test_id: str
    target: str
    trial: int
    output_hash: str
    rater: str
    rating: float
    comment: str | None


def read_ratings(file: Path) -> list[Rating]:
    """Filled-in rows of a review CSV; rows without a rating are skipped, bad ones reported."""
    text = read_text(file)
    reader = csv.DictReader(io.StringIO(text, newline=""))
    required = {"review_id", "skill_version", "test_id", "target", "trial", "output_hash", "rater", "rating"}
    missing = required - set(reader.fieldnames or [])
    if missing:
        raise SpecErrors.single(file, f"missing column(s) {sorted(missing)}", line=1,
                                expected="the columns of an exported review queue")
    ratings: list[Rating] = []
    errors: list[SpecError] = []
    for row in reader:
        line = reader.line_num
        if not (row.get("rating") or "").strip():
            continue
        try:
            value = float(row["rating"])
        except ValueError:
            errors.append(SpecError(str(file), ("rating",), f"not a number: {row['rating']!r}", line))
            continue
        if not (row.get("rater") or "").strip():
            errors.append(SpecError(str(file), ("rater",), "rater is empty", line, "who gave the rating"))
            continue
        try:
            trial = int(row["trial"])
        except ValueError:
            errors.append(SpecError(str(file), ("trial",), f"not an integer: {row['trial']!r}", line))
            continue
        expected_id = review_id(row["skill_version"], row["test_id"], row["target"], trial, row["output_hash"])
        if row["review_id"] != expected_id:
            errors.append(SpecError(str(file), ("review_id",), "does not match the row's output",
                                    line, "the review_id exported with this row"))
            continue
        ratings.append(Rating(row["review_id"], row["skill_version"], row["test_id"], row["target"], trial,
                              row["output_hash"], row["rater"].strip(), value, row.get("comment") or None))
    if errors:
        raise SpecErrors(errors)
    return ratings
