"""Scripts a promptfoo config names read the files beside them (issue 35, item 8): a Python assert
imports its sibling module and opens a data file, a Python provider imports its sibling, both in the
sandbox, from a read-only copy of the config's folder (as promptfoo runs them in place)."""

from __future__ import annotations

from pathlib import Path

import duckdb

from eval_pipelines.cli import main


def test_script_asserts_and_providers_read_their_siblings_in_the_sandbox(tmp_path: Path) -> None:
    skill = tmp_path / "skill"
    (skill / "checks").mkdir(parents=True)
    (skill / "checks" / "words.py").write_text("EXPECTED = 'HELLO'\n")
    (skill / "checks" / "allowed.txt").write_text("HELLO THERE\n")
    (skill / "checks" / "check.py").write_text(
        "import os\nfrom words import EXPECTED\n"
        "def get_assert(output, context):\n"
        "    here = os.path.dirname(os.path.abspath(__file__))\n"
        "    allowed = open(os.path.join(here, 'allowed.txt')).read().strip()\n"
        "    try:\n        open(os.path.join(here, 'allowed.txt'), 'a').write('x')\n        wrote = True\n"
        "    except OSError:\n        wrote = False\n"
        "    return EXPECTED in output and output.strip() == allowed and not wrote\n")
    (skill / "shout.py").write_text("def shout(text):\n    return text.upper()\n")
    (skill / "provider.py").write_text("from shout import shout\n"
                                       "def call_api(prompt, options, context):\n    return {'output': shout(prompt)}\n")
    (skill / "promptfooconfig.yaml").write_text(
        "prompts: ['{{ q }}']\nproviders: [file://provider.py]\n"
        "tests:\n  - vars: {q: hello there}\n    assert: [{type: python, value: file://checks/check.py}]\n")
    db = tmp_path / "r.duckdb"
    main(["run", str(skill / "promptfooconfig.yaml"), "--root", str(tmp_path), "--db", str(db)])
    with duckdb.connect(str(db), read_only=True) as con:
        output = con.execute("SELECT output, error FROM model_outputs").fetchone()
        grade = con.execute("SELECT passed, status, reason FROM grades").fetchone()
    assert output == ("HELLO THERE", None)
    assert grade[:2] == (True, "graded"), grade
