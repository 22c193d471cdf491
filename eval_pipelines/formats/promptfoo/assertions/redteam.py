"""promptfoo's red-team grader assertions, ``promptfoo:redteam:<plugin>``, as our ``redteam``
assertion (grading/graders/redteam.py).

promptfoo's ``handleRedteam`` (src/assertions/redteam.ts) looks the type up in its graders
(src/redteam/graders.ts) and grades with that plugin's rubric. Here a supported plugin becomes
``{type: redteam, plugin, value, purpose}``: ``value`` as written (rendered with the test's
variables), ``purpose`` the config's ``redteam.purpose`` (the purpose of tests whose metadata has
none; ``promptfoo redteam generate`` copies it into each test it writes). The test's own
metadata (``purpose``, ``goal``, ``entities``, ``pluginId``, ``pluginConfig``) reaches the
grader with the case.

Refused in one line: a plugin whose grader grades something we do not read (the ``agentic:*``
runtime graders read structured findings an agent harness records, never the output), one whose
grader needs state a single output does not carry, and an id promptfoo has no grader for here.
"""

from __future__ import annotations

from typing import Any

from eval_pipelines.grading.graders.redteam import PREFIX, rubric_names, supported
from eval_pipelines.formats.promptfoo.assertions.vocabulary import Refused

DOCS = "docs/promptfoo.md, \"Red-team graders\", lists the supported plugins"

# promptfoo plugins whose grader reads what this installation does not have: plugin -> why.
CANNOT_GRADE = {
    "agentic:": "promptfoo's agentic runtime graders (src/redteam/plugins/agentic.ts) grade the structured "
                "findings an agent SDK harness records (span attributes such as promptfoo.agentic.evidence_json, "
                "or provider evidence), never the output; those graders are not built here",
    "cross-session-leak": "its grader compares two sessions' outputs (a stateful two-step test)",
    "memory-poisoning": "its grader needs the poisoned memory written in an earlier turn",
}


def _cannot(plugin: str) -> str | None:
    for name, why in CANNOT_GRADE.items():
        if plugin == name or (name.endswith(":") and plugin.startswith(name)):
            return why
    return None


def _config_purpose(root: Any) -> str | None:
    redteam = root.get("redteam") if isinstance(root, dict) else None
    purpose = redteam.get("purpose") if isinstance(redteam, dict) else None
    return str(purpose) if isinstance(purpose, str) and purpose.strip() else None


def redteam_assertion(raw: dict[str, Any], root: Any = None) -> dict[str, Any]:
    """``promptfoo:redteam:<plugin>`` as our ``redteam`` mapping, or ``Refused``."""
    plugin = str(raw["type"]).removeprefix("not-").removeprefix(PREFIX)
    why = _cannot(plugin)
    if why:
        raise Refused(f"red-team plugin {plugin!r} is not supported: {why}")
    if not supported(plugin):
        raise Refused(f"red-team plugin {plugin!r} has no grader here ({DOCS})")
    if plugin == "indirect-prompt-injection" and not (isinstance(raw.get("value"), str) and raw["value"].strip()):
        raise Refused("`value` (the injected instructions the grader looks for) is required")
    out: dict[str, Any] = {"type": "redteam", "plugin": plugin}
    if raw.get("value") is not None:
        out["value"] = raw["value"]
    purpose = _config_purpose(root)
    if purpose:
        out["purpose"] = purpose
    return out


def redteam_warning(raw: dict[str, Any]) -> str | None:
    """An "accepted but not used" note for the parts of ``value`` the plugin's rubric does not read
    (promptfoo spreads a mapping ``value`` into the rubric's variables; unread keys do nothing)."""
    plugin = str(raw["type"]).removeprefix("not-").removeprefix(PREFIX)
    value = raw.get("value")
    if value is None or not supported(plugin):
        return None
    names = rubric_names(plugin)
    if isinstance(value, dict):
        unread = sorted(str(k) for k in value if k not in names)
        if unread and "value" not in names:
            return (f"value.{', value.'.join(unread)}: accepted but not used (the {plugin} rubric does not "
                    "read them)")
        return None
    return None if "value" in names else f"value: accepted but not used (the {plugin} rubric reads no value)"


def redteam_grading_provider(root: Any) -> tuple[Any, tuple[Any, ...]] | None:
    """The provider promptfoo's red-team graders grade with, and where it is written: its
    ``redteamProviderManager.getGradingProvider`` (src/redteam/providers/shared.ts) takes
    ``defaultTest.provider``, else ``defaultTest.options.provider`` (its ``text`` entry when by kind),
    else the red-team provider (``redteam.provider``); a test's own ``options.provider`` is not read.
    None: none of them (the suite's judge grades)."""
    default = root.get("defaultTest") if isinstance(root, dict) else None
    options = default.get("options") if isinstance(default, dict) else None
    if isinstance(default, dict) and default.get("provider") is not None:
        return default["provider"], ("defaultTest", "provider")
    if isinstance(options, dict) and options.get("provider") is not None:
        return options["provider"], ("defaultTest", "options", "provider")
    redteam = root.get("redteam") if isinstance(root, dict) else None
    if isinstance(redteam, dict) and redteam.get("provider") is not None:
        return redteam["provider"], ("redteam", "provider")
    return None
