"""AgentV's ``extensions`` (v5 suites): promptfoo-style lifecycle hooks and the built-in ``agentv:agent-rules``.

What AgentV does (``evaluation/extensions/runner.ts``, its schema and ``extensions.test.ts``):

* ``file://path/to/hook.ts:beforeAll`` (``beforeEach``, ``afterEach``, ``afterAll``): AgentV
  imports that module into its own process and calls the named function with the run's context
  (workspace path, test id, provider context); what it returns changes the provider context, the
  results' metadata and their hook output, and it may change the workspace. Suite code never runs
  in-process here, and the hooks' contract is AgentV's runtime: refused, one line per entry.
* ``agentv:agent-rules`` (also ``agentv:agent-rules:<hook>`` or ``{id: agentv:agent-rules, hook}``):
  finds the skills, hooks, agents and rules already in the workspace (``.claude/skills``,
  ``.agents/skills``, ``.codex/skills``, ``.pi/skills``, ``skills``; ``.claude/hooks``, ...;
  ``.agents/agents``, ``.codex/agents``, ``agents``; ``AGENTS.md``, ``CLAUDE.md``, ``rules``) and
  hands their paths to the target (agent providers such as Claude Code load them) and to the
  results' ``metadata.agent_rules_paths``. Here the workspace is a copy of the suite's
  ``environment.workdir`` / ``workspace.template``, so the same search is made in that folder when
  the suite loads: what is found is stored with every case as ``metadata.agent_rules_paths``
  (paths relative to the workspace), and a stored warning says that the targets here (models
  called over an API, command targets) are not handed them. Configured paths (``skills:``,
  ``rules:``, ...), which AgentV copies into the workspace first, are refused.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from eval_pipelines.suite.errors import SpecError
from eval_pipelines.suite.models import Suite
from eval_pipelines.suite.source import Document

AGENT_RULES = "agentv:agent-rules"
HOOKS = ("beforeAll", "beforeEach", "afterEach", "afterAll")
# runner.ts runAgentRulesExtension: what it looks for in the workspace, per kind, in this order.
DISCOVER = {
    "skills": (".claude/skills", ".agents/skills", ".codex/skills", ".pi/skills", "skills"),
    "hooks": (".claude/hooks", ".agents/hooks", ".codex/hooks", ".pi/hooks", "hooks"),
    "agents": (".agents/agents", ".codex/agents", "agents"),
    "rules": ("AGENTS.md", "CLAUDE.md", "rules"),
}
CONFIGURED = ("skills", "hooks", "agents", "rules")


def _is_agent_rules(entry: Any) -> bool:
    if isinstance(entry, str):
        return entry == AGENT_RULES or (entry.startswith(AGENT_RULES + ":")
                                        and entry[len(AGENT_RULES) + 1:] in HOOKS)
    return isinstance(entry, dict) and entry.get("id") == AGENT_RULES


def read_extensions(doc: Document, raw: Any) -> tuple[list[SpecError], bool]:
    """The refusals for ``extensions`` (one line per refused entry) and whether agent-rules is asked for."""
    entries = raw if isinstance(raw, list) and raw else [raw]
    errors: list[SpecError] = []
    agent_rules = False
    for i, entry in enumerate(entries):
        path = ("extensions", i) if isinstance(raw, list) else ("extensions",)

        def refuse(message: str, where: tuple[Any, ...] = path) -> None:
            errors.append(SpecError(str(doc.file), where, message, doc.line_of(where) or doc.line_of(path),
                                    "a suite without extensions, or agentv:agent-rules"))

        if _is_agent_rules(entry):
            extra = sorted(set(entry) - {"id", "hook"}) if isinstance(entry, dict) else []
            if isinstance(entry, dict) and entry.get("hook", "beforeAll") not in HOOKS:
                refuse(f"agentv:agent-rules hook {entry.get('hook')!r} is not one of {', '.join(HOOKS)}",
                       path + ("hook",))
            elif extra:
                refuse(f"agentv:agent-rules `{extra[0]}` paths are not supported: AgentV copies the configured "
                       "paths into the workspace (.agentv/agent-rules/) before the agent runs; here only what the "
                       "workspace already holds is found", path + (extra[0],))
            else:
                agent_rules = True
            continue
        written = entry if isinstance(entry, str) else json.dumps(entry, ensure_ascii=False)
        refuse(f"extension hook {written} is not supported: AgentV imports that module into its own process "
               "and calls the named lifecycle hook (beforeAll, beforeEach, afterEach, afterAll) with the "
               "run's context (workspace path, test id, provider context) to change the workspace or what "
               "the target gets; suite code never runs in-process here")
    return errors, agent_rules


def apply_agent_rules(doc: Document, suite: Suite, workdir: str | None) -> list[str]:
    """``metadata.agent_rules_paths`` on every case (what the workspace holds), and the warning."""
    folder = (doc.file.parent / workdir) if workdir else None
    found: dict[str, list[str]] = {}
    if folder is not None and folder.is_dir():
        for kind, candidates in DISCOVER.items():
            paths = [c for c in candidates if (folder / c).exists()]
            if paths:
                found[kind] = paths
    if found:
        for case in suite.tests:
            case.metadata["agent_rules_paths"] = found
    where = f"in the workspace ({Path(workdir).as_posix()})" if workdir else "(the suite names no workspace)"
    listed = ("; ".join(f"{k}: {', '.join(v)}" for k, v in found.items())
              + ", stored with each case as metadata.agent_rules_paths") if found else "none found"
    return [f"{doc.file}: extensions: agentv:agent-rules: skills, hooks, agents and rules {where}: {listed}; "
            "the targets here are not handed them (AgentV hands them to agent targets such as Claude Code, "
            "which load them)"]
