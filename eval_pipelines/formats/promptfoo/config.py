"""promptfoo configs (``promptfooconfig.yaml``) as suites of the one internal model.

Every test is run once per prompt: for P prompts a test gives P cases (ids
``test-N`` with one prompt, ``test-N-pK`` with several), each with its prompt
rendered with the test's variables (``promptfoo_prompts``). Providers become
targets (``promptfoo_providers``), assertions our graders
(``promptfoo_asserts``), tests come from ``promptfoo_tests``. The suite scores
cases by promptfoo's rule (``Suite.scoring = "all_pass"``: a case passes when
every assertion passes, or when its weighted score reaches the test's
``threshold``).

Suite fields: ``description``; ``prompts``; ``providers`` (or ``targets``);
``tests``; ``defaultTest``; ``scenarios``; ``evaluateOptions`` (``repeat`` ->
trials, ``maxConcurrency``, ``timeoutMs``, ``cache: false``; progress-bar
switches are cosmetic and stored as warnings); ``tags``; ``metadata``
(stored on every case). ``outputPath``, ``sharing``, ``writeLatestResults``
and ``commandLineOptions`` are accepted with a stored warning (results go to
DuckDB and our reports). ``nunjucksFilters`` (and ``filters``, its old
name) are custom template filters run in the sandbox (``promptfoo_filters``); ``env`` as
``promptfoo_env`` allows (references to the environment, base URLs); ``tracing`` (honoured) and
``redteam`` as ``promptfoo_sidecars`` reads them. ``extensions`` (lifecycle hooks) run in the sandbox at load
(``promptfoo_extensions``: beforeAll, beforeEach; afterEach/afterAll refused); ``derivedMetrics`` (arithmetic expressions)
become ``Suite.derived_metrics``.

Test fields: ``description``, ``vars``, ``assert``, ``options`` (``prefix``,
``suffix``, ``disableVarExpansion``, ``transform``/``postprocess`` (each assertion
becomes a ``transformed`` one), ``rubricPrompt`` (the judge template of its
model-graded assertions); ``runSerially`` and ``provider`` with a warning),
``threshold``, ``metadata``, ``provider``. AgentV v5 (``agentv_v5``) reuses
this module with its own names.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from eval_pipelines.suite.assertions import pydantic_errors
from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.formats.promptfoo.hints import with_hints, with_warning_hints
from eval_pipelines.formats.eval_yaml.fields import LoadContext, content_text
from eval_pipelines.formats.promptfoo.assertions.items import convert_assertions
from eval_pipelines.formats.promptfoo.assertions.vocabulary import COMPARE_GRADERS
from eval_pipelines.formats.promptfoo.base_path import config_base
from eval_pipelines.formats.promptfoo.derived_metrics import parse_derived_metrics
from eval_pipelines.formats.promptfoo.env import apply_env
from eval_pipelines.formats.promptfoo.extensions import Hooks
from eval_pipelines.formats.promptfoo.evaluate_options import (  # noqa: F401 (the field contract reads the key sets here)
    AGENTV_EVALUATE_NAMES, EVALUATE_KEYS, read_evaluate_options,
)
from eval_pipelines.formats.promptfoo.filters import filter_environment, parse_filters
from eval_pipelines.formats.promptfoo.assertions.openai_functions import attach_functions, attach_tools
from eval_pipelines.formats.promptfoo.assertions.rubric_prompt import with_rubric_prompt as _with_rubric_prompt
from eval_pipelines.formats.promptfoo.prompts.history import VARIABLE as CONVERSATION, Conversations
from eval_pipelines.formats.promptfoo.pairing import (
    allowed_targets, output_transforms, prompt_raw, prompt_settings, provider_context, with_parsed_output,
)
from eval_pipelines.formats.promptfoo.prompts.templates import (
    PROMPT_ENV, Prompt, matches_ref, parse_prompts, parse_script, prompt_source, render_prompt,
)
from eval_pipelines.formats.promptfoo.providers import Provider, parse_provider, parse_providers
from eval_pipelines.formats.promptfoo.prompts.eval_errors import EvalFails
from eval_pipelines.formats.promptfoo.registers import RegisterPlan
from eval_pipelines.formats.promptfoo.scoring_function import scoring_function
from eval_pipelines.formats.promptfoo.scripts import resolve_script_vars, transform_vars
from eval_pipelines.formats.promptfoo.sidecars import check_sidecars, read_tracing
from eval_pipelines.formats.promptfoo.template_env import NAMES_READ, read_warnings
from eval_pipelines.formats.promptfoo.cases import (
    RawTest, collect_raw_tests, expand_scenarios, load_vars, merge_default, read_default_test, resolve_variables,
    shapes_ok, var_combinations,
)
from eval_pipelines.suite.models import Execution, Message, Settings, Suite, TestCase
from eval_pipelines.suite.paths import PathPolicy
from eval_pipelines.suite.source import Document
from eval_pipelines.formats import compat
from eval_pipelines.suite.tags import tag_list

SUITE_KEYS = {"description", "prompts", "providers", "targets", "tests", "defaultTest", "scenarios",
              "evaluateOptions", "tags", "metadata", "outputPath", "sharing", "writeLatestResults",
              "commandLineOptions", "env", "extensions", "nunjucksFilters", "derivedMetrics", "redteam",
              "tracing", "$schema", "assertionTemplates", "filters"}
WARN_KEYS = {"outputPath": "results are stored in DuckDB and written as our reports",
             "sharing": "results are not shared", "writeLatestResults": "every run is stored",
             "commandLineOptions": "use eval-pipelines' own options"}
TEST_KEYS = {"description", "vars", "assert", "options", "threshold", "metadata", "provider",
             "providerOutput", "assertScoringFunction", "prompts", "providers"}
OPTION_KEYS = {"prefix", "suffix", "disableVarExpansion", "runSerially", "transform", "postprocess",
               "provider", "rubricPrompt", "storeOutputAs", "disableConversationVar", "transformVars"}
# Test options promptfoo's TestCaseSchema reads that we do not act on (refused by name).
OPTION_READS = {"disableDefaultAsserts", "factuality"}
# AgentV v5's own names: test fields besides promptfoo's, test `execution` fields, and the
# snake-case spellings of evaluate options.
AGENTV_TEST_KEYS = {"id", "expected_output", "execution", "conversation_id", "input"}
AGENTV_EXECUTION_KEYS = {"skip_defaults"}
AGENTV_OPTION_NAMES = {"rubric_prompt": "rubricPrompt"}


class Loader:
    """One load: the context, the providers met so far (suite-level and per test)."""

    def __init__(self, doc: Document, policy: PathPolicy, dialect: str) -> None:
        self.doc, self.dialect = doc, dialect
        self.ctx = LoadContext(policy, tool="AgentV" if dialect == "agentv" else "promptfoo")
        self.providers: dict[str, Provider] = {}
        self.suite_providers: list[Provider] = []
        self.providers_refused = False  # a suite provider failed to load (its error is recorded)
        # promptfoo reads a variable's file:// path from the config's folder, wherever the test
        # was written; AgentV v5 keeps reading it beside the file that holds the test.
        self.var_base = doc.file.parent if dialect == "promptfoo" else None
        self.conversations = Conversations()  # promptfoo's `_conversation`: turns so far
        self.hooks: Hooks | None = None  # promptfoo's `extensions`
        self.registers: RegisterPlan | None = None  # promptfoo's `storeOutputAs` (set once the tests are read)

    def provider_names(self, raw: Any, key: str) -> list[str]:
        before = len(self.ctx.errors)
        found = parse_providers(self.ctx, self.doc, key, raw, self.dialect)
        self.providers_refused = len(self.ctx.errors) > before  # said once there; filters naming them stay quiet
        self.suite_providers = found
        for provider in found:
            self.providers.setdefault(provider.name, provider)
        return [p.name for p in found]

    def case_options(self, raw: RawTest) -> dict[str, Any]:
        options = raw.data.get("options") or {}
        path = raw.path + ("options",)
        if not isinstance(options, dict):
            self.ctx.error(raw.doc, path, "invalid options", "a mapping")
            return {}
        if self.dialect == "agentv" and "rubric_prompt" in options and "rubricPrompt" not in options:
            # AgentV's options.rubric_prompt: the llm-rubric prompt of the test (grader-parser.ts
            # defaultRubricPrompt), promptfoo's rubricPrompt under AgentV's name
            options = {AGENTV_OPTION_NAMES.get(k, k): v for k, v in options.items()}
            asserts = raw.data.get("assert")
            if isinstance(asserts, list) and any(isinstance(a, str) for a in asserts):
                self.ctx.warnings.append(f"{raw.doc.file}: {'.'.join(map(str, path))}.rubric_prompt: used by the "
                                         "llm-rubric assertions only; plain-string criteria keep our judge prompt "
                                         "(AgentV grades them as one llm-rubric with this prompt)")
        compat.unknown_fields(self.ctx, raw.doc, path, options, OPTION_KEYS, reads=OPTION_READS)
        refused = {} if self.dialect == "promptfoo" else {"storeOutputAs": "storing outputs as variables"}
        if self.dialect != "promptfoo":
            refused["transformVars"] = "a JavaScript transform of the variables"
            refused["disableConversationVar"] = "promptfoo's _conversation variable"
        self.refuse_in(raw.doc, options, path, refused)
        if options.get("runSerially"):
            self.ctx.warnings.append(f"{raw.doc.file}: options.runSerially: cases run with the target's "
                                     "concurrency; set evaluateOptions.maxConcurrency: 1 to serialise")
        return options

    def filter(self, doc: Document, path: tuple[Any, ...], refs: Any, names: list[list[str]],
               what: str) -> set[int] | None:
        """Indexes a test's ``prompts``/``providers`` filter keeps (None: no filter)."""
        if refs is None:
            return None
        if not isinstance(refs, list) or not all(isinstance(r, str) for r in refs):
            self.ctx.error(doc, path, f"invalid {what} filter", f"a list of {what} labels or ids")
            return set()
        kept = {i for i, n in enumerate(names) if any(matches_ref(n, ref) for ref in refs)}
        for ref in refs:
            if not any(matches_ref(n, ref) for n in names) and not (what == "provider" and self.providers_refused):
                self.ctx.error(doc, path, f"no {what} matches {ref!r}", f"the label or id of a suite {what}")
        return kept

    def refuse_in(self, doc: Document, raw: dict[str, Any], path: tuple[Any, ...], refused: dict[str, str]) -> None:
        for key, feature in refused.items():
            if key in raw:
                self.ctx.error(doc, path + (key,), f"{feature} (`{key}`) is not supported")

    def build_cases(self, raw: RawTest, prompts: list[Prompt], default: dict[str, Any],
                    suite_metadata: dict[str, Any], number: int, variant: str = "") -> list[TestCase]:
        """The cases of one test: one per variable combination and prompt."""
        doc, path, data = raw.doc, raw.path, raw.data
        if not isinstance(data, dict):
            self.ctx.error(doc, path, f"got {type(data).__name__}", "a test mapping")
            return []
        known = TEST_KEYS | (AGENTV_TEST_KEYS if self.dialect == "agentv" else set())
        compat.unknown_fields(self.ctx, doc, path, data, known)
        self.refuse_in(doc, data, path, {"providerOutput": "fixed provider outputs"})
        if self.dialect == "agentv" and "conversation_id" in data:
            compat.without_effect(self.ctx, doc, "conversation_id", "each case is its own conversation")
        if self.dialect == "agentv" and "input" in data:
            self.ctx.error(doc, path + ("input",), "`tests[].input` was removed in AgentV v5",
                           "prompt text in top-level `prompts` and values in `tests[].vars`")
        if not shapes_ok(self.ctx, doc, path, data):
            return []
        if isinstance(data.get("vars"), str):  # `vars: file://vars.yaml`, read before merging defaults
            variables = load_vars(self.ctx, doc, path + ("vars",), data["vars"], self.var_base,
                                  self.dialect == "promptfoo", scripts=self.dialect == "promptfoo")
            if variables is None:
                return []
            data = {**data, "vars": variables}
        execution = data.get("execution") or {}
        if self.dialect == "agentv" and isinstance(execution, dict):
            compat.unknown_fields(self.ctx, doc, path + ("execution",), execution, AGENTV_EXECUTION_KEYS)
        merged = data if execution.get("skip_defaults") else merge_default(default, data)
        options = self.case_options(RawTest(merged, doc, path))
        if self.dialect == "promptfoo" and options.get("transformVars") is not None:
            merged = self.transformed_vars(doc, path + ("options", "transformVars"), merged, options["transformVars"])
            if merged is None:
                return []
        variables = load_vars(self.ctx, doc, path + ("vars",), merged.get("vars"), self.var_base,
                              self.dialect == "promptfoo", scripts=self.dialect == "promptfoo")
        if variables is None:
            return []
        chosen = self.filter(doc, path + ("prompts",), data.get("prompts"), [p.names() for p in prompts], "prompt")
        targets = None
        by_provider = self.filter(doc, path + ("providers",), data.get("providers"),
                                  [list(p.names) for p in self.suite_providers], "provider")
        if by_provider is not None:
            targets = [self.suite_providers[i].name for i in sorted(by_provider)]
        if "provider" in data:
            provider = parse_provider(self.ctx, doc, path + ("provider",), data["provider"], self.dialect)
            if provider is not None:
                self.providers.setdefault(provider.name, provider)
                targets = [provider.name]
        metadata = merged.get("metadata") or {}
        if not isinstance(metadata, dict):
            self.ctx.error(doc, path + ("metadata",), "invalid metadata", "a mapping")
            metadata = {}
        threshold = merged.get("threshold")
        combos = [variables] if options.get("disableVarExpansion") else var_combinations(variables)
        base_id = str(data["id"]) if self.dialect == "agentv" and data.get("id") is not None else f"test-{number}{variant}"
        expected = data.get("expected_output", variables.get("expected_output"))
        if isinstance(expected, list) and all(isinstance(m, dict) and "content" in m for m in expected):
            expected = "\n".join(content_text(m["content"]) for m in expected)
        cases: list[TestCase] = []
        transform = options.get("transform", options.get("postprocess"))  # postprocess: the old name
        providers_of_test = self.suite_providers if targets is None else [self.providers[n] for n in targets
                                                                           if n in self.providers]
        for c, combo in enumerate(combos):
            by_vars: dict[str, list[Any]] = {}  # a test's assertions, per distinct filled variables
            for k, prompt in enumerate(prompts or [Prompt("prompt", text="")]):
                if chosen is not None and k not in chosen:
                    continue
                case_targets, runs_on = allowed_targets(targets, providers_of_test, prompt)
                if not runs_on and providers_of_test:
                    continue  # no provider of the test runs this prompt (their `prompts`)
                filled = {**combo, "vars": combo} if self.dialect == "agentv" and "vars" not in combo else combo
                registers = None
                if self.dialect == "promptfoo" and self.registers is not None:  # promptfoo fills script variables per prompt and provider
                    filled = resolve_script_vars(self.ctx, doc, path + ("vars",), combo, [prompt_raw(prompt)],
                                                 [provider_context(p) for p in runs_on])
                    if filled is None:
                        continue
                    filled, registers = self.registers.fill(number, c, k, filled, options.get("storeOutputAs"), (
                        output_transforms(self.ctx, doc, path, runs_on, transform)), doc, prompt, runs_on)
                    filled = resolve_variables(filled)
                conversation = None
                if (self.dialect == "promptfoo" and not options.get("disableConversationVar")
                        and CONVERSATION in prompt_source(prompt)):
                    conversation = Conversations.key(prompt.label, metadata, case_targets)
                    filled = {**filled, CONVERSATION: self.conversations.variable(conversation)}
                key = json.dumps([filled, [p.name for p in runs_on]], sort_keys=True, default=str)
                if key not in by_vars:
                    by_vars[key] = convert_assertions(
                        self.ctx, doc, path + ("assert",),
                        _with_rubric_prompt(merged.get("assert"), options.get("rubricPrompt")),
                        self.dialect, filled, self.doc.data, output_transforms(self.ctx, doc, path, runs_on, transform),
                        (options["provider"], path + ("options", "provider") if "provider" in (data.get("options")
                         or {}) else ("defaultTest", "options", "provider")) if "provider" in options else None)
                    attach_functions(self.ctx, doc, path + ("assert",), by_vars[key], [p.functions for p in runs_on])
                    attach_tools(self.ctx, doc, path + ("assert",), by_vars[key], [(p.config or {}).get("tools")
                                                                                     for p in runs_on])
                    by_vars[key] += scoring_function(self.ctx, doc, path, merged, self.dialect)
                settings = prompt_settings(self.ctx, doc, prompt, runs_on)
                assertions = with_parsed_output(self.ctx, doc, by_vars[key], settings, runs_on)
                case_id = base_id + (f"-v{c + 1}" if len(combos) > 1 else "") + (f"-p{k + 1}" if len(prompts) > 1 else "")
                try:
                    messages, fails_with = self.render(doc, path, prompt, filled, options, runs_on), None
                except EvalFails as failed:  # promptfoo fails only this eval (prompts/eval_errors.py)
                    messages, fails_with = failed.input_of(prompt_raw(prompt)), failed.reason
                if messages is None:
                    continue
                for p in runs_on if any(m.parts for m in messages) else []:  # the run refuses the case there
                    note = (f"{doc.file}: prompt {prompt.label!r} sends image or audio parts: command target "
                            f"{p.name!r} cannot take them, so its rows for these cases are errors")
                    if (p.config or {}).get("type") == "command" and note not in self.ctx.warnings:
                        self.ctx.warnings.append(note)
                try:
                    cases.append(TestCase(
                        id=case_id, name=data.get("description"), description=data.get("description"),
                        input=messages, expected_output=expected, assertions=assertions, targets=case_targets,
                        metadata={**suite_metadata, **metadata, "vars": filled, "prompt": prompt.label,
                                  **({"prompt_config": prompt.config} if prompt.config else {}),
                                  # the promptfoo test this case is one prompt of: select-best compares them
                                  **({"compare_group": base_id + (f"-v{c + 1}" if len(combos) > 1 else "")}
                                     if any(a.type in COMPARE_GRADERS for a in assertions) else {}),
                                  **({"scenario": raw.extra} if raw.extra else {})},
                        threshold=threshold, model_settings=settings,
                        source_file=str(doc.file), source_line=doc.line_of(path),
                        after=self.conversations.earlier(conversation) if conversation else [],
                        registers=registers, fails_with=fails_with))
                except ValidationError as exc:
                    self.ctx.errors.extend(pydantic_errors(doc, path, exc))
                    return cases
                if conversation:
                    chat = prompt.runs_code() or prompt.messages is not None or len(messages) > 1 \
                        or (prompt.text or "").lstrip().startswith("[")
                    self.conversations.add(conversation, case_id, messages, chat)
        return cases

    def transformed_vars(self, doc: Document, path: tuple[Any, ...], merged: dict[str, Any],
                         code: Any) -> dict[str, Any] | None:
        """The test with ``options.transformVars`` applied to its variables (``promptfoo_scripts``)."""
        variables = merged.get("vars") or {}
        if not isinstance(variables, dict):
            return merged  # load_vars reports it
        script = None
        if isinstance(code, str) and code.startswith("file://"):
            script = parse_script(self.ctx, doc, path, code)
            if script is None:
                return None
        filled = transform_vars(self.ctx, doc, path, code, script, variables)
        return None if filled is None else {**merged, "vars": filled}

    def render(self, doc: Document, path: tuple[Any, ...], prompt: Prompt, combo: dict[str, Any],
               options: dict[str, Any], runs_on: list[Provider]) -> list[Message] | None:
        """One case's messages. A function prompt is told the provider it runs on ({id, label}, as
        promptfoo's transformContext): run once per provider, it must give them all the same prompt,
        since a case's messages are shared by its targets."""
        contexts: list[dict[str, Any] | None] = [None]
        if prompt.runs_code() and runs_on:
            contexts = [provider_context(p) for p in runs_on]
        rendered = [render_prompt(self.ctx, doc, path, prompt, combo, str(options.get("prefix") or ""),
                                  str(options.get("suffix") or ""), provider) for provider in contexts]
        if any(r is None for r in rendered):
            return None
        if any(r != rendered[0] for r in rendered[1:]):
            self.ctx.error(doc, path, f"function prompt {prompt.label!r} gives different prompts for the "
                           "test's providers", "`providers:` on the test to pick one, or a function that "
                           "does not depend on the provider")
            return None
        return rendered[0]


