"""Grading: the graders (a registry of one module per assertion type), the one dispatch rule, scoring and the judge."""
