"""A run's trajectory as promptfoo's trajectory assertions see it (src/assertions/trajectoryUtils.ts),
built from the tool calls our runs record (``tool_trajectory.actual_calls``); no grader here.

Each recorded call is one step: a ``command`` step when the tool runs a shell command
(``exec_command``, ``local_shell``, ``shell``, or ``execute`` with a ``cmd``/``command``/
``commands`` argument, and the command can be read from those arguments), named by the
command and also matched by the tool name and the executable; otherwise a ``tool`` step
named by the tool. promptfoo reads OpenTelemetry spans and also has ``message``,
``reasoning``, ``search`` and ``span`` steps: our runs record no such spans.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from eval_pipelines.grading.graders.tool_trajectory import actual_calls

STEP_TYPES = ("tool", "command")
COMMAND_TOOLS = {"exec_command", "local_shell", "shell"}


@dataclass(frozen=True)
class Step:
    type: str
    name: str
    aliases: tuple[str, ...]


def _command(name: str, args: dict[str, Any]) -> str | None:
    lowered = name.strip().lower()
    if lowered not in COMMAND_TOOLS and not (lowered == "execute" and any(k in args for k in ("cmd", "command", "commands"))):
        return None
    for key, separator in (("cmd", " "), ("command", " "), ("commands", "; ")):
        if key not in args:
            continue
        value = args[key]
        if isinstance(value, str) and value.strip():
            return value.strip()
        if isinstance(value, list):
            joined = separator.join(str(part).strip() for part in value if str(part).strip())
            return joined or None
        return None
    return None


def steps(trace: list[dict[str, Any]]) -> list[Step]:
    out = []
    for call in actual_calls(trace):
        command = _command(call.name, call.args)
        if command:
            executable = command.split()[0]
            out.append(Step("command", command, tuple(dict.fromkeys((command, call.name, executable)))))
        else:
            out.append(Step("tool", call.name, (call.name,)))
    return out


def matches_pattern(name: str, pattern: str) -> bool:
    """promptfoo's ``matchesPattern``: a whole-name glob (``*``, ``?``), case-insensitive."""
    regex = re.escape(pattern).replace(r"\*", ".*").replace(r"\?", ".")
    return re.fullmatch(regex, name, re.IGNORECASE | re.DOTALL) is not None


def matches(step: Step, types: list[str] | None, pattern: str | None) -> bool:
    if types and step.type not in types:
        return False
    return pattern is None or any(matches_pattern(alias, pattern) for alias in step.aliases)


def summary(trace: list[dict[str, Any]], given: list[Step] | None = None) -> str:
    """The trajectory (``given`` steps, else the recorded tool calls') for a judge, in promptfoo's
    summary shape: {stepCount, steps: [{index, type, name}]}."""
    listed = [{"index": i, "type": s.type, "name": s.name}
              for i, s in enumerate(steps(trace) if given is None else given, start=1)]
    return json.dumps({"stepCount": len(listed), "steps": listed}, ensure_ascii=False)
