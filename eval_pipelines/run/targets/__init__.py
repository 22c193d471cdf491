"""Targets, the systems under test: where outputs come from (OpenAI-compatible APIs, replays, commands), declared in ``targets.yaml`` (``config``)."""
