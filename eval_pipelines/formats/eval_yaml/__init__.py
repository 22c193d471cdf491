"""The eval spec YAML (seed 001, ``eval.yaml``): metadata, the unified ``assert`` list,
suite-level ``assert`` inheritance, ``tests`` inline or from files, ``execution``, ``workspace``.

Rules come from seed 001 (its validation rules and backward-compatible aliases); every field
is honoured or refused. ``fields`` holds the shared load context (errors, unknown keys),
``cases`` the test entries, ``loader`` the suite. AgentV HEAD files are read through here too.
"""
