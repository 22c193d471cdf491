"""The wrapper programs that call a user's script file (Python or JavaScript) in the sandbox.

A caller runs ``["python", "-c", python_runner(body)]`` or ``["node", "-e", node_runner(body)]``
through ``run_sandboxed``, the script copied into the sandbox's empty folder, and sends a JSON
request on stdin: ``file`` (the script's name there), ``mark`` (:data:`MARK`) and its own fields.
The wrapper loads the file as a module (``mod``), runs ``body`` (the caller's part: what to call
and how) and ``body`` ends with ``answer(payload)``: one line, the mark then JSON, after anything
the script printed itself, which :func:`read_answer` finds. promptfoo's function prompts,
generated tests, filters, scoring functions and provider files all run this way.
"""

from __future__ import annotations

import json
import textwrap
from typing import Any

MARK = "@@eval-pipelines-result@@"

_PYTHON_HEAD = """\
import importlib.util, inspect, json, sys
req = json.loads(sys.stdin.read())
sys.path.insert(0, ".")
_spec = importlib.util.spec_from_file_location("user_script", req["file"])
mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mod)


def answer(payload):
    sys.stdout.write("\\n" + req["mark"] + json.dumps(payload, default=str) + "\\n")


"""
_NODE_HEAD = """\
const fs = require('fs');
const req = JSON.parse(fs.readFileSync(0, 'utf8'));
const answer = (payload) => process.stdout.write('\\n' + req.mark + JSON.stringify(payload) + '\\n');
(async () => {
  const mod = await import(require('url').pathToFileURL(require('path').resolve(req.file)).href);
"""
# A throw is one line on stderr (the caller's one-line error), and a failed exit.
_NODE_TAIL = """
})().catch((e) => { process.stderr.write(String(e && e.message || e)); process.exit(1); });
"""


def python_runner(body: str) -> str:
    return _PYTHON_HEAD + textwrap.dedent(body).strip() + "\n"


def node_runner(body: str) -> str:
    return _NODE_HEAD + textwrap.indent(textwrap.dedent(body).strip(), "  ") + _NODE_TAIL


def read_answer(stdout: str) -> dict[str, Any] | None:
    """The payload the wrapper answered with (its last marked line), or None when there is none."""
    lines = [line for line in stdout.splitlines() if line.startswith(MARK)]
    try:
        payload = json.loads(lines[-1][len(MARK):]) if lines else None
    except ValueError:
        return None
    return payload if isinstance(payload, dict) else None
