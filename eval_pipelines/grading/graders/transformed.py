"""``transformed`` (promptfoo's ``transform``): grade a nested assertion on the output as
rewritten by one or more transforms, applied in order (a test's ``options.transform``,
then the assertion's own ``transform``).

A transform is promptfoo's: a JavaScript expression or function body of ``output``
and ``context`` (``JSON.parse(output)``, ``output[0].function.name``), or a
``file://`` JavaScript file (its export, or ``file://x.js:fn``) or Python file
(``get_transform``, or ``:fn``). It runs in the sandbox like the ``javascript``
and ``python`` assertions (``_script_assert``). A string result is the new output;
any other value is passed on as its JSON text, and a nested ``javascript`` or
``python`` assertion receives it parsed, as promptfoo hands assertions the
transformed value. The grade is the nested assertion's (score, reason, details);
``details.transformed_output`` holds the text it was graded on.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from pydantic import ConfigDict, Field

from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params
from eval_pipelines.grading.graders._script_assert import is_tool_call_output, run_transform


class TransformedParams(Params):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    transform: list[str] = Field(min_length=1)
    assert_: dict[str, Any] = Field(alias="assert")
    timeout_ms: int = Field(default=30_000, gt=0)


class Transformed(Grader[TransformedParams]):
    type = "transformed"
    group = "composite"  # section of docs/assertions.md
    Params = TransformedParams

    def nested_assertions(self, params: TransformedParams) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
        return [(("assert",), params.assert_)]

    def grade(self, params: TransformedParams, inp: GradeInput) -> Outcome:
        import asyncio

        return asyncio.run(self.agrade(params, inp))

    async def agrade(self, params: TransformedParams, inp: GradeInput) -> Outcome:
        value: Any = inp.output
        if is_tool_call_output(inp):  # the calls, as promptfoo's transform gets them
            try:
                value = json.loads(inp.output)
            except (TypeError, ValueError):
                pass
        for code in params.transform:
            ok, value = await run_transform(code, value, inp, params.timeout_ms)
            if not ok:
                return Outcome(0.0, f"transform failed: {value}", {"transform": code}, status="error")
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        inner = dict(params.assert_)
        if not isinstance(value, str) and str(inner.get("type")) in ("javascript", "python"):
            inner["output_json"] = True
        assert inp.grade_nested is not None  # set by grading.dispatch
        grade = await inp.grade_nested(inner, 0, replace(inp, output=text, grade_nested=None))
        # The nested grade is final (its own negation and pass mark applied); this outer
        # assertion carries no negation of its own, so the score passes through unchanged.
        return Outcome(grade.score, grade.reason,
                       {**grade.details, "transformed_output": text[:2000], "nested_passed": grade.passed},
                       status=grade.status, calibrated=grade.calibrated_score)
