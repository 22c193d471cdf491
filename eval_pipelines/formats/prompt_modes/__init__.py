"""Seed 002's prompt definitions with two evaluation modes (``llm`` with ``evaluationCriteria``,
``schema`` with a per-case ``evaluationSchema``); an empty criterion or schema is "not evaluated".
"""
