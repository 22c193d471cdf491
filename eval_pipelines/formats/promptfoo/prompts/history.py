"""promptfoo's ``_conversation`` variable: the earlier turns of the same conversation.

promptfoo (src/evaluator.ts ``attachConversationVar``, ``updateConversationHistory``) gives a
prompt that uses ``_conversation`` the turns run before it on the same provider with the same
prompt (and the same test ``metadata.conversationId``, when one is set), each
``{prompt, input, output}``: the rendered prompt (parsed when it is a JSON chat), its last
message's content, the answer (``output || ''``). It runs those evals one at a time, in test order.

Here a prompt is rendered when the suite loads, before any answer exists. So an earlier answer
stands in as ``output_mark(case id)``, the case names its earlier turns in ``TestCase.after``,
and the model phase sends it only once those turns have answered on the same target and trial,
with the marks replaced (``suite.models.with_answers``); graders see the filled case. A turn
whose call failed gives "", as in promptfoo. Unlike promptfoo, each trial (``repeat``) is its
own conversation: promptfoo's key has no repeat index, so its repeats would share one history.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from eval_pipelines.suite.models import Message, output_mark

VARIABLE = "_conversation"


class JsList(list):  # type: ignore[type-arg]
    """A list that answers ``.length`` as a JavaScript array does: promptfoo's own example
    writes ``completion.prompt[completion.prompt.length - 1].content`` in its Nunjucks template."""

    @property
    def length(self) -> int:
        return len(self)


class JsStr(str):
    """A string that answers ``.length`` as JavaScript's does. promptfoo's older multi-turn
    example indexes ``completion.input[completion.input.length - 1].content``: in JavaScript that
    is the last character's (absent) ``content``, so the message renders empty, and so it does here."""

    @property
    def length(self) -> int:
        return len(self)


@dataclass
class Turn:
    case_id: str
    prompt: Any  # the rendered prompt: JsList of {role, content} for a chat, else its text
    input: str


@dataclass
class Conversations:
    """The turns met so far, by conversation: (prompt label, conversationId, targets)."""

    turns: dict[tuple[str, str | None, tuple[str, ...] | None], list[Turn]] = field(default_factory=dict)

    @staticmethod
    def key(prompt_label: str, metadata: dict[str, Any], targets: list[str] | None
            ) -> tuple[str, str | None, tuple[str, ...] | None]:
        conversation = metadata.get("conversationId")
        return (prompt_label, None if conversation is None else str(conversation),
                None if targets is None else tuple(targets))

    def variable(self, key: tuple[str, str | None, tuple[str, ...] | None]) -> JsList:
        """The ``_conversation`` value a new turn of ``key`` is rendered with."""
        return JsList({"prompt": t.prompt, "input": JsStr(t.input), "output": output_mark(t.case_id)}
                      for t in self.turns.get(key, []))

    def earlier(self, key: tuple[str, str | None, tuple[str, ...] | None]) -> list[str]:
        return [t.case_id for t in self.turns.get(key, [])]

    def add(self, key: tuple[str, str | None, tuple[str, ...] | None], case_id: str, messages: list[Message],
            chat: bool) -> None:
        if chat:
            prompt: Any = JsList({"role": m.role, "content": m.content} for m in messages)
            text = messages[-1].content if messages else ""
        else:
            prompt = text = "\n".join(m.content for m in messages)
        self.turns.setdefault(key, []).append(Turn(case_id, prompt, text))
