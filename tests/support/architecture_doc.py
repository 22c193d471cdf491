"""The package table of docs/architecture.md, made from the tree: every package, what its
``__init__`` docstring says it is (first sentence), and its modules.

``python -m tests.support.architecture_doc`` rewrites the table in place;
tests/test_architecture.py fails when the doc and the tree disagree.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "eval_pipelines"
DOC = ROOT / "docs" / "architecture.md"
START, END = "<!-- packages: made by python -m tests.support.architecture_doc -->", "<!-- /packages -->"


def _first_sentence(docstring: str | None) -> str:
    text = " ".join((docstring or "").split("\n\n")[0].split())
    match = re.match(r"(.+?\.)(\s|$)", text)
    return (match.group(1) if match else text).replace("|", "\\|")


def packages() -> list[tuple[str, str, list[str]]]:
    """(folder relative to eval_pipelines/, first sentence of its docstring, its modules)."""
    out = []
    for init in sorted(PACKAGE.rglob("__init__.py")):
        folder = init.parent
        rel = folder.relative_to(PACKAGE.parent).as_posix() + "/"
        modules = sorted(p.stem for p in folder.glob("*.py") if p.name not in ("__init__.py", "__main__.py"))
        out.append((rel, _first_sentence(ast.get_docstring(ast.parse(init.read_text()))), modules))
    return out


def table() -> str:
    rows = ["| package | what it is | modules |", "|---|---|---|"]
    rows += [f"| `{rel}` | {what} | {', '.join(f'`{m}`' for m in modules)} |" for rel, what, modules in packages()]
    return "\n".join(rows)


def with_table(doc: str) -> str:
    before, _, rest = doc.partition(START)
    _, _, after = rest.partition(END)
    return f"{before}{START}\n{table()}\n{END}{after}"


if __name__ == "__main__":
    DOC.write_text(with_table(DOC.read_text()))
    sys.exit(0)
