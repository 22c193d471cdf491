"""promptfoo's base path: every ``file://`` of a config, in the config or in a file it loads (a tests
file in a subfolder, a ``defaultTest`` file, a providers file), is read relative to the config's
folder (``cliState.basePath``, src/util/file.ts ``maybeLoadFromExternalFile``), not to the file that
holds the reference. Set while a promptfoo config loads; AgentV v5 suites (read by the same code)
keep reading beside the file that holds the reference, so it stays None for them."""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Iterator

CONFIG_BASE: ContextVar[Path | None] = ContextVar("promptfoo_config_base", default=None)


@contextmanager
def config_base(folder: Path | None) -> Iterator[None]:
    """``CONFIG_BASE`` set to ``folder`` for the duration of one load."""
    token = CONFIG_BASE.set(folder)
    try:
        yield
    finally:
        CONFIG_BASE.reset(token)
