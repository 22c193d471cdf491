"""``contains_sql`` (promptfoo ``contains-sql``): ``is_sql`` on the first fenced code block of the
output (```` ```sql ... ``` ```` or a bare fence), or on the whole output when it has none.
"""

from __future__ import annotations

from eval_pipelines.grading.base import Grader, GradeInput, Outcome
from eval_pipelines.grading.graders import _sql
from eval_pipelines.grading.graders.is_sql import SqlParams, check_sql


class ContainsSql(Grader[SqlParams]):
    type = "contains_sql"
    group = "structured"  # section of docs/assertions.md
    score_range = "0 or 1"
    Params = SqlParams

    def grade(self, params: SqlParams, inp: GradeInput) -> Outcome:
        return check_sql(params, _sql.extract(inp.output))
