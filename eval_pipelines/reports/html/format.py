"""Small HTML building blocks every section of the HTML report uses: escaping,
number formats, verdict and change badges, preformatted values, code spans.

Every string from the store goes through ``e`` (or a helper built on it).
"""

from __future__ import annotations

import json
import re
from html import escape
from typing import Any


def e(value: Any) -> str:
    """Escape anything for HTML text or a quoted attribute."""
    if value is None:
        return ""
    return escape(value if isinstance(value, str) else str(value), quote=True)


_SCALAR_JSON = {bool: lambda v: "true" if v else "false", int: int.__repr__, type(None): lambda v: "null",
                str: json.encoder.encode_basestring}


def pretty(value: Any) -> str:
    if isinstance(value, str):
        return value
    if type(value) is dict and all(type(k) is str and type(v) in _SCALAR_JSON for k, v in value.items()):
        # A flat object (most grades' details): the text json.dumps(indent=2) gives, without its
        # pure-Python indenting encoder (the C one does not indent), once per grade of a report.
        if not value:
            return "{}"
        return "{\n" + ",\n".join(f"  {_SCALAR_JSON[str](k)}: {_SCALAR_JSON[type(v)](v)}"
                                     for k, v in sorted(value.items())) + "\n}"
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str)


def pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.0f}%"


def fmt_score(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "case"


def badge(outcome: str | None) -> str:
    word = outcome or "n/a"
    return f'<span class="badge {e(slug(word))}">{e(word.replace("_", " "))}</span>'


def change_badge(change: str | None) -> str:
    if change in (None, "same"):
        return ""
    return f'<span class="change {e(change)}">{e(change)}</span>'


def pre(value: Any, cls: str = "") -> str:
    return f'<pre class="{cls}">{e(pretty(value))}</pre>'


def code_spans(text: str) -> str:
    parts = re.split(r"(`[^`]*`)", text)
    return "".join(f"<code>{e(p[1:-1])}</code>" if len(p) > 1 and p[0] == p[-1] == "`" else e(p) for p in parts)
