"""Shared pytest fixtures."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Iterator

import pytest

# Make ``tests.support`` importable however pytest was started.
_ROOT = str(Path(__file__).resolve().parent.parent)
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

from tests.support.fake_openai import FakeOpenAIServer  # noqa: E402

# Tests evaluate fixed dates (2026-11-20, ...) in fresh stores: the partitions' date
# axis must reach back to them whatever today is (tests/defs/test_partitions_start.py
# tests the default, store-derived start). Subprocesses inherit it.
os.environ.setdefault("EVAL_PIPELINES_START_DATE", "2026-01-01")


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAIServer]:
    """A started local OpenAI-compatible server (see tests/support/fake_openai.py)."""
    with FakeOpenAIServer(latency_s=0.0) as server:
        yield server


def pytest_configure(config: pytest.Config) -> None:
    """On a machine where no strong sandbox level starts (no user namespaces, no
    bubblewrap), untrusted code is refused by default; the functional tests of
    judges and command targets then run with the operator's opt-in instead of
    all failing. The security tests force their level and set or clear the
    opt-in themselves (tests/run/test_sandbox_levels.py, test_sandbox.py)."""
    import os

    from eval_pipelines.run.sandbox.isolation import ENV_ALLOW, choose_isolation

    isolation = choose_isolation()
    if not isolation.strong and ENV_ALLOW not in os.environ:
        os.environ[ENV_ALLOW] = "1"
        print(f"note: no strong sandbox level here ({isolation.label}); tests run untrusted code with "
              f"{ENV_ALLOW}=1", file=sys.stderr)


def _uses_the_demo(item: pytest.Item) -> bool:
    function = getattr(item, "function", None)
    names = function.__code__.co_names if function is not None else ()
    return "demo_db" in getattr(item, "fixturenames", ()) or any(n.startswith("build_demo") for n in names)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With ``-n``/``--dist loadgroup`` (``make test``), every test that reads the bundled demo's
    run goes to one worker: the demo is built once per worker (tests/support/demo.py), and two
    builds would cost more than the parallel run saves."""
    for item in items:
        if _uses_the_demo(item):
            item.add_marker(pytest.mark.xdist_group("demo"))
