"""AgentV's spellings of an assertion, rewritten into ours before validation.

One normaliser for every assertion of an eval YAML (suite ``assert``, test
``assert``/``assertions``, composite children), so the graders see one
vocabulary. What it rewrites, each as AgentV v2 reads it
(``loaders/evaluator-parser.ts``):

- ``assertions:`` inside a composite is its ``assert:``.
- ``code_judge``: ``script: [argv...]`` is a ``command``; every key the judge
  does not define (``fields``, ``expected_tools``, ``expect_edited``, ...) is
  passed through to the judge under ``config`` (AgentV's pass-through);
  ``target: {max_calls}`` (AgentV's target proxy, a judge calling a model) is
  kept in ``config`` and noted as a warning: our judges run without model access.
- composite ``aggregator``: a ``code_judge`` ``path`` is its ``command``.
- ``agent_judge`` ``judge_target`` (delegating the judge to another agent) and
  ``llm_judge`` ``target`` (a judge model of its own) are dropped with a
  warning: the suite's judge grades them. ``llm_judge`` ``max_steps`` (AgentV
  HEAD's llm-grader: the step budget of its built-in agent mode, a grader reading
  the workspace with file tools, llm-grader.ts) is dropped with a warning too:
  our judge grades in one call without tools.
- ``regex`` ``flags`` as a string (``"i"``, ``"im"``): ``i`` ignorecase,
  ``m`` multiline, ``s`` dotall; ``g`` has no meaning for a match test and is
  dropped; any other letter is left for the grader to refuse.
- ``tool_trajectory`` expected items: ``input`` is AgentV's name for ``args``.
- a type no grader knows, with a file ``.agentv/assertions/<type>.{ts,js,mjs,py}``
  above the eval file: a ``code_judge`` running that file (``bun run`` for
  TypeScript, ``node``, ``python``), the assertion's other keys as ``config``.
  Such a file also wins over a built-in of the same name (AgentV looks its
  custom assertions up by name; the author put the file there on purpose), with
  a warning.
- a type that is not one of AgentV's built-ins, without such a file, that our grader
  of that name refuses (``word-count`` without ``value``): the refusal says that AgentV
  would run it as a custom assertion and that the file is not there
  (``custom_assertion_hint``; AgentV's ``registry/assertion-discovery.ts`` searches
  ``.agentv/assertions/`` in the eval file's folder and each parent, and runs a found
  file with ``bun run``; a built-in of the same name wins there).
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Callable, Iterator

from eval_pipelines.grading.registry import canonical_type
from eval_pipelines.suite.paths import PathPolicy

CODE_JUDGE_KEYS = {"type", "name", "weight", "required", "negate", "script", "command", "args", "timeout_ms",
                   "memory_mb", "config", "cwd"}
REGEX_FLAG_LETTERS = {"i": "ignorecase", "m": "multiline", "s": "dotall"}
CUSTOM_SUFFIXES = {".ts": ["bun", "run"], ".mts": ["bun", "run"], ".js": ["node"], ".mjs": ["node"],
                   ".cjs": ["node"], ".py": ["python"]}

Warn = Callable[[str], None]
# AgentV's built-in assertion types (@agentv/eval assertions.ts AssertionType, kebab-case and
# its snake_case aliases, and v2's names): any other type is looked up in .agentv/assertions/.
AGENTV_BUILTINS = {
    "llm-grader", "code-grader", "rubrics", "composite", "tool-trajectory", "field-accuracy", "latency", "cost",
    "token-usage", "execution-metrics", "skill-trigger", "contains", "contains-any", "contains-all", "icontains",
    "icontains-any", "icontains-all", "starts-with", "ends-with", "equals", "regex", "is-json",
    "llm_grader", "code_grader", "tool_trajectory", "field_accuracy", "token_usage", "execution_metrics",
    "contains_any", "contains_all", "icontains_any", "icontains_all", "starts_with", "ends_with", "is_json",
    "llm_judge", "code_judge", "agent_judge", "llm-judge", "code-judge", "script",
}


def custom_assertion_hint(raw: Any) -> str | None:
    """What to add to the refusal of an assertion AgentV would run as a custom one (see the module doc)."""
    if not isinstance(raw, dict) or not isinstance(raw.get("type"), str) or raw["type"] in AGENTV_BUILTINS:
        return None
    if canonical_type(raw["type"]) is None:
        return None  # a type no grader knows: its refusal suggests the nearest name (a typo, most likely)
    name = raw["type"]
    return (f"; in AgentV {name!r} is not a built-in type but a custom assertion: file not found: "
            f".agentv/assertions/{name}.ts (or .js, .mts, .mjs), looked for in the eval file's folder and its parents")


# Within one suite load: (type, eval file, policy) -> the custom assertion file, or None.
# Every assertion of every case asks; resolving the search roots and stat'ing four
# candidates in each took about 0.4 ms per assertion, the same answer every time.
_FOUND: ContextVar[dict[tuple[str, Path, PathPolicy], Path | None] | None] = ContextVar("_FOUND", default=None)


@contextmanager
def one_lookup_per_type() -> Iterator[None]:
    """While a suite loads, look each assertion type's custom file up once (files do not change
    in between; a later load looks again)."""
    token = _FOUND.set({})
    try:
        yield
    finally:
        _FOUND.reset(token)


def find_custom_assertion(type_name: str, eval_file: Path, policy: PathPolicy) -> Path | None:
    """``.agentv/assertions/<type>.<ext>`` in the eval file's folder or a parent inside the package."""
    found = _FOUND.get()
    if found is None:
        return _find_custom_assertion(type_name, eval_file, policy)
    key = (type_name, eval_file, policy)
    if key not in found:
        found[key] = _find_custom_assertion(type_name, eval_file, policy)
    return found[key]


