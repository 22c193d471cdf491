"""AgentV v5 suites: promptfoo's shape with AgentV's names, loaded by ``promptfoo``.

AgentV v5 moved to ``prompts`` + ``tests[].vars`` (its loader refuses the old
``tests[].input``). What differs from promptfoo, and where it goes:

* ``name``, ``description``, ``version``, ``author``, ``license``, ``tags`` (a
  list): the suite's metadata.
* ``target`` / ``targets`` / ``providers``: target names from targets.yaml (a
  provider id such as ``openai:chat:gpt-4o`` works as in promptfoo).
* ``default_test``, ``evaluate_options`` (``repeat``, ``max_concurrency``,
  ``timeout_ms``, ``cache``): promptfoo's ``defaultTest``/``evaluateOptions``.
* suite-level ``assert``: added to every test (``execution.skip_defaults: true``
  on a test opts out); ``tests: ./cases/`` reads every case file of a folder.
* assertions: a plain string is a rubric criterion (``rubrics``); ``metric:`` or
  ``name:`` names it; ``required`` / ``min_score`` gate the case;
  ``script`` runs a code grader (``code_judge``); ``trajectory:tool-used``,
  ``trajectory:tool-sequence``, ``trajectory:tool-args-match`` and
  ``skill-used`` check the tool calls (``tool_trajectory``).
* ``environment``: ``type: host`` with ``workdir`` copies that folder as the
  run's workspace; other environment types are refused, and so is ``setup`` (AgentV runs
  it in the eval file's folder to prepare the workdir in place, network allowed). ``workspace: {template,
  scope: suite}`` does the same (other scopes are refused).
* ``extensions`` (``agentv_extensions``): a ``file://module:hook`` entry (a lifecycle hook AgentV
  imports and calls in its own process) is refused, saying so; ``agentv:agent-rules`` stores the
  skills and rules the workspace holds as each case's ``metadata.agent_rules_paths``, with a
  warning that the targets here are not handed them.
* ``governance``: merged into every case's ``metadata.governance`` (``agentv_head``).
* ``tests[].expected_output`` (or ``vars.expected_output``): the reference answer.
* ``tests[].criteria`` and ``{{ vars.name }}`` (``agentv_v5_tests``): the criteria rendered with
  the test's vars; the vars also under ``vars`` in templates.
* ``defaults``: not a field of AgentV's eval schema (its zod object drops unknown keys, so
  AgentV ignores it); its example (``autoresearch``) uses it to hold a YAML anchor that the
  tests repeat. Accepted with a stored warning saying it has no effect; its values reach a
  test only where the test itself holds them.
* an assertion's ``id``: AgentV's grader parser reads no ``id`` on a built-in assertion
  (``metric`` names it); here it names the assertion when there is no ``metric``/``name``,
  so it shows in the stored grades (``formats/promptfoo/assertions/items``).
"""

from __future__ import annotations

from typing import Any

from eval_pipelines.suite.errors import SpecError, SpecErrors
from eval_pipelines.formats.agentv.extensions import apply_agent_rules, read_extensions
from eval_pipelines.formats.agentv.head import apply_governance
from eval_pipelines.formats.agentv.v5_tests import carry_criteria, finish_cases
from eval_pipelines.formats.agentv.workspace import resolve_template
from eval_pipelines.suite.models import Suite, Workspace
from eval_pipelines.suite.paths import PathPolicy
from eval_pipelines.suite.source import Document
from eval_pipelines.formats import compat
from eval_pipelines.suite.tags import tag_list

SUITE_KEYS = {"$schema", "name", "description", "version", "author", "license", "tags", "metadata", "target",
              "targets", "providers", "prompts", "tests", "assert", "environment", "extensions", "default_test",
              "evaluate_options", "scenarios", "workspace", "governance", "defaults"}
NAMES = {"defaultTest": "default_test", "evaluateOptions": "evaluate_options", "__keys__": " ".join(SUITE_KEYS)}
ENVIRONMENT_KEYS = {"type", "workdir"}
WORKSPACE_KEYS = {"template", "scope"}


def is_agentv_v5(data: Any) -> bool:
    """An AgentV v5 suite: top-level ``prompts`` or tests with ``vars``, with AgentV's names."""
    if not isinstance(data, dict) or "tests" not in data:
        return False
    agentv_names = {"default_test", "evaluate_options", "environment", "extensions", "target"}
    tests = data.get("tests")
    has_vars = isinstance(tests, list) and any(isinstance(t, dict) and "vars" in t for t in tests)
    has_ids = isinstance(tests, list) and any(isinstance(t, dict) and "id" in t for t in tests)
    has_input = isinstance(tests, list) and any(isinstance(t, dict) and "input" in t for t in tests)
    if has_input and "prompts" not in data:
        return False  # AgentV's tests[].input shape (the eval.yaml loader's), even with tests[].vars
    return ("prompts" in data or has_vars) and (bool(agentv_names & data.keys()) or has_ids or "name" in data)


