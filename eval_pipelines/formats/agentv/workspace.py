"""AgentV's ``workspace`` (v2): a mapping or the path of a shared workspace file.

Read into our :class:`Workspace` (one folder per run):

- ``workspace: ../../workspace.yaml``: the mapping is read from that file
  (relative to the eval file, inside the package); paths in it are relative
  to that file.
- ``template``: a folder relative to the file that names it.
- ``hooks.before_all_tests.command`` (or ``before_all``) is the ``setup`` step
  and ``hooks.after_all_tests.command`` (or ``after_all``) the ``teardown`` step
  (each with an optional ``timeout_ms``); ``setup``/``teardown`` in our spelling
  still work.
- ``repos: [{path, source: {type: git, url}, checkout: {ref}, clone: {depth}}]``:
  cloned with ``git clone`` into the workspace before ``setup``.
- ``scope: suite`` (AgentV HEAD: one workspace shared by the suite's tests) is what a
  workspace is here; another scope (a workspace per test) is refused.
- ``docker: {image, timeout, memory, cpus}`` (AgentV HEAD's docker workspace: script graders
  run inside a container of that image, ``parseDockerWorkspaceConfig``) is refused: our
  graders run in the local sandbox, and no container is started here.
- Per-test hooks (``before_each_test``/``after_each_test``, ``before_each``/
  ``after_each``, ``on_reuse``), ``reset`` and ``mode`` have no counterpart
  here (one workspace per run, shared by its tests): they are accepted and
  recorded as warnings in ``suites.warnings``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from eval_pipelines.suite.errors import accepted_not_used, pydantic_errors
from eval_pipelines.suite.models import Workspace
from eval_pipelines.suite.source import Document, load_document

# AgentV's hook names: `before_all_tests`/... in the v2 examples, `before_all`/... in its
# parser before and after them (yaml-parser.ts parseWorkspaceHooksConfig); `on_reuse` is the
# pooled-workspace hook of the same era (a hook for a reused workspace: per test here).
HOOK_STEPS = {"before_all_tests": "setup", "after_all_tests": "teardown", "before_all": "setup",
              "after_all": "teardown"}
PER_TEST_HOOKS = ("before_each_test", "after_each_test", "before_each", "after_each", "on_reuse")
OUR_KEYS = set(Workspace.model_fields)
AGENTV_KEYS = {"hooks", "reset", "mode", "scope", "docker"}


def resolve_template(value: Any, base: Path, package_root: Path | None) -> Any:
    """A relative template folder, written relative to `base`, as a path relative to the package root."""
    if not isinstance(value, str) or os.path.isabs(value):
        return value
    target = (base / value).resolve()
    if package_root is not None and target.is_relative_to(package_root.resolve()):
        return str(target.relative_to(package_root.resolve()))
    return value


def _step(raw: Any) -> Any:
    if isinstance(raw, dict) and "command" in raw:
        step = {"script": raw["command"]}
        if "timeout_ms" in raw:
            step["timeout_ms"] = raw["timeout_ms"]
        return step
    return raw


def _repo(raw: Any) -> Any:
    if not isinstance(raw, dict) or "source" not in raw:
        return raw
    source = raw.get("source") or {}
    out: dict[str, Any] = {"path": raw.get("path"), "url": source.get("url") if isinstance(source, dict) else None}
    checkout = raw.get("checkout") or {}
    clone = raw.get("clone") or {}
    if isinstance(checkout, dict) and checkout.get("ref"):
        out["ref"] = checkout["ref"]
    if isinstance(clone, dict) and clone.get("depth"):
        out["depth"] = clone["depth"]
    return out


def parse_workspace(ctx: Any, doc: Document, raw: Any) -> Workspace | None:
    """The suite's workspace; errors and warnings go to ``ctx`` (a ``LoadContext``)."""
    path: tuple[Any, ...] = ("workspace",)
    source, base = doc, doc.file.parent
    if isinstance(raw, str):
        file = (doc.file.parent / raw)
        if not ctx.policy.check(file, doc, path, ctx.errors):
            return None
        if not file.is_file():
            ctx.error(doc, path, f"workspace file not found: {raw}", "a YAML file relative to the eval file")
            return None
        source = load_document(file)
        raw, base, path = source.data, file.parent, ()
    if not isinstance(raw, dict):
        ctx.error(source, path, f"got {type(raw).__name__}", "a workspace mapping or the path of a workspace file")
        return None
    package_root = ctx.policy.allowed_roots[0] if ctx.policy.allowed_roots else None
    data = {k: v for k, v in raw.items() if k not in AGENTV_KEYS}
    if "template" in data:
        data["template"] = resolve_template(data["template"], base, package_root)
    hooks = raw.get("hooks") or {}
    if not isinstance(hooks, dict):
        ctx.error(source, path + ("hooks",), f"got {type(hooks).__name__}", "a mapping of hook name to step")
        hooks = {}
    for hook, value in hooks.items():
        if hook in HOOK_STEPS and isinstance(value, dict) and "command" not in value and "script" not in value \
                and "reset" in value:
            ctx.warnings.append(accepted_not_used(source, ("workspace", "hooks", hook, "reset"), (
                "a workspace reset has nothing to act on: each run gets a fresh workspace")))
        elif hook in HOOK_STEPS:
            if HOOK_STEPS[hook] in data:
                ctx.error(source, path + ("hooks", hook), f"both hooks.{hook} and {HOOK_STEPS[hook]} given")
            data[HOOK_STEPS[hook]] = _step(value)
        elif hook in PER_TEST_HOOKS:
            ctx.warnings.append(accepted_not_used(source, ("workspace", "hooks", hook), (
                "per-test hooks are not run: the tests of a run share one workspace, prepared once")))
        else:
            ctx.error(source, path + ("hooks", hook), f"unknown hook {hook!r}",
                      "before_all_tests, after_all_tests, before_each_test or after_each_test "
                      "(or before_all, after_all, before_each, after_each, on_reuse)")
    if "scope" in raw and raw["scope"] != "suite":
        ctx.error(source, path + ("scope",), f"workspace scope {raw['scope']!r} is not supported",
                  "suite (one workspace for the run, shared by its tests)")
    if "docker" in raw:
        image = raw["docker"].get("image") if isinstance(raw["docker"], dict) else None
        ctx.error(source, path + ("docker",), "Docker workspaces are not supported (AgentV runs the script graders "
                  f"inside a container{f' of image {image}' if image else ''}; here graders run in the local "
                  "sandbox and no container is started)", "a workspace without docker")
    for key in ("reset", "mode"):
        if key in raw:
            ctx.warnings.append(accepted_not_used(source, ("workspace", key), (
                "the tests of a run share one workspace, created fresh for each run")))
    if isinstance(data.get("repos"), list):
        data["repos"] = [_repo(r) for r in data["repos"]]
    try:
        return Workspace.model_validate(data)
    except ValidationError as exc:
        ctx.errors.extend(pydantic_errors(source, path, exc, list(OUR_KEYS | AGENTV_KEYS)))
        return None
