"""``javascript`` (promptfoo): a JavaScript expression, function body or file, run by Node in the sandbox.

See ``_script_assert`` for how the code is called and how its result is read.
"""

from __future__ import annotations

from eval_pipelines.grading.base import Grader, GradeInput, Outcome
from eval_pipelines.grading.graders._script_assert import ScriptAssertParams, run_script_assert


class JavaScriptAssert(Grader[ScriptAssertParams]):
    type = "javascript"
    aliases = ("js",)
    group = "executed"  # section of docs/assertions.md
    Params = ScriptAssertParams

    def grade(self, params: ScriptAssertParams, inp: GradeInput) -> Outcome:
        import asyncio

        return asyncio.run(self.agrade(params, inp))

    async def agrade(self, params: ScriptAssertParams, inp: GradeInput) -> Outcome:
        return await run_script_assert("javascript", params, inp)
