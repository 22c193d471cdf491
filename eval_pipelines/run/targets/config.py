"""Named target settings, from a ``targets.yaml`` in the project or a skill package."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal, Mapping, NamedTuple, Union

import re

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from eval_pipelines.run.targets.key_policy import withheld_key_reason
from eval_pipelines.suite.errors import SpecErrors, pydantic_errors
from eval_pipelines.suite.source import load_document


# Names of variables holding secrets (keys, tokens, passwords), which no base URL variable may be.
SECRET_NAME = re.compile(r"(^|_)(API_?)?KEY($|_)|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.IGNORECASE)


class _TargetBase(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
    concurrency: int = Field(default=8, ge=1, le=1024)
    timeout_s: float = Field(default=60.0, gt=0)


class OpenAITargetConfig(_TargetBase):
    """A chat model behind any OpenAI-compatible base URL."""

    type: Literal["openai"] = "openai"
    model: str
    base_url: str | None = None
    # Names of environment variables, never the secret itself.
    base_url_env: str = "OPENAI_BASE_URL"
    # Used when neither `base_url` nor the variable is set (a proxy's documented address, e.g.
    # LiteLLM's http://0.0.0.0:4000), instead of the OpenAI client's own default (api.openai.com).
    base_url_default: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    # Who wrote this target: the operator (project targets.yaml) or the suite (its providers, a skill
    # package's targets.yaml). Set by the loaders from where the file is, refused in files; a suite's
    # target sends its key only to hosts the operator trusts (key_policy.py).
    declared_by: Literal["operator", "suite"] = "operator"
    temperature: float | None = 0.0
    max_tokens: int | None = Field(default=None, ge=1)
    # Sent as `max_completion_tokens` (reasoning models: promptfoo's chat provider sends this, never max_tokens).
    max_completion_tokens: int | None = Field(default=None, ge=1)
    # As a judge: the embedding model `similar` / `semantic_sim` asks this server for (else the judge's default).
    embedding_model: str | None = None
    # Tools offered to the model as written (promptfoo's provider `config.tools`, `tool_choice`), never
    # answered here (no canned results, unlike a test's `tools`): one call, and a reply with tool calls
    # is the output (the calls as JSON; with text too, the whole message), as promptfoo's chat provider.
    tools: list[dict[str, Any]] | None = None
    tool_choice: Any = None
    # Sent as the chat request's `response_format` (structured output), e.g. {type: json_object}.
    response_format: dict[str, Any] | None = None
    requests_per_minute: int | None = Field(default=None, ge=1)
    max_retries: int = Field(default=4, ge=0, le=20)
    price_input_per_million: float = Field(default=0.0, ge=0)
    price_output_per_million: float = Field(default=0.0, ge=0)

    @field_validator("base_url_env")
    @classmethod
    def _not_a_secret(cls, name: str) -> str:
        # The variable's value becomes the host requests go to: a secret there would be sent out as one.
        if SECRET_NAME.search(name):
            raise ValueError(f"{name} looks like a secret, not a base URL variable")
        return name


class ReplayTargetConfig(_TargetBase):
    """Outputs recorded earlier (JSONL or CSV keyed by test id and trial)."""

    type: Literal["replay"] = "replay"
    path: str


class CommandTargetConfig(_TargetBase):
    """A skill's own program: the input on stdin, the output on stdout."""

    type: Literal["command"] = "command"
    command: list[str] | str
    concurrency: int = Field(default=2, ge=1, le=64)
    timeout_s: float = Field(default=30.0, gt=0)
    # The program runs sandboxed (it is untrusted, like a judge): no network
    # unless asked for here (e.g. it calls its own model), a memory cap.
    network: bool = False
    memory_mb: int = Field(default=2048, ge=64)


