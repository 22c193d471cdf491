"""Seed 003's eval harness suites: capability and regression evals, graders ``code``, ``model``
and ``human``, suite files with ``$ref`` (``suite``), thresholds per environment. Rules from
seed 003; every field honoured or refused.
"""
