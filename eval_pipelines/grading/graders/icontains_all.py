"""``icontains_all`` (AgentV ``icontains-all``): the output contains every value, ignoring case.

Case is folded with ``str.casefold`` on both sides. The score is 1 when every
value occurs, else 0; ``details.missing`` lists the values that do not.
"""

from __future__ import annotations

from eval_pipelines.grading.base import Grader, GradeInput, Outcome
from eval_pipelines.grading.graders.icontains_any import ICaseValuesParams, found_in


class IContainsAll(Grader[ICaseValuesParams]):
    type = "icontains_all"
    group = "deterministic text"  # section of docs/assertions.md
    score_range = "0 or 1"
    aliases = ()  # `icontains-all` is the same name: the registry reads - as _
    Params = ICaseValuesParams

    def grade(self, params: ICaseValuesParams, inp: GradeInput) -> Outcome:
        _, missing = found_in(params, inp.output)
        if missing:
            return Outcome.binary(False, f"missing {missing!r} (ignoring case)", missing=missing)
        return Outcome.binary(True, f"contains all of {params.values!r} (ignoring case)")