class AgentTargetConfig(_TargetBase):
    """An agent over an OpenAI-compatible model with the skill installed (run/targets/agent/): it
    reads the skill and the case's files through file tools and runs commands in the sandbox, in a
    fresh workspace per case. The connection fields and the key policy are the openai target's."""

    type: Literal["agent"] = "agent"
    model: str
    base_url: str | None = None
    base_url_env: str = "OPENAI_BASE_URL"
    base_url_default: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    declared_by: Literal["operator", "suite"] = "operator"
    temperature: float | None = 0.0
    max_tokens: int | None = Field(default=None, ge=1)
    max_retries: int = Field(default=4, ge=0, le=20)
    price_input_per_million: float = Field(default=0.0, ge=0)
    price_output_per_million: float = Field(default=0.0, ge=0)
    concurrency: int = Field(default=2, ge=1, le=64)
    # Wall time of one case (the whole agent run, every model call and command included).
    timeout_s: float = Field(default=300.0, gt=0)
    # Model calls (turns of the loop) and tool calls allowed per case.
    max_turns: int = Field(default=20, ge=1, le=1000)
    max_tool_calls: int = Field(default=50, ge=1, le=10_000)
    # Each `run_command` runs in the sandbox with these limits (as a command target's program).
    network: bool = False
    memory_mb: int = Field(default=1024, ge=64)
    command_timeout_s: float = Field(default=60.0, gt=0)
    # CPU seconds of one command (None: its time limit, rounded up, as every sandboxed program).
    command_cpu_s: int | None = Field(default=None, ge=1)
    # A deterministic stand-in for the model (offline demos, a skill's CI without a model): a YAML
    # file, relative to the skill package, listing each case's turns (run/targets/agent/scripted.py).
    # The tools, the sandbox and the recording are the real ones; no model is called.
    script: str | None = None

    _not_a_secret = field_validator("base_url_env")(OpenAITargetConfig._not_a_secret.__func__)

    def limits(self) -> dict[str, Any]:
        """The limits a case ran under, stored with each output."""
        return {"max_turns": self.max_turns, "max_tool_calls": self.max_tool_calls, "timeout_s": self.timeout_s,
                "command_timeout_s": self.command_timeout_s, "command_cpu_s": self.command_cpu_s,
                "memory_mb": self.memory_mb, "network": self.network}


# Tools Claude Code is given and allowed without asking (its built-in names): reading the skill
# (Skill, Read), finding files (Glob, Grep), running its scripts (Bash), writing outputs (Write, Edit).
CLAUDE_CODE_TOOLS = ("Skill", "Read", "Glob", "Grep", "Bash", "Write", "Edit")
# The target kinds that run as agents in a per-case workspace (input files staged, not inlined).
AGENT_TARGET_TYPES = ("agent", "claude_code")


