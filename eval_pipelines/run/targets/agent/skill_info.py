"""What both agent target kinds read from the installed skill and the case (no model client here, so
loading it costs nothing): the skill's front matter and body, and the task as the agent gets it."""

from __future__ import annotations

from pathlib import Path

from eval_pipelines.run.targets.base import TargetRequest


class SkillInfo:
    """The installed skill: the folder's SKILL.md front matter (name, description) and body."""

    def __init__(self, root: Path) -> None:
        from eval_pipelines.suite.package import parse_front_matter

        self.root = root
        meta, self.body = parse_front_matter((root / "SKILL.md").read_text(encoding="utf-8"), root / "SKILL.md")
        self.name = str(meta.get("name") or root.name)
        self.description = " ".join(str(meta.get("description") or "").split())


def user_prompt(request: TargetRequest) -> str:
    """The case's user messages, then the list of its input files staged in the workspace."""
    text = request.user_text
    if request.input_files:
        listed = "\n".join(f"- {f.path}" for f in request.input_files)
        text = f"{text}\n\nInput files (in your workspace):\n{listed}"
    return text
