"""``output_file``: grade a file an agent target wrote in its workspace, not the answer.

The one way to assert on an agent run's output files (docs/agent-targets.md)::

    - type: output_file
      path: out/report.json          # relative to the workspace
      assert: {type: is_json}        # optional: any assertion, graded on the file's text
    - type: output_file
      path: out/report.json
      equals_file: fixtures/report.json   # optional: the same bytes as this file (beside the suite)

With neither ``assert`` nor ``equals_file`` the file's existence is graded: it passes when the run
created or changed ``path``. ``assert`` takes any assertion (contains, regex, is_json, json_schema,
equals, a judge, ...): its grade, given the file's stored text instead of the answer, is this one's.
A file that was not written fails (score 0); a binary file has no text, so a nested assertion on it
is an error (``equals_file`` compares its sha256). Only files the run created or changed are output
files: an input file left as it was is not one. Other targets write no files: always a failure.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import ConfigDict, Field, field_validator

from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params


class OutputFileParams(Params):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    path: str = Field(min_length=1)
    assert_: dict[str, Any] | None = Field(default=None, alias="assert")
    equals_file: str | None = None

    @field_validator("path")
    @classmethod
    def _relative(cls, value: str) -> str:
        pure = PurePosixPath(value.strip().removeprefix("./"))
        if pure.is_absolute() or ".." in pure.parts:
            raise ValueError("a path relative to the agent's workspace, without '..'")
        return pure.as_posix()


class OutputFile(Grader[OutputFileParams]):
    type = "output_file"
    group = "agent"  # section of docs/assertions.md
    score_range = "0..1"
    Params = OutputFileParams

    def nested_assertions(self, params: OutputFileParams) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
        return [(("assert",), params.assert_)] if params.assert_ is not None else []

    def grade(self, params: OutputFileParams, inp: GradeInput) -> Outcome:
        import asyncio

        return asyncio.run(self.agrade(params, inp))

    async def agrade(self, params: OutputFileParams, inp: GradeInput) -> Outcome:
        found = next((f for f in inp.files if f.get("path") == params.path), None)
        written = sorted(str(f.get("path")) for f in inp.files)
        if found is None:
            return Outcome(0.0, f"{params.path} was not written (files written: {', '.join(written) or 'none'})",
                           {"path": params.path, "files": written})
        details = {"path": params.path, "size": found.get("size"), "sha256": found.get("sha256")}
        if params.equals_file is not None:
            fixture = Path(inp.suite_dir or ".") / params.equals_file
            try:
                expected = hashlib.sha256(fixture.read_bytes()).hexdigest()
            except OSError as exc:
                return Outcome(0.0, f"cannot read {params.equals_file}: {exc.strerror or exc}", details, status="error")
            same = expected == found.get("sha256")
            return Outcome(1.0 if same else 0.0, f"{params.path} {'equals' if same else 'differs from'} "
                           f"{params.equals_file}", {**details, "expected_sha256": expected})
        if params.assert_ is None:
            return Outcome(1.0, f"{params.path} was written ({found.get('size')} bytes)", details)
        if found.get("text") is None:
            return Outcome(0.0, f"{params.path} is a binary file: it has no text to grade", details, status="error")
        assert inp.grade_nested is not None  # set by grading.dispatch
        grade = await inp.grade_nested(dict(params.assert_), 0, replace(inp, output=found["text"], grade_nested=None))
        # The nested grade is final (its own negation and pass mark applied): passed through unchanged.
        return Outcome(grade.score, f"{params.path}: {grade.reason}",
                       {**details, **grade.details, "nested_passed": grade.passed}, status=grade.status)
