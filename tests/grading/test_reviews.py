"""The human review loop: pending_human -> export queue -> ratings -> import -> graded."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from eval_pipelines.cli import main
from eval_pipelines.store.connection import connect

SKILL_MD = "---\nname: poet\ndescription: writes one-line poems\nversion: 1.0.0\n---\nWrite a poem.\n"
SCRIPT = "import sys\nprint('roses are red, ' + sys.stdin.read().strip())\n"
SUITE = """
name: poet
description: People judge the poems.
tests:
  - id: p1
    input: violets are blue
    assert:
      - type: contains
        value: roses
      - type: human
        evaluators: {min_required: 2, agreement_threshold: 0.5}
        rating_scale: {type: likert, range: [1, 5]}
        rubric: Is it a pleasant poem?
  - id: p2
    input: sugar is sweet
    assert:
      - type: contains
        value: roses
"""


@pytest.fixture()
def skill(tmp_path: Path) -> Path:
    root = tmp_path / "skills" / "poet"
    root.mkdir(parents=True)
    (root / "SKILL.md").write_text(SKILL_MD)
    (root / "poem.py").write_text(SCRIPT)
    (root / "eval.yaml").write_text(SUITE)
    (root / "targets.yaml").write_text(
        "targets:\n  - name: script\n    type: command\n    command: [python, poem.py]\n")
    return root


def results(db: Path) -> dict[str, tuple]:
    with connect(db) as con:
        rows = con.execute("SELECT test_id, status, verdict, score FROM test_results").fetchall()
    return {r[0]: r[1:] for r in rows}


def fill(queue: Path, out: Path, ratings: list[tuple[str, str]]) -> None:
    with queue.open() as f:
        rows = list(csv.DictReader(f))
    with out.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        for rater, rating in ratings:
            for row in rows:
                writer.writerow({**row, "rater": rater, "rating": rating, "comment": "ok"})


@pytest.mark.slow
def test_review_loop_turns_pending_into_graded(skill: Path, tmp_path: Path, capsys) -> None:
    db = tmp_path / "r.duckdb"
    root = ["--root", str(tmp_path)]
    main(["run", str(skill), "--db", str(db), *root])
    before = results(db)
    assert before["p1"][:2] == ("pending_human", None)  # never a pass or a fail while waiting
    assert before["p2"][:2] == ("graded", "pass")

    queue, form = tmp_path / "queue.csv", tmp_path / "queue.html"
    assert main(["grades", "export", "--db", str(db), "--out", str(queue), "--html", str(form), *root]) == 0
    rows = list(csv.DictReader(queue.open()))
    assert [(r["test_id"], r["rubric"]) for r in rows] == [("p1", "Is it a pleasant poem?")]
    assert rows[0]["output"] == "roses are red, violets are blue"
    page = form.read_text()
    assert "roses are red, violets are blue" in page and "Download ratings CSV" in page

    one = tmp_path / "one.csv"
    fill(queue, one, [("ann", "5")])
    assert main(["grades", "import", str(one), "--db", str(db), "--regrade", *root]) == 0
    assert results(db)["p1"][0] == "pending_human"  # 1 of 2 raters

    two = tmp_path / "two.csv"
    fill(queue, two, [("ann", "5"), ("bob", "4")])
    assert main(["grades", "import", str(two), "--db", str(db), "--regrade", *root]) == 0
    status, verdict, score = results(db)["p1"]
    # contains (1.0) and human (median of 1.0 and 0.75 = 0.875), equal weights.
    assert (status, verdict) == ("graded", "pass") and score == pytest.approx((1.0 + 0.875) / 2)
    with connect(db) as con:
        assert con.execute("SELECT count(*) FROM human_ratings").fetchone()[0] == 2  # ann's re-import replaced


def test_bad_ratings_file_is_reported_with_its_line(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("review_id,skill_version,test_id,target,trial,output_hash,rater,rating,comment\n"
                   "x,poet@1.0.0,p1,script,0,abc,ann,great,\n")
    assert main(["grades", "import", str(bad), "--db", str(tmp_path / "r.duckdb")]) == 2
    out = capsys.readouterr().out
    assert f"{bad}:2: rating: not a number: 'great'" in out
    forged = tmp_path / "forged.csv"
    forged.write_text("review_id,skill_version,test_id,target,trial,output_hash,rater,rating,comment\n"
                      "x,poet@1.0.0,p1,script,0,abc,ann,5,\n")
    assert main(["grades", "import", str(forged), "--db", str(tmp_path / "r.duckdb")]) == 2
    assert "review_id: does not match" in capsys.readouterr().out
