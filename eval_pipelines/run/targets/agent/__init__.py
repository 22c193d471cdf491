"""Agent targets: an agent with the skill installed, run in a per-case workspace whose files,
transcript and metrics are stored (``claude_stream`` reads the Claude Code CLI's stream-json)."""
