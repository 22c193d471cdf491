"""Agent targets: a model with the skill installed, working in a fresh workspace per case.

``config`` lives with the other target settings (``targets/config.py``: ``AgentTargetConfig``);
here are the workspace (``workspace``: staging the skill and the case's files, and what changed),
the tools the model gets (``tools``: list/read/write files inside the workspace, run a command in
the sandbox), the loop (``loop``: Pydantic AI's agent over an OpenAI-compatible model) and the
recording (``recording``: transcript, trace, metrics); ``claude_stream`` reads the Claude Code CLI's
stream-json into the same record. docs/agent-targets.md describes it all.
"""
