"""Typed eval spec: models, loaders for every seed format, and load errors."""

from eval_pipelines.suite.errors import SpecError, SpecErrors
from eval_pipelines.suite.models import Assertion, Message, Suite, TestCase

__all__ = ["Assertion", "Message", "SpecError", "SpecErrors", "Suite", "TestCase"]