def load_promptfoo(doc: Document, policy: PathPolicy, dialect: str = "promptfoo",
                   names: dict[str, str] | None = None) -> tuple[Suite, list[str]]:
    """Load a promptfoo config (or, with ``dialect="agentv"``, an AgentV v5 suite whose
    field names ``names`` maps onto promptfoo's)."""
    names = names or {}
    loader = Loader(doc, policy, dialect)
    ctx = loader.ctx
    raw = doc.data
    if not isinstance(raw, dict):
        raise SpecErrors.single(doc.file, f"top level is {type(raw).__name__}", line=1,
                                expected="a mapping with `prompts`, `providers` and `tests`")
    suite_keys = set(names.get("__keys__", "").split()) or SUITE_KEYS
    extension_keys = sorted(k for k in raw if isinstance(k, str) and k.startswith("x-"))  # hold YAML anchors
    ctx.warnings.extend(f"{doc.file}: {k}: a YAML extension key, not read itself (its anchors are read where "
                        "they are used)" for k in extension_keys)
    compat.unknown_fields(ctx, doc, (), raw, suite_keys | set(extension_keys))
    for key, why in WARN_KEYS.items():
        if key in raw:
            compat.not_used(ctx, doc, key, why)
    if dialect == "promptfoo":
        loader.hooks = Hooks.parse(ctx, doc, raw["extensions"]) if "extensions" in raw else None
        check_sidecars(ctx, doc, raw)
    filters = parse_filters(ctx, doc, raw) if dialect == "promptfoo" else {}
    token = PROMPT_ENV.set(filter_environment(ctx, doc, PROMPT_ENV.get(), filters)) if filters else None
    read_token = NAMES_READ.set(names_read := set())
    try:
        with config_base(doc.file.parent if dialect == "promptfoo" else None):
            suite, warnings = _suite(loader, names)
        return suite, warnings + read_warnings(doc.file, names_read)
    finally:
        NAMES_READ.reset(read_token)
        if token is not None:
            PROMPT_ENV.reset(token)


