"""AgentV HEAD's later vocabulary, read on top of the v5 and eval.yaml loaders.

AgentV's examples at HEAD are in two shapes: v5's ``prompts`` + ``tests[].vars``
(``agentv_v5``) and the ``tests[].input`` + ``assertions`` shape of the releases
between v2 and v5 (``eval_yaml``). Both use names v2 did not have; this module
maps them, so that every one has an effect:

* ``governance`` (suite level): merged into every case's ``metadata.governance``
  (stored with the case, ``test_cases.metadata``) as AgentV's governance reference
  says: lists (``owasp_llm_top_10_2025``, ``mitre_atlas``, ``controls``, ...) are the
  suite's items then the case's, without duplicates; a scalar set on the case wins.
* ``llm-grader`` / ``llm-judge``: the model-graded ``llm_judge`` (``prompt`` is its
  prompt file; a ``file://`` prefix is dropped); ``code-grader``: ``code_judge``.
* a plain string among a test's assertions: a rubric criterion (``llm_judge`` with
  that ``rubric``), as in v5.
* ``llm-rubric`` with ``prompt: file://...`` (no ``value``): ``llm_judge`` with that
  prompt file.
* ``skill-trigger`` (``skill``, ``should_trigger``): whether the agent invoked the
  skill, read as v5's ``skill-used`` reads it (a ``Skill`` tool call naming it, a
  ``tool_trajectory``); ``should_trigger: false`` negates it.
* ``rubrics`` with one ``criteria`` string: a list of that one criterion.

The eval.yaml mapping is applied only to names v2 never accepted (v2 refused each
of them), so a v2 suite loads as before.
"""

from __future__ import annotations

from typing import Any

from eval_pipelines.spec.loaders.eval_yaml import load_eval_yaml
from eval_pipelines.spec.models import Suite
from eval_pipelines.spec.paths import PathPolicy
from eval_pipelines.spec.source import Document

# AgentV names of the later vocabulary and the eval.yaml type each becomes.
GRADER_TYPES = {"llm-grader": "llm_judge", "llm-judge": "llm_judge", "code-grader": "code_judge"}
ASSERTION_LISTS = ("assert", "assertions")


def merge_governance(suite: dict[str, Any], case: Any) -> dict[str, Any]:
    """AgentV's suite + case merge: lists concatenated and deduplicated, the case's scalars win."""
    if not isinstance(case, dict):
        return dict(suite)
    merged = dict(suite)
    for key, value in case.items():
        inherited = merged.get(key)
        if isinstance(value, list) and isinstance(inherited, list):
            merged[key] = list(dict.fromkeys([*inherited, *value]))  # values are YAML scalars here
        else:
            merged[key] = value
    return merged


def apply_governance(suite: Suite, governance: dict[str, Any]) -> None:
    """Suite-level ``governance`` into every loaded case's ``metadata.governance``."""
    for case in suite.tests:
        case.metadata["governance"] = merge_governance(governance, case.metadata.get("governance"))


def _assertion(item: Any) -> Any:
    if isinstance(item, str):
        return {"type": "llm_judge", "rubric": item}
    if not isinstance(item, dict) or not isinstance(item.get("type"), str):
        return item
    kind = item["type"]
    if kind in GRADER_TYPES:
        out = {**item, "type": GRADER_TYPES[kind]}
        if isinstance(out.get("prompt"), str):
            out["prompt"] = out["prompt"].removeprefix("file://")
        return out
    if kind == "skill-trigger" and isinstance(item.get("skill"), str) and item["skill"]:
        rest = {k: v for k, v in item.items() if k not in ("type", "skill", "should_trigger")}
        negate = item.get("should_trigger", True) is False
        return {**rest, "type": "tool_trajectory", "mode": "any_order",
                "expected": [{"tool": "Skill", "args": {"skill": item["skill"]}}],
                **({"negate": not rest.get("negate", False)} if negate else {})}
    if kind == "rubrics" and isinstance(item.get("criteria"), str):
        return {**item, "criteria": [item["criteria"]]}
    if kind in ("llm-rubric", "llm_rubric") and "value" not in item and isinstance(item.get("prompt"), str):
        return {**item, "type": "llm_judge", "prompt": item["prompt"].removeprefix("file://")}
    return item


def _assertions(holder: dict[str, Any]) -> dict[str, Any]:
    out = dict(holder)
    for key in ASSERTION_LISTS:
        if isinstance(out.get(key), list):
            out[key] = [_assertion(item) for item in out[key]]
    return out


def head_vocabulary(doc: Document) -> tuple[Document, dict[str, Any] | None]:
    """The eval.yaml document with AgentV HEAD's names mapped, and its suite-level governance.

    An invalid ``governance`` (not a mapping) is left in place, so the loader refuses it
    as an unknown field with its line."""
    data = doc.data
    if not isinstance(data, dict):
        return doc, None
    out = _assertions(data)
    governance = out.pop("governance", None) if isinstance(out.get("governance"), dict) else None
    if isinstance(out.get("tests"), list):
        out["tests"] = [_assertions(t) if isinstance(t, dict) else t for t in out["tests"]]
    return Document(doc.file, out, doc.lines), governance


def load_eval_yaml_head(doc: Document, policy: PathPolicy) -> tuple[Suite, list[str]]:
    """An eval.yaml suite, in v2's names or AgentV HEAD's later ones."""
    mapped, governance = head_vocabulary(doc)
    suite, warnings = load_eval_yaml(mapped, policy)
    if governance is not None:
        apply_governance(suite, governance)
    return suite, warnings
