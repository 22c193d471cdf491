"""``function_output`` with ``executor: javascript`` (seed 003): the case runs under Node.

The harness below runs inside the sandbox like the Python one: it reads
``{"args", "kwargs", "function", "nonce"}`` from stdin, evaluates ``solution.js``
in a function scope (``function f() {}``, ``const f = () => ...`` and
``module.exports = {f}`` all define ``f``), calls the function with ``args``
(``kwargs``, when given, as one extra object argument), awaits a returned promise
and prints ``{"nonce", "result"}`` as its last stdout line.

``node`` is looked up on ``PATH`` (the sandbox's); without it every case is an
error that says so, never a silent pass or a run of the code as Python.
"""

from __future__ import annotations

import re
import shutil

HARNESS = r'''
"use strict";
const fs = require("fs");

function report(payload) {
  process.stdout.write("\n" + JSON.stringify(payload) + "\n");
}

function describe(err) {
  const text = err && err.name ? `${err.name}: ${err.message}` : String(err);
  return text.slice(0, 500);
}

async function main() {
  const input = JSON.parse(fs.readFileSync(0, "utf8"));
  const nonce = input.nonce;
  const source = fs.readFileSync("solution.js", "utf8");
  const name = input.function;
  let fn;
  try {
    const module = { exports: {} };
    const load = new Function("module", "exports", "require",
      source + `\n;return (typeof ${name} === "function") ? ${name} : undefined;`);
    fn = load(module, module.exports, require);
    if (typeof fn !== "function") {
      const exported = module.exports;
      fn = typeof exported === "function" ? exported : exported && exported[name];
    }
  } catch (err) {
    report({ nonce, error: "code failed to load: " + describe(err) });
    return;
  }
  if (typeof fn !== "function") {
    report({ nonce, error: `the code defines no function '${name}'` });
    return;
  }
  const args = input.args.slice();
  if (input.kwargs && Object.keys(input.kwargs).length) args.push(input.kwargs);
  let result;
  try {
    result = await fn(...args);
  } catch (err) {
    report({ nonce, error: "raised " + describe(err) });
    return;
  }
  let text;
  try {
    text = JSON.stringify({ nonce, result: result === undefined ? null : result });
  } catch (err) {
    report({ nonce, error: describe(err) });
    return;
  }
  process.stdout.write("\n" + text + "\n");
}

main();
'''

LANGUAGES = ("javascript", "js", "node", "mjs", "cjs")


def node_available() -> bool:
    return shutil.which("node") is not None


def defines(function_name: str) -> re.Pattern[str]:
    """A JavaScript definition of ``function_name``: a declaration or an assignment."""
    name = re.escape(function_name)
    return re.compile(rf"^[ \t]*(?:export\s+)?(?:async\s+)?function\s*\*?\s*{name}\s*\(|"
                      rf"^[ \t]*(?:export\s+)?(?:const|let|var)\s+{name}\s*=|"
                      rf"(?:module\.)?exports\.{name}\s*=", re.MULTILINE)
