"""Tags as every format writes them, read in one place.

The seeds write tags as a list (``tags: ["edge-case", "happy-path"]``); authors also
write one tag as a plain string (``tags: edge``). A string is one tag: iterating it
would store ``["e", "d", "g", "e"]``.
"""

from __future__ import annotations

from typing import Any


def tag_list(value: Any) -> list[str]:
    """The tags of a ``tags`` value: None -> [], a string -> [it], a list -> its items
    as strings (empty ones dropped), a mapping -> ``key:value`` items (promptfoo's
    ``tags: {env: prod}``), anything else -> [its text]."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, dict):
        return [f"{k}:{v}" for k, v in value.items()]
    if isinstance(value, (list, tuple)):
        return [str(t) for t in value if t is not None and str(t).strip()]
    return [str(value)]
