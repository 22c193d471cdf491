"""``trajectory_goal_success`` (promptfoo's ``trajectory:goal-success``, src/assertions/trajectory.ts
and ``matchesTrajectoryGoalSuccess`` in src/matchers/llmGrading.ts): the judge model decides
whether the agent achieved ``goal``, from its final output and a summary of its trajectory.

As promptfoo: one judge call given the goal, the trajectory summarised as
``{stepCount, steps: [{index, type, name}]}`` (our steps are the run's recorded tool calls,
see ``_trajectory_steps``) and the output; the judge answers ``{reason, pass, score}``, told
to judge end-to-end success rather than style, to use the trajectory as evidence of what the
agent did, and to give partial credit for progress. The assertion passes when the judge
says ``pass`` and, with a ``threshold``, the score reaches it. Negated
(``not-trajectory:goal-success``) it passes when the goal was not achieved; a judge failure
is an ``error`` grade either way, never flipped into a pass. The grade score is the judge's
score; ``details`` has ``judge_pass``, ``score``, ``reasoning``, ``trajectory``.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params
from eval_pipelines.grading.graders import _judging as J
from eval_pipelines.grading.graders._trajectory_spans import steps_of
from eval_pipelines.grading.graders._trajectory_steps import summary

SYSTEM = ("You grade whether an AI agent achieved a goal, from its final output and a summary of the "
          "steps it took. Judge end-to-end success, not style. Use the trajectory as evidence of what "
          "the agent actually did. Give partial credit when the agent made progress without fully "
          "achieving the goal. Answer with one JSON object: "
          '{"reason": string, "pass": boolean, "score": number between 0 and 1}.')
USER = "<Goal>\n{goal}\n</Goal>\n<Trajectory>\n{trajectory}\n</Trajectory>\n<Output>\n{output}\n</Output>"


class GoalSuccessParams(Params):
    goal: str = Field(min_length=1)
    threshold: float | None = Field(default=None, ge=0, le=1)
    temperature: float | None = Field(default=0.0, ge=0, le=2)


def _parse(data: dict[str, Any]) -> tuple[bool, float, str]:
    verdict = data.get("pass")
    if not isinstance(verdict, bool):
        raise J.ReplyInvalid('the reply has no boolean "pass"')
    score = J.in_range(data["score"], 0.0, 1.0, '"score"') if "score" in data else (1.0 if verdict else 0.0)
    return verdict, score, J.feedback_of(data)


class TrajectoryGoalSuccess(Grader[GoalSuccessParams]):
    type = "trajectory_goal_success"
    group = "model-graded"  # section of docs/assertions.md
    needs_judge = True
    Params = GoalSuccessParams

    async def agrade(self, params: GoalSuccessParams, inp: GradeInput) -> Outcome:
        judge = inp.judge
        if judge is None:
            return J.no_judge()
        trajectory = summary(inp.trace, steps_of(inp))  # a traced run's spans when it recorded no tool calls
        user = J.render(USER, {"goal": params.goal, "trajectory": trajectory, "output": inp.output})
        try:
            asked = await J.ask(judge, SYSTEM, user, _parse, temperature=params.temperature)
        except J.JudgeFailure as exc:
            return J.failure(judge, exc, trajectory=trajectory)
        verdict, score, reason = asked.value
        passed = verdict and (params.threshold is None or score >= params.threshold)
        details = {**J.judge_details(judge, asked), "judge_pass": verdict, "score": score,
                   "threshold": params.threshold, "reasoning": reason, "trajectory": trajectory, "passed": passed}
        return Outcome(score, f"goal {'achieved' if passed else 'not achieved'} (score {score:g}): "
                              f"{J.shorten(reason, 300)}", details, passed=passed)
