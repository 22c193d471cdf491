"""The one internal model every suite format is loaded into.

Graders, targets, storage and the Dagster layer only ever see these types; the
format differences of the seeds stay inside the loaders.
"""

from __future__ import annotations

import unicodedata
import json
from typing import Any, Literal, Mapping

from pydantic import Field, field_validator, model_serializer, model_validator

from eval_pipelines.suite.configurations import WITH_SKILL, WITHOUT_SKILL, Configurations  # noqa: F401 - re-exported
from eval_pipelines.suite.content_parts import ContentPart, text_view
from eval_pipelines.suite.registers import Registers

Verdict = Literal["pass", "borderline", "fail"]


from eval_pipelines.suite.base_model import Model  # noqa: E402


class Message(Model):
    """One chat message. ``content`` is its text; a message written as content parts (an image,
    an audio clip: suite/content_parts.py) keeps them in ``parts``, which OpenAI-compatible targets
    send, and ``content`` is then their text view (non-text parts as placeholders)."""

    role: Literal["system", "user", "assistant", "tool"] = "user"
    content: str
    parts: list[ContentPart] | None = None

    @classmethod
    def of_parts(cls, role: str, parts: list[Any]) -> Message:
        return cls(role=role, content=text_view(parts), parts=parts)  # type: ignore[arg-type]

    @model_serializer(mode="wrap")
    def _without_absent_parts(self, handler: Any) -> dict[str, Any]:
        # A text message dumps as before: stored rows and cache keys of text suites do not change.
        data = handler(self)
        if isinstance(data, dict) and data.get("parts") is None:
            data.pop("parts", None)
        return data


# The tool models live in suite/tools.py (re-exported: loaders and targets import them from here).
from eval_pipelines.suite.tools import (  # noqa: E402,F401
    DEFAULT_MAX_STEPS, TOOL_NAME_PATTERN, CannedResult, ToolSpec, _unique_tools, merge_tools,
    tool_parameters_problem)


# A grade, a case and a code judge's score pass from here (seed 003's 0.8).
PASS_THRESHOLD = 0.8


def gate_minimum(required: bool | float) -> float | None:
    """``required: true`` gates at the pass threshold, a number is its own minimum, false is no gate."""
    if required is True:
        return PASS_THRESHOLD
    if required is False:
        return None
    return float(required)


class Assertion(Model):
    """One entry of a test's effective ``assert`` list.

    ``type`` is the canonical registry name (aliases such as ``exact_match`` or
    ``llm-judge`` are resolved by the loader); ``config`` holds the type-specific
    fields, already validated against the grader's own parameter model.
    """

    type: str
    name: str | None = None
    weight: float = Field(default=1.0, ge=0)
    # True: gate at the pass threshold (0.8); a number: its own minimum score.
    required: bool | float = False
    negate: bool = False
    config: dict[str, Any] = Field(default_factory=dict)

    @field_validator("required")
    @classmethod
    def _required_in_range(cls, value: bool | float) -> bool | float:
        if not isinstance(value, bool) and not 0 <= value <= 1:
            raise ValueError("a numeric `required` must be within [0, 1]")
        return value

    @property
    def label(self) -> str:
        return self.name or self.type

    def gate_minimum(self) -> float | None:
        """Minimum score this assertion must reach, or None when it is no gate."""
        return gate_minimum(self.required)

    def pass_minimum(self) -> float:
        """Score at which this assertion's grade counts as passed."""
        minimum = self.gate_minimum()
        return PASS_THRESHOLD if minimum is None else minimum


class Trials(Model):
    count: int = Field(default=1, ge=1, le=1000)
    strategy: Literal["pass_at_k", "mean", "confidence_interval", "all"] = "pass_at_k"
    cost_limit_usd: float | None = None


class Execution(Model):
    targets: list[str] = Field(default_factory=list)
    trials: Trials = Field(default_factory=Trials)
    cache: bool = True
    # Agent Skills packages (evals.json) default to both (suite/configurations.py).
    configurations: Configurations = Field(default_factory=lambda: [WITH_SKILL], min_length=1)


