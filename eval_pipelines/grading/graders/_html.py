"""HTML detection shared by ``is_html`` and ``contains_html`` (promptfoo's src/assertions/html.ts).

``contains``: promptfoo's indicator count (at least 2 of: paired tags 2 / one kind of tag 1,
a self-closing tag 1, an entity 1, ``<!DOCTYPE html`` 2, a comment 1, a quoted attribute 1,
a common tag name 2). ``validate``: the output parsed as an HTML5 document (html5lib, the
WHATWG algorithm jsdom's parse5 also follows) must not leave text beside its elements in the
body, and must hold a known HTML5 element (or a custom one, with a hyphen).
"""

from __future__ import annotations

import re

MAX_INPUT = 10 * 1024 * 1024  # promptfoo's limit: larger outputs are not HTML

_OPENING = re.compile(r"<[a-zA-Z][a-zA-Z0-9-]*(?:\s[^>]*)?>")
_CLOSING = re.compile(r"</[a-zA-Z][a-zA-Z0-9-]*\s*>")
_SELF_CLOSING = re.compile(r"<[a-zA-Z][a-zA-Z0-9-]*(?:\s[^>]*)?/>")
_ENTITY = re.compile(r"&(?:[a-zA-Z]+|#[0-9]+|#x[0-9a-fA-F]+);")
_DOCTYPE = re.compile(r"<!DOCTYPE\s+html", re.IGNORECASE)
_COMMENT = re.compile(r"<!--[^-]*(?:-[^-]+)*-->")
_ATTRIBUTE = re.compile(r"\s[a-zA-Z-]+=\s*[\"'][^\"']*[\"']")
_COMMON_TAG = re.compile(r"<(html|head|body|div|span|p|a|img|h[1-6]|ul|ol|li|table|tr|td|th|form|input|button|"
                         r"script|style|link|meta|br|hr)\b", re.IGNORECASE)

# HTML5 elements promptfoo recognises (obsolete ones left out), by its groups.
ELEMENTS = frozenset("""
html head title base link meta style
body article section nav aside h1 h2 h3 h4 h5 h6 header footer address
p hr pre blockquote ol ul li dl dt dd figure figcaption main div
a em strong small s cite q dfn abbr ruby rt rp data time code var samp kbd sub sup i b u mark bdi bdo span br wbr
img iframe embed object param picture source video audio track map area
svg math script noscript canvas ins del
table caption colgroup col tbody thead tfoot tr td th
form label input button select datalist optgroup option textarea output progress meter fieldset legend
details summary dialog menu slot template
""".split())


def indicators(text: str) -> int:
    opening, closing = bool(_OPENING.search(text)), bool(_CLOSING.search(text))
    count = 2 if opening and closing else int(opening or closing)
    count += sum(1 for pattern in (_SELF_CLOSING, _ENTITY, _COMMENT, _ATTRIBUTE) if pattern.search(text))
    count += 2 * sum(1 for pattern in (_DOCTYPE, _COMMON_TAG) if pattern.search(text))
    return count


def contains(text: str) -> bool:
    return len(text) <= MAX_INPUT and indicators(text) >= 2


def validate(text: str) -> tuple[bool, str]:
    """(is HTML, promptfoo's reason)."""
    trimmed = text.strip()
    if not trimmed:
        return False, "Output is empty"
    if len(trimmed) > MAX_INPUT:
        return False, "Output exceeds maximum size limit"
    if re.match(r"\s*<\?xml", trimmed, re.IGNORECASE):
        return False, "Output appears to be XML, not HTML"
    import html5lib

    document = html5lib.parse(trimmed, treebuilder="etree", namespaceHTMLElements=False)
    lowered = trimmed.lower()
    body = document.find("body")
    if body is not None and "<body" not in lowered:
        # The parser wrapped a fragment in a body: text beside the elements is not HTML.
        texts = [body.text] + [child.tail for child in body]
        if any(t and t.strip() for t in texts):
            return False, "Output must be wrapped in HTML tags"
    for element in document.iter():
        if not isinstance(element.tag, str):  # comments
            continue
        tag = element.tag.rsplit("}", 1)[-1].lower()
        if tag in ("html", "head", "body") and f"<{tag}" not in lowered:
            continue  # added by the parser, not written
        if tag in ELEMENTS or "-" in tag:
            return True, "Output is valid HTML"
    return False, "Output does not contain recognized HTML elements"
