"""The suite model every format writes into: ``models`` (``Suite``, ``TestCase``, ``Assertion``), load
errors with file and line (``errors``), sources with a line for every field (``source``), skill
packages (``package``), file-path policy (``paths``), assertion items (``assertions``)."""

from eval_pipelines.suite.errors import SpecError, SpecErrors
from eval_pipelines.suite.models import Assertion, Message, Suite, TestCase

__all__ = ["Assertion", "Message", "SpecError", "SpecErrors", "Suite", "TestCase"]
