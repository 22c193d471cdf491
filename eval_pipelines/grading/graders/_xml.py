"""XML reading shared by ``is_xml`` and ``contains_xml`` (promptfoo's src/assertions/xml.ts).

promptfoo checks a whole document's well-formedness with a strict parser (saxes) and reads
required elements from the object fast-xml-parser builds (an element's children by tag name,
a repeated tag as a list, attributes as ``@_name``, text as ``#text`` beside them); a dotted
path (``analysis.sentiment``, ``items.item.0``) is present when every step exists.

We parse with the standard library's expat, with the safety defusedxml gives it: a DOCTYPE
with an internal subset is refused before any declaration in it is read (promptfoo refuses it
too: "DTD internal subsets are not supported"), so no entity is ever declared or expanded, and
no external entity or DTD is fetched (no handler is set for them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from xml.parsers import expat

INTERNAL_SUBSET = "DTD internal subsets are not supported by is-xml validation"

_NAME_START = (":A-Z_a-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u02ff\u0370-\u037d\u037f-\u1fff\u200c-\u200d"
               "\u2070-\u218f\u2c00-\u2fef\u3001-\ud7ff\uf900-\ufdcf\ufdf0-\ufffd\U00010000-\U000effff")
_NAME = re.compile(f"[{_NAME_START}][{_NAME_START}\\-.0-9\u00b7\u0300-\u036f\u203f-\u2040]*")


class XmlError(ValueError):
    """Not well-formed (or refused, ``refused`` set): the message says why."""

    def __init__(self, message: str, refused: bool = False) -> None:
        super().__init__(message)
        self.refused = refused


def _leaf_or_node(node: dict[str, Any], text: str) -> Any:
    # fast-xml-parser (trimValues): an element with only text is its text, an empty one "".
    text = text.strip()
    if not node:
        return text
    if text:
        node["#text"] = text
    return node


def parse(text: str, whole_document: bool) -> dict[str, Any]:
    """``text`` as fast-xml-parser's object; raises ``XmlError`` when it is not well-formed.
    ``whole_document``: also refuse a DOCTYPE with an internal subset (is-xml's rule)."""
    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    root: dict[str, Any] = {}
    stack: list[tuple[str, dict[str, Any], list[str]]] = [("", root, [])]

    def xml_decl(version: str, encoding: str | None, standalone: int) -> None:
        decl = {"@_version": version}
        if encoding:
            decl["@_encoding"] = encoding
        if standalone != -1:
            decl["@_standalone"] = "yes" if standalone else "no"
        root["?xml"] = decl

    def doctype(name: str, system_id: str | None, public_id: str | None, internal_subset: int) -> None:
        if internal_subset:
            raise XmlError(INTERNAL_SUBSET, refused=True)
        if system_id and "#" in system_id:  # a system identifier has no fragment (promptfoo's isValidSystemId)
            raise XmlError("XML parsing failed: Malformed DOCTYPE declaration")

    def entity_decl(*_: Any) -> None:  # unreachable without an internal subset; never expand one
        raise XmlError(INTERNAL_SUBSET, refused=True)

    def start(name: str, attrs: dict[str, str]) -> None:
        stack.append((name, {f"@_{k}": v for k, v in attrs.items()}, []))

    def end(name: str) -> None:
        tag, node, texts = stack.pop()
        value = _leaf_or_node(node, "".join(texts))
        parent = stack[-1][1]
        if tag in parent:  # a repeated tag becomes a list
            parent[tag] = parent[tag] + [value] if isinstance(parent[tag], list) else [parent[tag], value]
        else:
            parent[tag] = value

    def chars(data: str) -> None:
        stack[-1][2].append(data)

    parser.XmlDeclHandler = xml_decl
    parser.StartDoctypeDeclHandler = doctype
    parser.EntityDeclHandler = entity_decl
    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = chars
    try:
        parser.Parse(text, True)
    except XmlError as exc:
        if not whole_document and exc.refused:
            raise XmlError(f"XML parsing failed: {exc}") from None
        raise
    except expat.ExpatError as exc:
        raise XmlError(f"XML parsing failed: {expat.ErrorString(exc.code)} "
                       f"(line {exc.lineno}, column {exc.offset + 1})") from None
    return root


def has_path(value: Any, path: list[str]) -> bool:
    """promptfoo's ``hasElementPath``: each step a key of a mapping, or an index of a list."""
    current = value
    for key in path:
        if isinstance(current, list):
            if not key.isdigit() or str(int(key)) != key or int(key) >= len(current):
                return False
            current = current[int(key)]
        elif isinstance(current, dict):
            if key not in current:
                return False
            current = current[key]
        else:
            return False
    return True


def missing(parsed: dict[str, Any], required: list[str] | None) -> list[str]:
    return [e for e in required or [] if not has_path(parsed, e.split("."))]


@dataclass(frozen=True)
class Verdict:
    valid: bool
    reason: str
    well_formed: bool


def check(text: str, required: list[str] | None, whole_document: bool) -> Verdict:
    try:
        if whole_document:
            parsed = parse(text, True)
        else:  # a fragment may be a run of sibling elements, which fast-xml-parser reads as one object
            wrapped = parse(f"<fragment>{text}</fragment>", False)["fragment"]
            parsed = wrapped if isinstance(wrapped, dict) else {}
            parsed.pop("#text", None)
    except XmlError as exc:
        return Verdict(False, str(exc), False)
    absent = missing(parsed, required)
    if absent:
        return Verdict(False, f"XML is missing required elements: {', '.join(absent)}", True)
    return Verdict(True, "XML is valid and contains all required elements", True)


# -- contains-xml: the candidate fragments of a text (promptfoo's extractXmlCandidates) ------------

@dataclass(frozen=True)
class Candidate:
    start: int
    end: int
    parent: int | None = None


def _tag_end(text: str, start: int) -> int:
    """The ``>`` closing a tag opened at ``start`` (quotes skipped); -1 at a ``<`` or the end."""
    quote = None
    for i in range(start + 1, len(text)):
        char = text[i]
        if quote:
            quote = None if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char == "<":
            return -1
        elif char == ">":
            return i
    return -1


def _delimited_end(text: str, start: int, delimiter: str) -> int:
    found = text.find(delimiter, start)
    return len(text) - 1 if found < 0 else found + len(delimiter) - 1


def _declaration_end(text: str, start: int) -> int:
    if text.startswith("<!--", start):
        return _delimited_end(text, start + 4, "-->")
    if text.startswith("<![CDATA[", start):
        return _delimited_end(text, start + 9, "]]>")
    quote, depth = None, 0
    for i in range(start + 2, len(text)):
        char = text[i]
        if quote:
            quote = None if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char == "[":
            depth += 1
        elif char == "]" and depth:
            depth -= 1
        elif char == ">" and not depth:
            return i
    return len(text) - 1


def _read_tag(text: str, start: int) -> tuple[str, int, str] | None:
    """(kind, end, name) of the tag at ``start``: opening, self-closing, closing or declaration."""
    following = text[start + 1:start + 2]
    if not following:
        return None
    if following == "!":
        return "declaration", _declaration_end(text, start), ""
    if following == "?":
        return "declaration", _delimited_end(text, start + 2, "?>"), ""
    closing = following == "/"
    name = _NAME.match(text, start + (2 if closing else 1))
    if not name:
        return None
    end = _tag_end(text, start)
    if end < 0:
        return None
    if closing:
        return "closing", end, name.group()
    return ("self-closing" if text[start:end].rstrip().endswith("/") else "opening"), end, name.group()


def candidates(text: str) -> list[Candidate]:
    """Balanced elements of ``text``, in promptfoo's order: runs of sibling elements (whose parent
    is not itself a candidate) as one fragment first, then the outermost elements."""
    stack: list[tuple[str, int]] = []
    found: list[Candidate] = []
    i = 0
    while i < len(text):
        if text[i] != "<":
            i += 1
            continue
        tag = _read_tag(text, i)
        if tag is None:
            i += 1
            continue
        kind, end, name = tag
        parent = stack[-1][1] if stack else None
        if kind == "self-closing":
            found.append(Candidate(i, end + 1, parent))
        elif kind == "opening":
            stack.append((name, i))
        elif kind == "closing":
            if stack and stack[-1][0] == name:
                _, open_at = stack.pop()
                found.append(Candidate(open_at, end + 1, stack[-1][1] if stack else None))
            else:
                stack.clear()
        i = end + 1
    return _order(found)


def _order(found: list[Candidate]) -> list[Candidate]:
    starts = {c.start for c in found}
    ordered: list[Candidate] = []
    seen: set[tuple[int, int]] = set()

    def add(candidate: Candidate) -> None:
        if (candidate.start, candidate.end) not in seen:
            seen.add((candidate.start, candidate.end))
            ordered.append(candidate)

    by_parent: dict[int | None, list[Candidate]] = {}
    for candidate in found:
        by_parent.setdefault(candidate.parent, []).append(candidate)
    for parent, siblings in by_parent.items():
        if len(siblings) <= 1 or (parent is not None and parent in starts):
            continue
        siblings = sorted(siblings, key=lambda c: (c.start, c.end))
        add(Candidate(siblings[0].start, siblings[-1].end, parent))
    for candidate in sorted((c for c in found if c.parent is None or c.parent not in starts),
                            key=lambda c: (c.start, -c.end)):
        add(candidate)
    return ordered


def contains(text: str, required: list[str] | None) -> Verdict:
    """promptfoo's ``containsXml``: some candidate is well-formed and has the required elements;
    candidates inside a well-formed one that lacked them are not tried."""
    found = candidates(text)
    if not found:
        return Verdict(False, "No XML content found in the output", False)
    containers: list[Candidate] = []
    for candidate in found:
        if any(candidate.start >= c.start and candidate.end <= c.end for c in containers):
            continue
        verdict = check(text[candidate.start:candidate.end], required, whole_document=False)
        if verdict.valid:
            return verdict
        if verdict.well_formed:
            containers.append(candidate)
    return Verdict(False, "No valid XML content found matching the requirements", False)