class Settings(Model):
    """Run settings shared by the formats (000 ``settings``, 003 ``config``)."""

    timeout_ms: int = Field(default=30_000, gt=0)
    max_concurrency: int | None = Field(default=None, ge=1)
    # A pause after each call the cache did not answer, holding the call's slot: for every target
    # (promptfoo's evaluateOptions.delay; its loader also sets max_concurrency to 1, as promptfoo
    # does), or by target name (a promptfoo provider's `delay`), which wins.
    delay_ms: int | None = Field(default=None, ge=0)
    target_delay_ms: dict[str, int] = Field(default_factory=dict)
    fail_fast: bool = False
    # None: each target's own `max_retries` applies.
    retry_count: int | None = Field(default=None, ge=0, le=20)
    # Re-runs of a failing case (000 `retryFailed`, 003 `retry_failed` + `retry_count`); a
    # case's own `retries` wins. The stored output is the last attempt.
    rerun_failed: int = Field(default=0, ge=0, le=20)


class WorkspaceScript(Model):
    """A setup or teardown step: a command (string or argv) with a timeout, and
    environment variables for the run (seed 000 ``setup.environment``)."""

    script: str | list[str] | None = None
    timeout_ms: int | None = Field(default=None, gt=0)
    environment: dict[str, str] = Field(default_factory=dict)


class WorkspaceRepo(Model):
    """A git repository cloned into the workspace before ``setup`` (AgentV ``workspace.repos``)."""

    path: str
    url: str
    ref: str | None = None
    depth: int | None = Field(default=None, ge=1)


class Workspace(Model):
    """Seed 001 ``workspace`` / seed 000 ``setup``/``teardown``: a per-run folder."""

    template: str | None = None
    setup: WorkspaceScript | None = None
    teardown: WorkspaceScript | None = None
    dependencies: list[str] = Field(default_factory=list)
    repos: list[WorkspaceRepo] = Field(default_factory=list)


class Reporting(Model):
    """Seed 003 ``reporting``: which report formats to write, and where."""

    format: list[Literal["json", "markdown", "html"]] = Field(default_factory=lambda: ["json", "markdown", "html"])
    output_dir: str | None = None
    include_details: bool = True
    notify_on_failure: bool = False


class RegressionSettings(Model):
    """How sure and how large a drop must be before the regression check fails
    (``analysis.policy``): ``alpha`` is the family-wise level of one check's suite-level
    tests, ``min_effect`` the practical-significance margin judged by ``effect_rule``,
    ``case_fdr`` the false-discovery rate of the per-case "regressed" labels, computed as
    ``case_labels`` says."""

    alpha: float = Field(default=0.05, gt=0, lt=1)
    min_effect: float = Field(default=0.05, ge=0, le=1)
    effect_rule: Literal["plausible", "estimate", "certain"] = "plausible"
    case_fdr: float = Field(default=0.10, gt=0, lt=1)
    case_labels: Literal["auto", "dbh", "bh", "mirror"] = "auto"


class PromptModelSettings(Model):
    """Model settings a promptfoo prompt's own ``config`` lays over its OpenAI-compatible targets'
    for its cases (promptfoo merges ``{...provider.config, ...prompt.config}`` per call)."""

    temperature: float | None = None
    max_tokens: int | None = Field(default=None, ge=1)
    response_format: dict[str, Any] | None = None


class InputFile(Model):
    """A file a case gives its target (skill-creator's eval ``files``): agent targets find it in their
    workspace at ``path``; chat targets get text files inlined in the prompt and cannot take the others."""

    path: str  # where it goes in the workspace, relative (as the suite wrote it; a directory's files below it)
    source: str  # the file on disk it is copied from
    inlined: bool  # its text is already in the case's prompt (a chat target needs nothing more)
    reason: str | None = None  # why it is not inlined (binary, a directory's file), for a chat target's error


