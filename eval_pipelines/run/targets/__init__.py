"""Targets: where outputs come from (OpenAI-compatible APIs, replays, commands)."""
