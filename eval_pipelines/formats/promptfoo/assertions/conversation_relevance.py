"""promptfoo's ``conversation-relevance`` assertion as our judge (``llm_judge``).

promptfoo (src/external/assertions/deepeval.ts, docs model-graded/conversation-relevance)
grades the test's ``_conversation`` variable when it holds turns (a list of
``{input, output}``), else the one turn (prompt, output). It makes one sliding window
per turn, the turn and up to ``config.windowSize - 1`` turns before it (default 5), asks
whether the window's last reply is relevant in that context, and scores the share of
relevant windows; the assertion passes when that share >= ``threshold`` (0.5 when
omitted, as its docs say). With ``_conversation``, the recorded turns are graded, not
the output under test: promptfoo does the same.

Our judge makes one call: the rubric lists the windows and asks for the same share, so
the judge's score is promptfoo's score and our threshold is promptfoo's.
"""

from __future__ import annotations

import json
from typing import Any

from eval_pipelines.formats.promptfoo.assertions.vocabulary import Refused

DEFAULT_WINDOW = 5
DEFAULT_THRESHOLD = 0.5
CONFIG_KEYS = {"windowSize"}
SINGLE_TURN = ("Conversation relevance: is the response relevant to the input in its conversational "
               "context? A vague response to a vague input (such as a greeting) counts as relevant. "
               "Score 1 when it is relevant, 0 when it is not.")
MULTI_TURN = ("Conversation relevance of the recorded conversation below (grade these turns only, not the "
              "response shown above). For each window, decide whether the assistant's LAST reply in the "
              "window is relevant given the turns in that window; a vague reply to a vague input (such as "
              "a greeting) counts as relevant. The score is the number of windows whose last reply is "
              "relevant divided by {count}, the number of windows.\n\n{windows}")


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _turns(conversation: Any) -> list[tuple[str, str]]:
    if not isinstance(conversation, list) or not all(isinstance(t, dict) for t in conversation):
        raise Refused("the `_conversation` variable must be a list of {input, output} turns")
    return [(_text(t.get("input", "")), _text(t.get("output", ""))) for t in conversation]


def conversation_relevance(raw: dict[str, Any], variables: dict[str, Any]) -> dict[str, Any]:
    config = raw.get("config") or {}
    if not isinstance(config, dict) or set(config) - CONFIG_KEYS:
        raise Refused("`config` may hold only `windowSize`")
    window = config.get("windowSize") or DEFAULT_WINDOW  # promptfoo: `windowSize || 5`
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise Refused("`config.windowSize` must be a whole number of turns, at least 1")
    threshold = raw.get("threshold", DEFAULT_THRESHOLD)
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 <= threshold <= 1:
        raise Refused("`threshold` must be a number from 0 to 1")
    conversation = variables.get("_conversation")
    if not conversation:
        return {"type": "llm_judge", "rubric": SINGLE_TURN, "threshold": threshold}
    turns = _turns(conversation)
    windows = []
    for i in range(len(turns)):
        lines = [f"User: {q}\nAssistant: {a}" for q, a in turns[max(0, i - window + 1):i + 1]]
        windows.append(f"Window {i + 1}:\n" + "\n".join(lines))
    rubric = MULTI_TURN.format(count=len(windows), windows="\n\n".join(windows))
    return {"type": "llm_judge", "rubric": rubric, "threshold": threshold}


# promptfoo types whose mapping reads the test's variables (promptfoo_asserts calls these).
WITH_VARIABLES = {"conversation-relevance": conversation_relevance}
