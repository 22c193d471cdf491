"""Typed eval spec: models, loaders for every seed format, and load errors."""

from eval_pipelines.spec.errors import SpecError, SpecErrors
from eval_pipelines.spec.models import Assertion, Message, Suite, TestCase

__all__ = ["Assertion", "Message", "SpecError", "SpecErrors", "Suite", "TestCase"]
