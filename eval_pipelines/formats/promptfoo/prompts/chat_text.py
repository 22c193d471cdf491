"""Two things promptfoo does to a prompt's text that are not Nunjucks itself.

* ``auto_wrap_raw``: a prompt holding a partial template tag (a ``{%``, ``{{`` or ``{#`` that is not
  closed on its line) is wrapped in ``{% raw %}...{% endraw %}`` and so sent verbatim
  (src/evaluatorHelpers.ts ``autoWrapRawIfPartialNunjucks``, promptfoo 0.121), instead of failing.
* ``yaml_chat``: a rendered prompt starting with ``- role:`` is read as YAML chat messages
  (src/providers/shared.ts ``parseChatPrompt``, which promptfoo's OpenAI chat provider calls on every
  prompt), so a ``.txt`` prompt file holding ``- role: system`` lines is a system and a user message.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

# The same pattern as promptfoo's (JavaScript's /m: `$` is any line end).
_PARTIAL_TAG = re.compile(r"({%[^%]*$|{{[^}]*$|{#[^#]*$)", re.M)
_RAW = re.compile(r"{%\s*raw\s*%}")
_ENDRAW = re.compile(r"{%\s*endraw\s*%}")


def auto_wrap_raw(template: str) -> str:
    if _PARTIAL_TAG.search(template) and not (_RAW.search(template) and _ENDRAW.search(template)):
        return "{% raw %}" + template + "{% endraw %}"
    return template


def yaml_chat(text: str) -> Any:
    """The messages of a ``- role:`` prompt (None when it is not one); raises ValueError when it
    starts like one but is not YAML (promptfoo: "Chat Completion prompt is not a valid YAML string")."""
    if not text.strip().startswith("- role:"):
        return None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError(f"a `- role:` prompt is not valid YAML: {str(exc).splitlines()[0]}") from exc