class TestCase(Model):
    __test__ = False  # not a pytest class

    id: str
    name: str | None = None
    description: str | None = None
    input: list[Message]
    expected_output: Any = None
    criteria: str | None = None
    assertions: list[Assertion] = Field(default_factory=list)
    targets: list[str] | None = None  # per-test override of the suite's targets
    timeout_ms: int | None = None
    # Per-test overrides (001 `execution.trials` / `execution.cache`; 000 `evaluation.retryCount`,
    # 003 `metadata.retries`): None means the suite's setting.
    trials: int | None = Field(default=None, ge=1, le=1000)
    cache: bool | None = None
    retries: int | None = Field(default=None, ge=0, le=20)
    # Tools offered to the model (the loader merges in the suite's); see ToolSpec.
    tools: list[ToolSpec] = Field(default_factory=list)
    # Model calls allowed in the tool-calling loop (None: the suite's, else 8).
    max_steps: int | None = Field(default=None, ge=1)
    category: str | None = None
    tags: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    # promptfoo's test `threshold`: under the `all_pass` scoring rule the case passes
    # when its weighted score reaches it, whatever single assertions did.
    threshold: float | None = Field(default=None, ge=0, le=1)
    # promptfoo: the settings of the case's prompt's own `config` (None: the targets' own).
    model_settings: PromptModelSettings | None = None
    # Where the case came from, for error messages and the test_cases table.
    source_file: str | None = None
    source_line: int | None = None
    # Earlier turns of the same conversation (promptfoo's `_conversation`), in order. The
    # case was written before their answers exist, so each answer stands in it as
    # ``output_mark(id)``; the model phase waits for them (same target, same trial) and
    # sends ``with_answers(case, ...)``. Graders see the filled case too.
    after: list[str] = Field(default_factory=list)
    # Files staged into an agent target's workspace (skill-creator's eval `files`).
    input_files: list[InputFile] = Field(default_factory=list)
    # promptfoo's storeOutputAs (suite/registers.py).
    registers: Registers | None = None
    # Why this case cannot run: an eval promptfoo fails before calling the model (a prompt that does
    # not render), an evals.json eval naming an input file the package lacks or without a task. The
    # loader keeps the case so the other cases still run; every row of the case is an error with this
    # reason, and no model is called.
    fails_with: str | None = None

    @field_validator("id")
    @classmethod
    def _printable_normalised_id(cls, value: str) -> str:
        # "café" typed (NFC) and pasted (NFD) is one id; an id is also a file
        # name and a Markdown/HTML cell, so no control or direction characters.
        value = unicodedata.normalize("NFC", value)
        if not value.strip():
            raise ValueError("a test id must not be empty")
        bad = next((ch for ch in value if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp")), None)
        if bad is not None:
            raise ValueError(f"test id {value!r} contains the control or formatting character "
                             f"U+{ord(bad):04X} ({unicodedata.name(bad, 'a control character')})")
        return value

    @property
    def user_text(self) -> str:
        """The user messages joined: what command and replay targets receive."""
        return "\n\n".join(m.content for m in self.input if m.role == "user")

    @field_validator("tools")
    @classmethod
    def _unique_tool_names(cls, value: list[ToolSpec]) -> list[ToolSpec]:
        return _unique_tools(value)


def output_mark(case_id: str) -> str:
    """Where an earlier turn's answer goes in a later turn's input (see ``TestCase.after``);
    the test_cases table shows the mark, model_outputs the answer."""
    return f"\u27e6output of {case_id}\u27e7"


def with_answers(case: TestCase, answers: Mapping[str, str | None]) -> TestCase:
    """``case`` with each earlier turn's mark replaced by that turn's answer: in its messages,
    assertions and variables alike. A turn without an answer (an error row) gives "", as
    promptfoo records ``output || ''`` in the conversation."""
    if not case.after:
        return case
    text = case.model_dump_json()
    for case_id in case.after:
        mark = json.dumps(output_mark(case_id), ensure_ascii=False)[1:-1]
        text = text.replace(mark, json.dumps(answers.get(case_id) or "", ensure_ascii=False)[1:-1])
    return TestCase.model_validate_json(text)


class DerivedMetric(Model):
    """promptfoo ``derivedMetrics`` entry: a metric computed from named metrics after the
    run (``analysis/derived_metrics.py``); ``value`` is an arithmetic expression."""

    name: str
    value: str


class Tracing(Model):
    """promptfoo ``tracing`` with ``enabled: true``: each output gets a trace (``context.traceparent``
    to script providers, a GenAI span per OpenAI-compatible call) that trace assertions read."""

    # The OTLP/HTTP port a script provider exports to (in its own sandbox), and the body formats
    # taken there (promptfoo ``otlp.http.acceptFormats``).
    otlp_port: int = Field(default=4318, ge=1, le=65535)
    accept_formats: list[Literal["json", "protobuf"]] = Field(default_factory=lambda: ["json", "protobuf"])
    # Attribute keys (case-insensitive substrings) whose values are stored as ``[REDACTED]``.
    redact_attributes: list[str] = Field(default_factory=list)


class Suite(Model):
    name: str
    description: str | None = None
    version: str | None = None
    author: str | None = None
    tags: list[str] = Field(default_factory=list)
    license: str | None = None
    requires: dict[str, str] = Field(default_factory=dict)
    format: Literal["eval-yaml", "skill-tests-v1", "skill-tests-v2", "harness", "prompt-modes", "agent-skills-evals",
                    "promptfoo", "agentv-v5"]
    source_file: str
    # How a case's verdict follows from its grades: `weighted` is seed 001's (required
    # gates, weighted mean, pass >= 0.8); `all_pass` is promptfoo's (the case passes
    # when every assertion passed, or when its score reaches the test's `threshold`;
    # the score is the weighted mean either way; no borderline).
    scoring: Literal["weighted", "all_pass"] = "weighted"
    # Targets the suite file defines itself (promptfoo `providers`), as targets.yaml
    # entries; a target of the same name in targets.yaml wins.
    target_configs: list[dict[str, Any]] = Field(default_factory=list)
    profile: str | None = None
    system_prompt: str | None = None
    # Seed 002 prompt `model` (runs the suite's OpenAI-compatible targets with it) and
    # `expectedSchema` (sent to them as structured-output `response_format`).
    model: str | None = None
    response_schema: dict[str, Any] | None = None
    execution: Execution = Field(default_factory=Execution)
    settings: Settings = Field(default_factory=Settings)
    # Target that grades model-graded assertions: suite `judge:`, else a target
    # named `judge`, else `default` (resolved when the skill is loaded).
    judge: str | None = None
    workspace: Workspace | None = None
    reporting: Reporting | None = None
    # A version to compare with instead of the previous one (``1.2.0`` or ``name@1.2.0``).
    baseline: str | None = None
    regression: RegressionSettings = Field(default_factory=RegressionSettings)
    # Seed 003 `blocking: true`: a missed gate stops the run's downstream assets.
    blocking: bool = False
    # Gates for the whole suite: required_pass_rate, pass_at_1, pass_hat_3, ...
    thresholds: dict[str, float] = Field(default_factory=dict)
    # Defaults for every test: tools (a test's tool of the same name wins) and max_steps.
    tools: list[ToolSpec] = Field(default_factory=list)
    max_steps: int | None = Field(default=None, ge=1)
    # promptfoo `derivedMetrics`: stored as metrics rows per target (and prompt).
    derived_metrics: list[DerivedMetric] = Field(default_factory=list)
    # promptfoo `tracing` (enabled): None when the suite's outputs are not traced.
    tracing: Tracing | None = None
    tests: list[TestCase]

    @field_validator("tools")
    @classmethod
    def _unique_tool_names(cls, value: list[ToolSpec]) -> list[ToolSpec]:
        return _unique_tools(value)

    @model_validator(mode="after")
    def _turns_follow_earlier_cases(self) -> "Suite":
        # The model phase runs a turn after the turns it names; a later or unknown one would
        # leave it waiting for an answer that never comes.
        seen: set[str] = set()
        for case in self.tests:
            missing = [c for c in case.after if c not in seen]
            if missing:
                raise ValueError(f"test {case.id!r}: `after` names {', '.join(missing)}, "
                                 "which is not an earlier test of the suite")
            seen.add(case.id)
        return self

    def targets_for(self, case: TestCase) -> list[str]:
        return case.targets if case.targets is not None else self.execution.targets

    def trials_for(self, case: TestCase) -> int:
        return case.trials if case.trials is not None else self.execution.trials.count

    def reruns_for(self, case: TestCase) -> int:
        return case.retries if case.retries is not None else self.settings.rerun_failed
