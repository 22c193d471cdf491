"""Which version a skill version is compared with: a pure rule over version strings.

The baseline of ``name@version`` is the version pinned in its suite
(``baseline: 1.2.0``) when that version has results, else the highest earlier
version of the same skill that has results (semantic-version order, see
``versions``). ``store.queries`` applies this rule to what the store holds.
"""

from __future__ import annotations

from eval_pipelines.analysis.versions import version_sort_key


def choose_baseline(current: str, available: list[str], pinned: str | None = None) -> str | None:
    """The baseline version among ``available`` versions (never ``current`` itself)."""
    if pinned:
        pinned_version = pinned.partition("@")[2] or pinned
        return pinned_version if pinned_version in available and pinned_version != current else None
    earlier = [v for v in available if v != current and version_sort_key(v) < version_sort_key(current)]
    return max(earlier, key=version_sort_key) if earlier else None
