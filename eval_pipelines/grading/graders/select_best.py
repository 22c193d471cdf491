"""``select_best`` (promptfoo's ``select-best``): the judge picks the best of a test's outputs.

promptfoo grades it after every output of a test exists (src/evaluator.ts, matchers
``matchesSelectBest``): the outputs of the same test across its prompts and providers
(one trial) go to the judge in one call with ``criteria``; the chosen output scores 1
and passes, every other output scores 0 and fails. Dispatch groups the outputs
(``Grader.compares``); a group of one output is an ``error`` grade (promptfoo: "must
have at least two outputs to compare between"). Every grade of the group stores the
judge's choice (``details.choice``, the index in ``details.outputs``), its reasoning,
the group's size and this output's ``position`` in it.

Our judge answers in JSON, so promptfoo's prompt is kept but the reply asked for is
``{"index": <n>, "reasoning": ...}`` instead of a bare integer.
"""

from __future__ import annotations

from typing import Any, Sequence

from pydantic import Field

from eval_pipelines.grading.base import CompareItem, Grader, GradeInput, Outcome, Params
from eval_pipelines.grading.graders import _judging as J

# promptfoo's SELECT_BEST_PROMPT (src/prompts), with our placeholders.
PROMPT = """\
You are comparing multiple pieces of text to see which best fits the following criteria: {criteria}

Here are the pieces of text:

{texts}

Output the index of the text that best fits the criteria."""

FORMAT = ('Respond with only a JSON object: {"index": <the index of the best text, an integer>, '
          '"reasoning": "<brief explanation>"}.')
ALONE = ("compares all outputs of a test (its prompts x providers); it cannot grade one output "
         "on its own (inside assert-set, a transform or an early verdict)")


class SelectBestParams(Params):
    criteria: str = Field(min_length=1)


class SelectBest(Grader[SelectBestParams]):
    type = "select_best"
    group = "model-graded"
    score_range = "0 or 1"
    needs_judge = True
    compares = True
    Params = SelectBestParams

    def grade(self, params: SelectBestParams, inp: GradeInput) -> Outcome:
        return Outcome(0.0, f"select_best {ALONE}", status="error")

    async def acompare(self, params: SelectBestParams,
                       items: Sequence[CompareItem]) -> list[Outcome]:
        n = len(items)
        judge = items[0].inp.judge if items else None
        if n < 2:
            return [Outcome(0.0, f"select_best needs at least two outputs of the test to compare, got {n}",
                            {"group_size": n}, status="error")] * n
        if judge is None:
            return [J.no_judge()] * n
        texts = "\n\n".join(f'<Text index="{i}">\n{inp.output}\n</Text>' for i, (_, inp, _) in enumerate(items))
        user = J.render(PROMPT, {"criteria": params.criteria, "texts": texts})

        def parse(data: dict[str, Any]) -> tuple[int, dict[str, Any]]:
            index = J.number(J.first_key(data, "index", "best", "choice"), '"index"')
            if index != int(index) or not 0 <= index < n:
                raise J.ReplyInvalid(f'"index" must be an integer from 0 to {n - 1}, got {index:g}')
            return int(index), data

        try:
            asked = await J.ask(judge, J.SYSTEM_PROMPT, J.with_format(user, FORMAT), parse,
                                temperature=0)
        except J.JudgeFailure as exc:
            return [J.failure(judge, exc, group_size=n)] * n
        choice, data = asked.value
        shared = {"choice": choice, "group_size": n, "judge_reasoning": J.feedback_of(data),
                  "outputs": [{"test_id": key[0], "target": key[1]} for key, _, _ in items],
                  **J.judge_details(judge, asked)}
        return [Outcome(1.0, f"Output selected as the best: {params.criteria}", {**shared, "position": i})
                if i == choice else
                Outcome(0.0, f"Output not selected: {params.criteria}", {**shared, "position": i})
                for i in range(n)]
