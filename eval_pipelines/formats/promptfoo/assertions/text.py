"""promptfoo's structural and text assertion types (is-xml, contains-xml, is-html, is-sql,
is-refusal, webhook, ...) as our assertion mappings, and the one-line refusals of the types
we cannot honour here. ``promptfoo_asserts`` adds ``TEXT_VOCABULARY`` to ``VOCABULARY``.
"""

from __future__ import annotations

import re
from typing import Any, Callable
from urllib.parse import parse_qsl, urlsplit

from eval_pipelines.formats.promptfoo.assertions.vocabulary import VOCABULARY, Refused


def _required_elements(raw: dict[str, Any]) -> list[str] | None:
    """promptfoo's xml.ts: a comma string, a list, or ``{requiredElements: [...]}`` of dotted paths."""
    value = raw.get("value")
    if value is None or value == {} or value == []:
        return None
    if isinstance(value, str):
        return [v.strip() for v in value.split(",")]
    if isinstance(value, list):
        return [str(v) for v in value]
    if isinstance(value, dict) and isinstance(value.get("requiredElements"), list) and set(value) == {"requiredElements"}:
        return [str(v) for v in value["requiredElements"]]
    raise Refused("`value` must be the required elements: a comma-separated string, a list of dotted paths "
                  "or {requiredElements: [...]}")


def _xml(kind: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def build(raw: dict[str, Any]) -> dict[str, Any]:
        return {"type": kind, "required_elements": _required_elements(raw)}
    return build


def _sql(kind: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """promptfoo's sql.ts: no value, or ``{databaseType, allowedTables, allowedColumns}``."""
    def build(raw: dict[str, Any]) -> dict[str, Any]:
        from eval_pipelines.grading.graders._sql import dialect

        value = raw.get("value")
        if value is None or value == {}:
            return {"type": kind}
        if not isinstance(value, dict):
            raise Refused("`value` must be a mapping {databaseType, allowedTables, allowedColumns}")
        unknown = sorted(set(value) - {"databaseType", "allowedTables", "allowedColumns"})
        if unknown:
            raise Refused(f"`value` has unknown field(s) {', '.join(unknown)} "
                          "(expected databaseType, allowedTables, allowedColumns)")
        out: dict[str, Any] = {"type": kind}
        if value.get("databaseType"):  # promptfoo: `databaseType || 'MySQL'`
            try:
                dialect(str(value["databaseType"]))
            except ValueError as exc:
                raise Refused(f"`value.{exc}`") from None
            out["database_type"] = str(value["databaseType"])
        for key, field in (("allowedTables", "allowed_tables"), ("allowedColumns", "allowed_columns")):
            if value.get(key) is not None:
                if not isinstance(value[key], list) or not all(isinstance(v, str) for v in value[key]):
                    raise Refused(f"`value.{key}` must be a list of `type::db::name` patterns")
                out[field] = value[key]
        return out
    return build


_CREDENTIAL = re.compile(r"(key|token|secret|password|passwd|auth|signature|sig|credential)", re.IGNORECASE)


def _webhook(raw: dict[str, Any]) -> dict[str, Any]:
    """promptfoo's webhook.ts: ``value`` is the URL. A URL carrying a credential is refused: the
    suite (and so the URL) is stored, and secrets never are."""
    url = raw.get("value")
    if not isinstance(url, str) or not url:
        raise Refused("`value` must be the webhook's URL")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise Refused(f"`value` {url!r} is not an http(s) URL")
    if parts.username or parts.password or any(_CREDENTIAL.search(k) for k, _ in parse_qsl(parts.query)):
        raise Refused("a webhook URL carrying a credential (user:password@ or a key/token parameter) is not "
                      "supported: the suite is stored and secrets never are")
    return {"type": "webhook", "url": url}


# promptfoo types that need what this installation does not have: type -> why.
CANNOT_HONOUR = {
    "classifier": "it runs a Hugging Face text-classification model, which cannot be fetched here",
    "guardrails": "it reads the guardrail verdict a provider reports (Azure / Bedrock content filters), "
                  "which our targets do not report",
    "pi": "it scores with Pi Labs' remote scoring service (withpi.ai), which is not reachable here",
    "ruby": "it runs Ruby code, and there is no Ruby on this machine",
    "search-rubric": "its judge searches the web, which is not available here",
    "human": "it is a rating a person gives in promptfoo's web viewer, which is not read here",
}


def _cannot(kind: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def build(raw: dict[str, Any]) -> dict[str, Any]:
        raise Refused(f"not supported: {CANNOT_HONOUR[kind]}")
    return build


def _no_such_type(raw: dict[str, Any]) -> dict[str, Any]:
    # promptfoo's BaseAssertionTypesSchema (src/types/index.ts) lists no empty / non-empty type.
    raise Refused(f"{raw.get('type')!r} is not supported: promptfoo has no such assertion type; for a "
                  "non-empty output write `{type: javascript, value: 'output.trim().length > 0'}`")


def _moderation(raw: dict[str, Any]) -> dict[str, Any]:
    """promptfoo's moderation.ts: ``value``, when set, is the list of category codes that count."""
    value = raw.get("value")
    if value is None or value == []:
        return {"type": "moderation"}
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise Refused("`value` must be a list of moderation categories (violence, harassment/threatening, ...)")
    return {"type": "moderation", "categories": value}


TEXT_VOCABULARY: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "is-xml": _xml("is_xml"),
    "contains-xml": _xml("contains_xml"),
    "is-html": lambda r: {"type": "is_html"},
    "contains-html": lambda r: {"type": "contains_html"},
    "is-sql": _sql("is_sql"),
    "contains-sql": _sql("contains_sql"),
    "is-refusal": lambda r: {"type": "is_refusal"},
    # promptfoo's index.ts: 'model-graded-factuality': handleFactuality (the same assertion).
    "model-graded-factuality": VOCABULARY["factuality"],
    "webhook": _webhook,
    "moderation": _moderation,
    **{kind: _cannot(kind) for kind in CANNOT_HONOUR},
    "empty": _no_such_type,  # `not-empty`
    "non-empty": _no_such_type,
}
# Entries that only refuse: not offered as supported types in the unknown-type message.
REFUSED_TYPES = {*CANNOT_HONOUR, "empty", "non-empty"}
# Types that read no `value` (a value given is an "accepted but not used" warning).
TEXT_VALUE_NOT_READ = {"is-html", "contains-html", "is-refusal"}