class ClaudeCodeTargetConfig(_TargetBase):
    """The Claude Code CLI (``@anthropic-ai/claude-code``) run non-interactively in the sandbox with
    the skill under the workspace's ``.claude/skills/<name>/`` (run/targets/agent/claude_code.py,
    docs/claude-code.md). The connection fields and the key policy are the openai target's."""

    type: Literal["claude_code"] = "claude_code"
    # Sent as ``--model``; None: the CLI's own default model.
    model: str | None = None
    base_url: str | None = None
    base_url_env: str = "ANTHROPIC_BASE_URL"
    base_url_default: str | None = None
    # The operator's variable holding the key; the CLI gets its value as ANTHROPIC_API_KEY, the only
    # secret in its environment.
    api_key_env: str = "ANTHROPIC_API_KEY"
    declared_by: Literal["operator", "suite"] = "operator"
    # The CLI's executable: a path (relative to the current folder) or a name on PATH; None: ``claude``
    # on PATH, else the project's ``.npm-tools`` install (docs/claude-code.md).
    binary: str | None = None
    concurrency: int = Field(default=2, ge=1, le=64)
    # Wall time of one case: the CLI and everything it runs are killed at its end.
    timeout_s: float = Field(default=300.0, gt=0)
    max_turns: int = Field(default=20, ge=1, le=1000)
    # Address-space limit of the CLI and of each command it runs (a Bun binary: it aborts below 1024).
    memory_mb: int = Field(default=1024, ge=64)
    # CPU seconds per process (None: the case's time limit, rounded up).
    cpu_s: int | None = Field(default=None, ge=1)
    # Offered to the model (``--tools``) and run without asking (``--allowedTools``).
    allowed_tools: list[str] = Field(default_factory=lambda: list(CLAUDE_CODE_TOOLS), min_length=1)
    # False: no network in the sandbox; the CLI reaches the model's host only, through a socket the
    # target bridges to it. True: the host's network, for the CLI and every command it runs.
    network: bool = False
    # Retries of a failing model call, by the CLI itself (CLAUDE_CODE_MAX_RETRIES).
    max_retries: int = Field(default=4, ge=0, le=20)
    # Used only when the stream carries no cost (the CLI prices tokens at its model's list price).
    price_input_per_million: float = Field(default=0.0, ge=0)
    price_output_per_million: float = Field(default=0.0, ge=0)

    _not_a_secret = field_validator("base_url_env")(OpenAITargetConfig._not_a_secret.__func__)

    @field_validator("memory_mb")
    @classmethod
    def _enough_for_bun(cls, value: int) -> int:
        if value < 1024:
            raise ValueError(f"{value} is too little: the CLI (a Bun binary) aborts below 1024 MB of address space")
        return value

    @field_validator("allowed_tools")
    @classmethod
    def _tool_names(cls, names: list[str]) -> list[str]:
        bad = [n for n in names if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*(\([^()]*\))?", n)]
        if bad:
            raise ValueError(f"{bad[0]!r} is not a Claude Code tool name (e.g. Read, Bash, Bash(git:*))")
        return names

    def limits(self) -> dict[str, Any]:
        """The limits a case ran under, stored with each output."""
        return {"max_turns": self.max_turns, "timeout_s": self.timeout_s, "memory_mb": self.memory_mb,
                "cpu_s": self.cpu_s, "network": self.network, "allowed_tools": list(self.allowed_tools)}


class ScriptedJudgeConfig(_TargetBase):
    """A deterministic stand-in for the judge (grading/scripted_judge.py): each rubric criterion
    (an evals.json expectation) is decided by a rule of ``script`` (YAML, relative to the skill
    package): it passes when the judged output (answer, transcript, files) holds the rule's text."""

    type: Literal["scripted_judge"] = "scripted_judge"
    script: str


TargetConfig = Annotated[
    Union[OpenAITargetConfig, ReplayTargetConfig, CommandTargetConfig, AgentTargetConfig, ClaudeCodeTargetConfig,
          ScriptedJudgeConfig],
    Field(discriminator="type"),
]


class TargetsFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    targets: list[TargetConfig]


def load_targets_file(path: Path, declared_by: Literal["operator", "suite"] = "operator") -> list[TargetConfig]:
    """Read a ``targets.yaml``; errors name the file, line and field. ``declared_by``: whose file
    it is (the project's, or a skill package's own), which decides where keys may go."""
    doc = load_document(path)
    refuse_declared_by(doc.data.get("targets") if isinstance(doc.data, dict) else None,
                       lambda i: SpecErrors.single(path, "`declared_by` is not written in a targets file",
                                                   path=("targets", i, "declared_by"),
                                                   line=doc.line_of(("targets", i, "declared_by")),
                                                   expected="no `declared_by`: where the file is decides it"))
    try:
        parsed = TargetsFile.model_validate(doc.data)
    except ValidationError as exc:
        # "did you mean" among every target kind's fields (a misspelling is rarely another kind's field).
        known = sorted({f for kind in TargetConfig.__args__[0].__args__ for f in kind.model_fields} - {"declared_by"})
        raise SpecErrors(pydantic_errors(doc, (), exc, known)) from None
    names = [t.name for t in parsed.targets]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise SpecErrors.single(path, f"duplicate target name(s) {duplicates}", path=("targets",))
    return [mark_declared_by(t, declared_by) for t in parsed.targets]


def refuse_declared_by(entries: Any, error: Any) -> None:
    """Raise ``error(index)`` for the first entry that sets ``declared_by`` itself."""
    for i, entry in enumerate(entries if isinstance(entries, list) else []):
        if isinstance(entry, dict) and "declared_by" in entry:
            raise error(i)


def mark_declared_by(config: TargetConfig, declared_by: Literal["operator", "suite"]) -> TargetConfig:
    if isinstance(config, (OpenAITargetConfig, AgentTargetConfig, ClaudeCodeTargetConfig)) and \
            config.declared_by != declared_by:
        return config.model_copy(update={"declared_by": declared_by})
    return config


class Connection(NamedTuple):
    """Where a target's requests go and with which key; ``withheld_key`` says why a key that is set
    is not sent (key_policy.py), for the error rows of calls that then fail."""

    api_key: str | None
    base_url: str | None
    withheld_key: str | None = None


def connection(config: "OpenAITargetConfig | AgentTargetConfig | ClaudeCodeTargetConfig", env: Mapping[str, str | None]) -> Connection:
    """A target's connection from the given environment view; the key is None when the target may
    not send it there (key_policy.withheld_key_reason)."""
    base_url = config.base_url or env.get(config.base_url_env) or config.base_url_default or None
    key = env.get(config.api_key_env) or None
    reason = withheld_key_reason(config, env)
    if reason is None:
        return Connection(key, base_url)
    return Connection(None, base_url, reason if key else None)


def resolve_connection(
    config: OpenAITargetConfig, env: Mapping[str, str | None]
) -> tuple[str | None, str | None]:
    """(api_key, base_url) of ``connection``."""
    api_key, base_url, _ = connection(config, env)
    return api_key, base_url
