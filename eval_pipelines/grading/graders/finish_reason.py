"""``finish_reason`` (promptfoo's ``finish-reason``, src/assertions/finishReason.ts): why the
model stopped, as its provider said (the stored ``model_outputs.finish_reason``).

promptfoo's providers first normalise the provider's reason (src/util/finishReason.ts):
trimmed, lower-cased, then mapped onto OpenAI's values (``end_turn``/``stop_sequence`` ->
``stop``, ``max_tokens``/``max_output_tokens``/``model_context_window_exceeded`` ->
``length``, ``tool_use``/``function_call``/``tool-calls`` -> ``tool_calls``,
``refusal``/``content-filter`` -> ``content_filter``; anything else as it is). The assertion
passes when that equals ``value`` lower-cased: score 1, else 0. No finish reason (a command
target, a replay without one, an error row) fails with "Provider did not supply stop/finish
reason", as promptfoo's does.
"""

from __future__ import annotations

from pydantic import Field

from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params

# promptfoo's FINISH_REASON_MAP (src/util/finishReason.ts).
NORMALISED = {
    "function_call": "tool_calls", "max_output_tokens": "length", "end_turn": "stop", "stop_sequence": "stop",
    "max_tokens": "length", "model_context_window_exceeded": "length", "tool_use": "tool_calls",
    "refusal": "content_filter", "tool-calls": "tool_calls", "content-filter": "content_filter",
}


def normalise(raw: str | None) -> str | None:
    key = (raw or "").strip().lower()
    return NORMALISED.get(key, key) or None


class FinishReasonParams(Params):
    value: str = Field(min_length=1)


class FinishReason(Grader[FinishReasonParams]):
    type = "finish_reason"
    group = "measurements"  # section of docs/assertions.md
    score_range = "0 or 1"
    Params = FinishReasonParams

    def grade(self, params: FinishReasonParams, inp: GradeInput) -> Outcome:
        raw = inp.measurements.finish_reason
        got = normalise(raw)
        if got is None:
            return Outcome.binary(False, "Provider did not supply stop/finish reason", finish_reason=None)
        ok = got == params.value.lower()
        reason = (f"finish reason {got!r}" if ok else
                  f"Expected finish reason {params.value!r} but got {got!r}")
        return Outcome.binary(ok, reason, finish_reason=raw, normalised=got, expected=params.value)