def _environment(doc: Document, raw: Any, errors: list[SpecError]) -> Workspace | None:
    if raw is None:
        return None
    path = ("environment",)
    if not isinstance(raw, dict):
        errors.append(SpecError(str(doc.file), path, "invalid environment", doc.line_of(path), "a mapping"))
        return None
    for key in raw:
        if key == "setup":
            # AgentV (environment/host.ts prepareHostEnvironment): argv run before the suite in the eval
            # file's folder, preparing `workdir` in place; our workspace is a fresh, sandboxed copy.
            errors.append(SpecError(str(doc.file), path + (key,), "a setup command is not supported: AgentV runs "
                                    "this command in the eval file's folder to prepare the workdir in place "
                                    "(AGENTV_ENVIRONMENT_WORKDIR set, JSON on stdin); here the run's workspace is a "
                                    "fresh copy of the workdir and steps run in the sandbox, without network",
                                    doc.line_of(path + (key,)), "type: host and workdir, the folder prepared beforehand"))
        elif key not in ENVIRONMENT_KEYS:
            errors.append(SpecError(str(doc.file), path + (key,), f"environment field {key!r} is not supported",
                                    doc.line_of(path + (key,)), "type: host and workdir"))
    kind = raw.get("type", "host")
    if kind != "host":
        errors.append(SpecError(str(doc.file), path + ("type",), f"environment type {kind!r} is not supported",
                                doc.line_of(path + ("type",)), "host (containers are not run here)"))
        return None
    workdir = raw.get("workdir")
    return Workspace(template=str(workdir)) if workdir else None


def _workspace(doc: Document, raw: Any, errors: list[SpecError]) -> Workspace | None:
    """``workspace: {template, scope: suite}``: the folder copied as the run's workspace."""
    path = ("workspace",)
    if not isinstance(raw, dict) or not isinstance(raw.get("template"), str):
        errors.append(SpecError(str(doc.file), path, "invalid workspace", doc.line_of(path),
                                "{template: FOLDER, scope: suite}"))
        return None
    for key in raw:
        if key not in WORKSPACE_KEYS:
            errors.append(SpecError(str(doc.file), path + (key,), f"workspace field {key!r} is not supported",
                                    doc.line_of(path + (key,)), "template and scope"))
    if raw.get("scope", "suite") != "suite":
        errors.append(SpecError(str(doc.file), path + ("scope",), f"workspace scope {raw['scope']!r} is not supported",
                                doc.line_of(path + ("scope",)), "suite (one workspace per run)"))
    return Workspace(template=raw["template"])


def load_agentv_v5(doc: Document, policy: PathPolicy) -> tuple[Suite, list[str]]:
    raw = doc.data if isinstance(doc.data, dict) else {}
    errors: list[SpecError] = []
    agent_rules = False
    if "extensions" in raw:
        extension_errors, agent_rules = read_extensions(doc, raw["extensions"])
        errors += extension_errors
    governance = raw.get("governance")
    if "governance" in raw and not isinstance(governance, dict):
        errors.append(SpecError(str(doc.file), ("governance",), "invalid governance", doc.line_of(("governance",)),
                                "a mapping (schema_version, owasp_llm_top_10_2025, mitre_atlas, controls, ...)"))
    workspace = _environment(doc, raw.get("environment"), errors)
    if "workspace" in raw:
        workspace = _workspace(doc, raw["workspace"], errors) or workspace
    data = dict(raw)
    for key in ("extensions", "environment", "workspace", "governance", "defaults"):
        data.pop(key, None)
    if "providers" not in data:
        target = data.pop("targets", data.pop("target", None))
        if target is not None:
            data["providers"] = target
    else:
        data.pop("target", None)
    try:
        from eval_pipelines.formats.promptfoo.config import load_promptfoo  # its graders: for v5 suites only

        suite, warnings = load_promptfoo(Document(doc.file, carry_criteria(data), doc.lines), policy, "agentv",
                                         NAMES)
        warnings = [*warnings, *finish_cases(doc, suite)]
    except SpecErrors as exc:
        raise SpecErrors(errors + exc.errors) from None
    if errors:
        raise SpecErrors(errors)
    if "defaults" in raw:
        warnings = [*warnings, compat.without_effect_message(
            doc, "defaults", "not a field of AgentV's eval schema, which drops it; a test uses its values only "
            "where the test holds them, e.g. through a YAML anchor")]
    if agent_rules:
        warnings = [*warnings, *apply_agent_rules(doc, suite, workspace.template if workspace else None)]
    if workspace is not None and workspace.template:
        # AgentV resolves the workdir/template against the eval file's folder; the run copies it from
        # the package root (run/workspace.prepare), so it is stored relative to that root.
        root = policy.allowed_roots[0] if policy.allowed_roots else None
        workspace.template = resolve_template(workspace.template, doc.file.parent, root)
    suite.workspace = workspace
    if isinstance(governance, dict):
        apply_governance(suite, governance)
    for key in ("author", "license"):  # the suite's metadata, stored with it (suites.spec) as eval.yaml's
        if raw.get(key) is not None:
            setattr(suite, key, str(raw[key]))
    if isinstance(raw.get("tags"), (list, str)):
        suite.tags = tag_list(raw["tags"])
    return suite, warnings
