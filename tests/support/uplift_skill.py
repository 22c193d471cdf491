"""An Agent Skills package with a planted uplift, run offline by the stand-ins (issue 32).

20 evals × 3 runs, 5 expectations each (MARK_A ... MARK_E). The scripted agent reads the skill's
SKILL.md, then answers "MARK_A". The scripted judge finds an expectation met when the judged text
(answer, transcript, files) holds its mark. SKILL.md's body holds MARK_B, MARK_C and MARK_D, so:
with the skill installed the transcript holds them (4 of 5 met, 80%); without it the read fails
(only MARK_A: 1 of 5, 20%).
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

NAME = "uplift-demo"
CASES = 20
TRIALS = 3
MARKS = ("MARK_A", "MARK_B", "MARK_C", "MARK_D", "MARK_E")


def make_uplift_skill(folder: Path, *, cases: int = CASES, trials: int = TRIALS, hurts: bool = False,
                      version: str = "1.0.0") -> Path:
    """The package under ``folder`` (created); returns its path. ``hurts``: the planted effect the other
    way round (MARK_B ... MARK_D met only when the transcript does NOT hold SKILL.md's body)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {NAME}\ndescription: Answers questions about the planted marks.\nversion: {version}\n---\n"
        "# Uplift demo\n\nAlways mention MARK_B, MARK_C and MARK_D.\n", encoding="utf-8")
    evals = [{"id": i, "name": f"case-{i}", "prompt": f"Question {i}: which marks apply?",
              "expectations": [f"The answer names {mark}" for mark in MARKS]} for i in range(1, cases + 1)]
    (folder / "evals").mkdir(exist_ok=True)
    (folder / "evals" / "evals.json").write_text(json.dumps({"skill_name": NAME, "evals": evals}), encoding="utf-8")
    (folder / "eval-pipelines.yaml").write_text(f"trials: {trials}\n", encoding="utf-8")
    (folder / "agent-script.yaml").write_text(yaml.safe_dump({"cases": {"*": [
        {"tool": "read_file", "args": {"path": f"skills/{NAME}/SKILL.md"}},
        {"answer": "MARK_A"}]}}), encoding="utf-8")
    (folder / "judge-script.yaml").write_text(yaml.safe_dump({
        "rules": [{"expectation": mark, "holds": mark} if not hurts or mark in ("MARK_A", "MARK_E") else
                  {"expectation": mark, "matches": r"^(?![\s\S]*Always mention)"} for mark in MARKS],
        "otherwise": "fail"}), encoding="utf-8")
    (folder / "targets.yaml").write_text(yaml.safe_dump({"targets": [
        {"name": "default", "type": "agent", "model": "scripted-stand-in", "script": "agent-script.yaml",
         "max_turns": 4, "max_tool_calls": 4, "timeout_s": 60, "concurrency": 8},
        {"name": "judge", "type": "scripted_judge", "script": "judge-script.yaml"}]}), encoding="utf-8")
    return folder
