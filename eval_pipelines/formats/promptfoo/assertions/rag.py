"""promptfoo's RAG assertions as our judge (``llm_judge``): context-recall, context-relevance
and context-faithfulness.

promptfoo (src/assertions/contextRecall.ts, contextRelevance.ts, contextFaithfulness.ts;
contextUtils.ts ``resolveContext``) reads the retrieved context from the test's ``context``
variable (context-recall falls back to the prompt); relevance and faithfulness also need the
user's question in a ``query`` variable. Its grader splits a text into sentences or claims and
marks each one; the score is the share marked, and the assertion passes when the score reaches
``threshold``, 0 when omitted (so without one it only records the score):

- context-recall: the sentences of ``value`` (the expected answer) that the context supports;
- context-relevance: the sentences of the context needed to answer the query;
- context-faithfulness: the claims of the output that the context supports.

Our judge makes one call with a rubric that states the same procedure and score, so its score
is promptfoo's score and our threshold is promptfoo's. ``contextTransform`` (a JavaScript
extraction of the context from the response) is refused.
"""

from __future__ import annotations

from typing import Any, Callable

from eval_pipelines.formats.promptfoo.assertions.vocabulary import Refused

RECALL = ("Context recall. Split the REFERENCE ANSWER below into its sentences. For each sentence, "
          "decide whether the CONTEXT below supports it (it can be attributed to the context). "
          "The score is the number of supported sentences divided by the number of sentences "
          "(ignore the response shown above).\n\nREFERENCE ANSWER:\n{value}\n\nCONTEXT:\n{context}")
RELEVANCE = ("Context relevance. Split the CONTEXT below into its sentences. For each sentence, decide "
             "whether it is needed to answer the QUERY. The score is the number of needed sentences "
             "divided by the number of sentences in the context (ignore the response shown above)."
             "\n\nQUERY:\n{query}\n\nCONTEXT:\n{context}")
FAITHFULNESS = ("Context faithfulness. Break the response above (the answer to the QUERY) into its "
                "factual claims. For each claim, decide whether the CONTEXT below supports it. The "
                "score is the number of supported claims divided by the number of claims; a response "
                "with no claims scores 1.\n\nQUERY:\n{query}\n\nCONTEXT:\n{context}")


def _threshold(raw: dict[str, Any]) -> float:
    threshold = raw.get("threshold", 0)  # promptfoo: `assertion.threshold ?? 0`
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 <= threshold <= 1:
        raise Refused("`threshold` must be a number from 0 to 1")
    return float(threshold)


def _variable(variables: dict[str, Any], name: str, kind: str) -> str:
    value = variables.get(name)
    if not isinstance(value, str) or not value:
        raise Refused(f"{kind} needs a `{name}` variable holding text (promptfoo's resolveContext)")
    return value


def _common(raw: dict[str, Any]) -> None:
    if "contextTransform" in raw:
        raise Refused("`contextTransform` (a JavaScript extraction of the context) is not supported")
    if raw.get("config"):
        raise Refused("`config` is not supported on context assertions")


def context_recall(raw: dict[str, Any], variables: dict[str, Any]) -> dict[str, Any]:
    _common(raw)
    if not isinstance(raw.get("value"), str) or not raw["value"]:
        raise Refused("context-recall needs `value`: the expected answer or fact")
    context = variables.get("context")
    if not isinstance(context, str) or not context:
        # promptfoo falls back to the prompt: the judge sees the case's input as the context
        context = "(no `context` variable: use the input given to the system, shown above, as the context)"
    rubric = RECALL.format(value=raw["value"], context=context)
    return {"type": "llm_judge", "rubric": rubric, "threshold": _threshold(raw)}


def _on_query_and_context(kind: str, rubric: str) -> Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]:
    """context-relevance and context-faithfulness: a judge over the `query` and `context` variables."""
    def build(raw: dict[str, Any], variables: dict[str, Any]) -> dict[str, Any]:
        _common(raw)
        query = _variable(variables, "query", kind)
        context = _variable(variables, "context", kind)
        return {"type": "llm_judge", "rubric": rubric.format(query=query, context=context),
                "threshold": _threshold(raw)}
    return build


RAG_TYPES: dict[str, Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]] = {
    "context-recall": context_recall,
    "context-relevance": _on_query_and_context("context-relevance", RELEVANCE),
    "context-faithfulness": _on_query_and_context("context-faithfulness", FAITHFULNESS),
}
