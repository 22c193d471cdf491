"""Isolation of untrusted code (judges, skill scripts, agents' commands, command targets).

``runner`` is the API (``run_sandboxed``/``arun_sandboxed``); ``isolation`` picks the strongest
level that starts here (``namespaces`` via the standalone ``launcher`` script, ``bwrap``,
``dropped-uid``) with the limits they share; ``process`` supervises a run until nothing of it is
left; ``script_runner`` wraps a user's Python/JavaScript file. See docs/security.md."""
