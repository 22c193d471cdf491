"""How a TypeScript judge script (seed 001 writes ``script: ./check.ts``) is run here.

Node strips types itself from 22.6 (``--experimental-strip-types``; by default from
23.6), so a ``.ts`` / ``.mts`` / ``.cts`` script runs as a JavaScript one does, in the
same sandbox and limits. On an older node the suite is refused when it loads, naming
what is needed, instead of every case's grade being an error. Other runtimes are not
picked on their own: ``tsx``'s second node process ran out of address space under a
judge's default ``memory_mb`` in the sandbox, so another runtime is named explicitly,
``command: [bun, run, check.ts]`` with a ``memory_mb`` that fits. JSX (``.tsx``) needs
such a command too.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from functools import lru_cache

TYPESCRIPT = (".ts", ".mts", ".cts", ".tsx")
STRIPS_TYPES = (22, 6)
NEEDED = ("node 22.6 or later (it strips the types), or a `command` naming your TypeScript runtime, "
          "e.g. [bun, run, check.ts]")


@lru_cache(maxsize=1)
def node_version() -> tuple[int, int] | None:
    node = shutil.which("node")
    if node is None:
        return None
    try:
        found = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.match(r"v(\d+)\.(\d+)", found.stdout.strip())
    return (int(match.group(1)), int(match.group(2))) if match else None


def typescript_runner(suffix: str) -> list[str] | None:
    """The argv prefix that runs a TypeScript file with ``suffix``, or None when node cannot."""
    version = node_version()
    if suffix == ".tsx" or version is None or version < STRIPS_TYPES:
        return None
    return ["node"] if version >= (23, 6) else ["node", "--experimental-strip-types"]


def missing_runtime(suffix: str) -> str:
    version = node_version()
    if suffix == ".tsx":
        return "a .tsx judge (JSX) is not run by `script`"
    found = f"node {version[0]}.{version[1]} does not strip types" if version else "no node on PATH"
    return f"no TypeScript runtime to run a {suffix} judge ({found})"