def _find_custom_assertion(type_name: str, eval_file: Path, policy: PathPolicy) -> Path | None:
    from eval_pipelines.formats.agentv.parts import search_roots

    if not type_name or "/" in type_name or "\\" in type_name or type_name.startswith("."):
        return None
    for root in search_roots(eval_file, policy):
        for suffix in CUSTOM_SUFFIXES:
            candidate = root / ".agentv" / "assertions" / f"{type_name}{suffix}"
            if candidate.is_file() and policy.allows(candidate):
                return candidate.resolve()
    return None


def _code_judge(raw: dict[str, Any], where: str, warn: Warn) -> dict[str, Any]:
    out = {k: v for k, v in raw.items() if k in CODE_JUDGE_KEYS}
    if isinstance(out.get("script"), list):
        out["command"] = out.pop("script")
    config = out.get("config", {})
    extra = {k: v for k, v in raw.items() if k not in CODE_JUDGE_KEYS}
    if "target" in extra:
        warn(f"{where}: code_judge `target` (a judge calling a model through AgentV's target proxy) is not "
             "available here: the judge runs without model access; `target` is passed to it in `config`")
    if extra:
        if not isinstance(config, dict):
            return raw  # the grader refuses a non-mapping `config` (and says so)
        out["config"] = {**config, **extra}
    return out


def _regex_flags(raw: dict[str, Any]) -> dict[str, Any]:
    flags = raw.get("flags")
    if not isinstance(flags, str):
        return raw
    names: list[str] = []
    for letter in flags:
        if letter == "g":
            continue
        names.append(REGEX_FLAG_LETTERS.get(letter, letter))
    return {**raw, "flags": names}


def normalise_assertion(raw: Any, where: str, warn: Warn, eval_file: Path | None = None,
                        policy: PathPolicy | None = None) -> Any:
    """``raw`` in our vocabulary (a new dict); anything that is not a mapping is returned as it is."""
    if not isinstance(raw, dict) or not isinstance(raw.get("type"), str):
        return raw
    written = raw["type"]
    custom = find_custom_assertion(written, eval_file, policy or PathPolicy()) if eval_file is not None else None
    if custom is not None:
        if canonical_type(written) is not None:
            warn(f"{where}: assertion type {written!r} runs {custom.name} from .agentv/assertions "
                 "(a custom assertion of that name wins over the built-in)")
        extra = {k: v for k, v in raw.items() if k not in ("type", "name", "weight", "required", "negate")}
        runner = CUSTOM_SUFFIXES[custom.suffix]
        return {"type": "code_judge", "name": raw.get("name", written),
                **{k: raw[k] for k in ("weight", "required", "negate") if k in raw},
                "command": [*runner, str(custom)], **({"config": extra} if extra else {})}
    kind = canonical_type(written) or written
    out = dict(raw)
    if kind == "code_judge":
        out = _code_judge(raw, where, warn)
    elif kind == "composite":
        if "assertions" in out and "assert" not in out:
            out["assert"] = out.pop("assertions")
        if isinstance(out.get("assert"), list):
            out["assert"] = [normalise_assertion(child, f"{where}.assert[{i}]", warn, eval_file, policy)
                             for i, child in enumerate(out["assert"])]
        if "aggregator" in out:
            agg = out["aggregator"]
            if isinstance(agg, dict) and "path" in agg:
                agg = {k: v for k, v in agg.items() if k != "path"} | {"command": agg["path"]}
            out["aggregator"] = agg
    elif kind == "llm_judge" and ("target" in out or "max_steps" in out):
        if "target" in out:
            warn(f"{where}: llm_judge `target` ({out['target']!r}, AgentV's per-judge model) is not available "
                 "here: the suite's judge grades this assertion")
            out.pop("target")
        if "max_steps" in out:
            warn(f"{where}: llm_judge `max_steps` ({out['max_steps']!r}, the step budget of AgentV's agentic "
                 "grader, which reads the workspace with file tools) is not used here: the judge grades in one "
                 "call without tools")
            out.pop("max_steps")
    elif kind == "agent_judge" and "judge_target" in out:
        warn(f"{where}: agent_judge `judge_target` ({out['judge_target']!r}, AgentV's delegated agent judge) "
             "is not available here: the suite's judge grades this assertion")
        out.pop("judge_target")
    elif kind == "regex":
        out = _regex_flags(out)
    elif kind == "tool_trajectory" and isinstance(out.get("expected"), list):
        out["expected"] = [
            {("args" if k == "input" and "args" not in item else k): v for k, v in item.items()}
            if isinstance(item, dict) else item
            for item in out["expected"]
        ]
    return out
