"""``with_provider`` (promptfoo's per-assertion ``provider``): grade the nested assertion with
another judge / embedding model than the suite's.

promptfoo lets a model-graded assertion name its own grading provider (``provider:
openai:gpt-4o``, ``openai:embedding:text-embedding-3-small``, ``./customProvider.js``);
``getAndCheckProvider`` then grades through it instead of the default. Here:

* ``openai``: an OpenAI-compatible target mapping (built by the promptfoo loader from the
  id and its ``config`` exactly as a suite provider: ``apiBaseUrl``, ``apiKeyEnvar``, else
  ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` from the environment); its model is the judge
  model, and for ``openai:embedding:MODEL`` also the embedding model;
* ``unavailable``: none (a by-kind provider lacking the kind the type asks for): every grade is
  an error saying so, as promptfoo's assertion fails;
* ``script``: a JavaScript or Python provider file (relative to the suite's folder), run in
  the sandbox for each grade (``_provider_script``): ``callEmbeddingApi`` for
  ``semantic_sim``, ``callApi`` for judges. It gets no secrets and no network.

The grade is the nested assertion's (its negation and pass mark applied), with
``details.grading_provider`` naming the provider as written.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any

from pydantic import ConfigDict, Field, model_validator

from eval_pipelines.grading.base import Grader, GradeInput, Outcome, Params
from eval_pipelines.run.targets.config import OpenAITargetConfig, connection


class GradingProvider(Params):
    ref: str = Field(min_length=1)  # the provider as the config wrote it
    openai: dict[str, Any] | None = None
    script: str | None = None
    # Why promptfoo finds no provider for this assertion (a by-kind provider without the kind it
    # asks for): promptfoo's getGradingProvider throws, so the assertion fails there; an error grade here.
    unavailable: str | None = None
    embedding_model: str | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> "GradingProvider":
        if [self.openai, self.script, self.unavailable].count(None) != 2:
            raise ValueError("a grading provider is one of `openai` (a target mapping), `script` (a file) "
                             "or `unavailable` (the reason there is none)")
        if self.openai is not None:
            OpenAITargetConfig.model_validate(self.openai)
        return self


class WithProviderParams(Params):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    provider: GradingProvider
    assert_: dict[str, Any] = Field(alias="assert")


class WithProvider(Grader[WithProviderParams]):
    type = "with_provider"
    group = "composite"  # section of docs/assertions.md
    Params = WithProviderParams

    def nested_assertions(self, params: WithProviderParams) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
        return [(("assert",), params.assert_)]

    def grade(self, params: WithProviderParams, inp: GradeInput) -> Outcome:
        import asyncio

        return asyncio.run(self.agrade(params, inp))

    async def agrade(self, params: WithProviderParams, inp: GradeInput) -> Outcome:
        spec = params.provider
        if spec.unavailable is not None:
            return Outcome(0.0, spec.unavailable, {"grading_provider": spec.ref}, status="error")
        if spec.script is not None:
            from pathlib import Path

            from eval_pipelines.grading.graders._provider_script import ScriptProviderJudge

            judge: Any = ScriptProviderJudge((inp.suite_dir or Path.cwd()) / spec.script, spec.ref)
        else:
            from eval_pipelines.grading.judge import OpenAIJudge

            # Written in the suite: its key goes only to hosts the operator trusts (key_policy.py).
            config = OpenAITargetConfig.model_validate({**spec.openai, "declared_by": "suite"})
            reached = connection(config, os.environ)  # secrets: from the environment only
            if not (reached.api_key or reached.base_url):  # never a silent switch to another model (the local embedder)
                return Outcome(0.0, f"grading provider {spec.ref}: neither {config.api_key_env} nor a base URL "
                               f"({config.base_url_env}) is set", {"grading_provider": spec.ref}, status="error")
            judge = OpenAIJudge(config, **reached._asdict(), embedding_model=spec.embedding_model)
        try:
            assert inp.grade_nested is not None  # set by grading.dispatch
            grade = await inp.grade_nested(dict(params.assert_), 0, replace(inp, judge=judge, grade_nested=None))
        finally:
            await judge.aclose()
        # The nested grade is final (its own negation and pass mark applied): passed through.
        return Outcome(grade.score, grade.reason,
                       {**grade.details, "grading_provider": spec.ref, "nested_passed": grade.passed},
                       status=grade.status, calibrated=grade.calibrated_score)
