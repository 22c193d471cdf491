"""Seed 000's skill-package tests: ``eval/tests.json`` v1 (converted to v2) and v2
(``EvalConfigV2``: profiles, settings, setup/teardown, suites, ``TestCaseV2``), with the
strategies ``exact_match`` ... ``custom``. Rules from seed 000; every field honoured or refused.
"""
