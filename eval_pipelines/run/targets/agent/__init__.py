"""Agent targets: a model with the skill installed, working in a fresh workspace per case.

``config`` lives with the other target settings (``targets/config.py``: ``AgentTargetConfig``,
``ClaudeCodeTargetConfig``); here are the workspace (``workspace``: staging the skill and the case's
files, and what changed), the tools the model gets (``tools``: list/read/write files inside the
workspace, run a command in the sandbox), the loop (``loop``: Pydantic AI's agent over an
OpenAI-compatible model) and the recording (``recording``: transcript, trace, metrics); ``skill_info``
is what both kinds read from the skill and the case. The Claude Code kind: ``claude_code`` (the CLI
run in the sandbox), ``model_bridge`` (its only way to the model, which adds the key), ``claude_stream``
(its stream-json read) and ``claude_record`` (that read as the same record). docs/agent-targets.md and
docs/claude-code.md describe it all.
"""