def _suite(loader: Loader, names: dict[str, str]) -> tuple[Suite, list[str]]:
    """The suite of a config whose top level is a mapping (prompts rendered with ``PROMPT_ENV``)."""
    doc, ctx, dialect, raw = loader.doc, loader.ctx, loader.dialect, loader.doc.data
    settings, execution = Settings(), Execution()
    evaluate_key = names.get("evaluateOptions", "evaluateOptions")
    read_evaluate_options(ctx, doc, raw.get(evaluate_key), evaluate_key, dialect, settings, execution)
    provider_key = next((k for k in (names.get("providers", "providers"), "targets") if k in raw), "providers")
    execution.targets = loader.provider_names(raw.get(provider_key), provider_key) if provider_key in raw else []
    settings.target_delay_ms = {p.name: p.delay_ms for p in loader.suite_providers if p.delay_ms is not None}
    prompts = parse_prompts(ctx, doc, raw.get("prompts"))
    for i, provider in enumerate(loader.suite_providers if not ctx.errors else []):  # (a prompt not read: said)
        for ref in provider.prompts or []:
            if not any(matches_ref(p.names(), ref) for p in prompts):
                ctx.error(doc, (provider_key, i, "prompts"), f"no prompt matches {ref!r}", "the label of a suite prompt")
    if not prompts and "prompts" not in raw:
        prompts = [Prompt("prompt", text="{{ prompt }}" if dialect == "promptfoo" else "{{ input }}")]
    if isinstance(raw.get(default_key := names.get("defaultTest", "defaultTest")), dict):  # a TestCaseSchema
        compat.unknown_fields(ctx, doc, (default_key,), raw[default_key],
                              TEST_KEYS | (AGENTV_TEST_KEYS if dialect == "agentv" else set()))
    default = read_default_test(ctx, doc, default_key, dialect)
    derived = parse_derived_metrics(ctx, doc, raw.get("derivedMetrics")) if dialect == "promptfoo" else []
    metadata = raw.get("metadata") or {}
    tests, scenarios = collect_raw_tests(ctx, doc, ("tests",), raw.get("tests"), dialect), raw.get("scenarios")
    if loader.hooks is not None and not ctx.errors:  # promptfoo's beforeAll, before the tests are expanded
        tests, scenarios, default, derived = loader.hooks.before_all(prompts, tests, scenarios, default, derived)
    tests += expand_scenarios(ctx, doc, scenarios, dialect)
    loader.registers = RegisterPlan(ctx, tests, default, dialect)
    if not tests and dialect == "promptfoo" and "scenarios" not in raw and "redteam" not in raw and not ctx.errors:
        tests = [RawTest({}, doc, ("tests",))]  # promptfoo's dummy test: each prompt once, as written
        ctx.warnings.append(f"{doc.file}: tests: none, so each prompt runs once without variables (promptfoo's "
                            "eval compares the raw prompts)")
    cases: list[TestCase] = []
    for number, test in enumerate(tests, start=1):
        hooked = loader.hooks.before_each(test, default) if loader.hooks is not None else None
        for each, variant in hooked if hooked is not None else [(test, "")]:  # the test beforeEach returned
            cases += loader.build_cases(each, prompts, {} if hooked is not None else default,
                                        metadata if isinstance(metadata, dict) else {}, number, variant)
    if loader.hooks is not None:
        loader.hooks.finish()
    seen: set[str] = set()
    for case in cases:
        if case.id in seen:
            ctx.error(doc, ("tests",), f"duplicate test id {case.id!r}", "unique ids")
        seen.add(case.id)
    if not cases and not ctx.errors:
        ctx.error(doc, ("tests",), "the config has no tests", "`tests` or `scenarios`")
    if dialect == "promptfoo":
        apply_env(ctx, doc, raw.get("env"), list(loader.providers.values()))
    tracing = read_tracing(ctx, doc, raw) if dialect == "promptfoo" else None
    if ctx.errors:  # one error per place, though a test's assertions are read per variable combination
        raise SpecErrors(with_hints(list(dict.fromkeys(ctx.errors))))
    tags = tag_list(raw.get("tags"))
    suite = Suite(
        name=str(raw.get("name") or doc.file.stem), description=raw.get("description"),
        version=str(raw["version"]) if raw.get("version") is not None else None, tags=tags,
        format="agentv-v5" if dialect == "agentv" else "promptfoo", source_file=str(doc.file),
        # promptfoo's pass rule; AgentV keeps its own (seed 001's): gates, weighted mean, 0.8/0.6 verdicts.
        execution=execution, settings=settings, scoring="weighted" if dialect == "agentv" else "all_pass",
        tests=cases,
        target_configs=[p.config for p in loader.providers.values() if p.config is not None],
        derived_metrics=derived, tracing=tracing,
    )
    return suite, with_warning_hints(list(dict.fromkeys(ctx.warnings)))
