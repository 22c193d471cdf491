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
* ``metric`` on an assertion: its name (as v5 reads it), unless it has a ``name``.
* inside a ``composite``: the same mapping for its nested assertions; an aggregator
  of type ``script``/``code-grader`` is the ``code_judge`` aggregator, one of type
  ``llm-rubric``/``llm-grader`` the ``llm_judge`` aggregator (``prompt`` its file).
* ``experiment: {target | targets | workers}`` (HEAD's experiment block, inline; its
  experiment-file schema gives these fields the meaning ``execution``'s have): read as
  ``execution``. An ``experiment`` with other fields (``runs``, ``repeat``, ``scripts``,
  ...) stays, and is refused as an unknown field.
* ``workspace.hooks``: HEAD's hook names ``before_all``/``after_all``/``before_each``/
  ``after_each`` are read by ``agentv_workspace`` beside v2's ``before_all_tests``/...
  (setup, teardown, per-test warnings).
* ``name`` without ``description``: the suite's name (AgentV's ``metadata.ts`` makes the
  description optional; ``eval_yaml`` stores a warning for it, in either vocabulary).
* ``tests[].vars``: per-test data for ``{{ name }}`` placeholders in the test's criteria,
  input, expected output, assertions and turns, and in the suite-level ``input`` (``agentv_vars``).
* ``preprocessors`` (suite level): checked as AgentV checks them, then dropped with a stored
  warning: they convert file blocks of an agent's output, and our targets answer in text
  (``agentv_preprocessors``).
* ``mode: conversation`` with ``turns`` (and ``aggregation``, ``on_turn_failure``,
  ``window_size``): one case per turn, each after the turns before it (``agentv_conversation``).
* ``tests: ./cases/`` (a folder): AgentV's ``loadCasesFromDirectory``: each immediate
  subfolder holding a ``case.yaml`` (or ``case.yml``) is one test, in name order,
  its ``id`` the folder's name unless the case sets one; a subfolder without a case
  file is skipped with a stored warning; a case's own ``workspace/`` folder (a
  per-case workspace template in AgentV) is refused.

The eval.yaml mapping is applied only to names v2 never accepted (v2 refused each
of them), so a v2 suite loads as before.
"""

from __future__ import annotations

from typing import Any

from eval_pipelines.suite.errors import SpecError, SpecErrors
from eval_pipelines.formats.agentv.conversation import CONVERSATION_KEYS, expand_conversations, link_turns
from eval_pipelines.formats.agentv.preprocessors import take_preprocessors
from eval_pipelines.formats.agentv.vars import apply_test_vars
from eval_pipelines.formats.eval_yaml.loader import load_eval_yaml
from eval_pipelines.suite.models import Suite
from eval_pipelines.suite.paths import PathPolicy
from eval_pipelines.suite.source import Document, load_document

# AgentV names of the later vocabulary and the eval.yaml type each becomes.
GRADER_TYPES = {"llm-grader": "llm_judge", "llm-judge": "llm_judge", "code-grader": "code_judge"}
ASSERTION_LISTS = ("assert", "assertions")
# The fields this module accepts in the tests+input shape (the field contract lists them).
HEAD_SUITE_KEYS = ("governance", "experiment", "preprocessors")
HEAD_TEST_KEYS = ("vars", *CONVERSATION_KEYS)  # applied (and removed) by agentv_vars before the eval.yaml loader reads the test
EXPERIMENT_AS_EXECUTION = {"target", "targets", "workers"}
HEAD_ASSERTION_KEYS = ("metric", "skill-trigger.skill", "skill-trigger.should_trigger", "llm-grader.max_steps",
                       "llm-grader.target")


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
    if isinstance(item.get("metric"), str) and "name" not in item:
        item = {**{k: v for k, v in item.items() if k != "metric"}, "name": item["metric"]}
    kind = item["type"]
    if kind == "composite":
        return _composite(item)
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


AGGREGATOR_TYPES = {"script": "code_judge", "code-grader": "code_judge", "llm-rubric": "llm_judge",
                    "llm-grader": "llm_judge"}


def _composite(item: dict[str, Any]) -> dict[str, Any]:
    out = _assertions(item)
    aggregator = out.get("aggregator")
    if isinstance(aggregator, dict) and aggregator.get("type") in AGGREGATOR_TYPES:
        aggregator = {**aggregator, "type": AGGREGATOR_TYPES[aggregator["type"]]}
        if isinstance(aggregator.get("prompt"), str):
            aggregator["prompt"] = aggregator["prompt"].removeprefix("file://")
        out["aggregator"] = aggregator
    return out


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
    lines = doc.lines
    experiment = out.get("experiment")
    if isinstance(experiment, dict) and "execution" not in out and set(experiment) <= EXPERIMENT_AS_EXECUTION:
        out["execution"] = out.pop("experiment")
        lines = {**lines, **{("execution",) + k[1:]: v for k, v in lines.items() if k[:1] == ("experiment",)}}
    return Document(doc.file, out, lines), governance


def _case_folder(doc: Document, policy: PathPolicy) -> tuple[Document, list[str]]:
    """``tests: ./cases/``: the folder's case files inlined as ``tests`` (see the module doc)."""
    raw = doc.data
    ref = raw.get("tests") if isinstance(raw, dict) else None
    if not isinstance(ref, str):
        return doc, []
    folder = doc.file.parent / ref.removeprefix("file://")
    if not folder.is_dir():
        return doc, []
    errors: list[SpecError] = []
    if not policy.check(folder, doc, ("tests",), errors):
        raise SpecErrors(errors)
    tests: list[Any] = []
    warnings: list[str] = []
    lines = dict(doc.lines)
    for sub in sorted(p for p in folder.iterdir() if p.is_dir()):
        case_file = next((sub / n for n in ("case.yaml", "case.yml") if (sub / n).is_file()), None)
        if case_file is None:
            warnings.append(f"{doc.file}: tests: folder {sub.name!r} has no case.yaml; skipped (as AgentV does)")
            continue
        case = load_document(case_file)
        path = ("tests", len(tests))
        if not isinstance(case.data, dict):
            errors.append(SpecError(str(case_file), (), "a case file must hold one mapping", 1, "a test mapping"))
            continue
        if (sub / "workspace").is_dir() and "workspace" not in case.data:
            errors.append(SpecError(str(case_file), (), f"the case's own workspace folder ({sub.name}/workspace/) "
                                    "is not supported", None, "the suite's workspace"))
            continue
        tests.append({"id": sub.name, **case.data} if case.data.get("id") is None else case.data)
        lines[path] = doc.line_of(("tests",)) or 1
    if errors:
        raise SpecErrors(errors)
    return Document(doc.file, {**raw, "tests": tests}, lines), warnings


def load_eval_yaml_head(doc: Document, policy: PathPolicy) -> tuple[Suite, list[str]]:
    """An eval.yaml suite, in v2's names or AgentV HEAD's later ones."""
    doc, folder_warnings = _case_folder(doc, policy)
    doc, vars_warnings = apply_test_vars(doc)
    doc, preprocessor_warnings = take_preprocessors(doc, policy)
    doc, conversation_warnings, turn_order = expand_conversations(doc)
    vars_warnings += preprocessor_warnings + conversation_warnings
    mapped, governance = head_vocabulary(doc)
    suite, warnings = load_eval_yaml(mapped, policy, tool="AgentV")
    link_turns(suite, turn_order)
    warnings = folder_warnings + vars_warnings + warnings
    if governance is not None:
        apply_governance(suite, governance)
    return suite, warnings
