"""Grading: graders, the one dispatch rule, scoring and the judge."""
