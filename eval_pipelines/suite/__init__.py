"""The suite model every format writes into: ``models`` (``Suite``, ``TestCase``, ``Assertion``), load
errors with file and line (``errors``), sources with a line for every field (``source``), skill
packages (``package``), file-path policy (``paths``), assertion items (``assertions``)."""

from typing import Any

__all__ = ["Assertion", "Message", "SpecError", "SpecErrors", "Suite", "TestCase"]


def __getattr__(name: str) -> Any:
    """The names above, imported on first use: importing ``suite.package`` or ``suite.errors``
    (the Dagster definitions do) must not build every pydantic model of the suite."""
    if name in ("SpecError", "SpecErrors"):
        from eval_pipelines.suite import errors

        return getattr(errors, name)
    if name in __all__:
        from eval_pipelines.suite import models

        return getattr(models, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
