"""Small projects for field tests: a skill with a suite, targets.yaml pointing at the
fake OpenAI server, and the fake server answering as a model and as a judge."""

from __future__ import annotations

import json
from pathlib import Path
from textwrap import dedent
from typing import Any

from eval_pipelines.store.connection import connect
from tests.support.fake_openai import FakeOpenAIServer, last_user_message

JUDGE_REPLY = json.dumps({"score": 1.0, "passed": True, "reasoning": "meets the criteria"})


class Models:
    """The fake server answering as a model (``replies`` by user message, else an echo)
    and as the judge (any prompt that shows the system output gets a passing score)."""

    def __init__(self, server: FakeOpenAIServer) -> None:
        self.server = server
        self.replies: dict[str, Any] = {}
        server.responder = self.answer

    def answer(self, body: dict[str, Any]) -> Any:
        text = last_user_message(body)
        if "## System Output" in text:
            return JUDGE_REPLY
        reply = self.replies.get(text, text)
        return reply.pop(0) if isinstance(reply, list) else reply

    def chat_requests(self, *, judge: bool = False) -> list[dict[str, Any]]:
        return [r for r in self.server.requests if r and "messages" in r
                and ("## System Output" in last_user_message(r)) == judge]


PROJECT_TARGETS = """\
targets:
  - name: default
    type: openai
    model: gpt-test
    api_key_env: OPENAI_API_KEY
    base_url_env: OPENAI_BASE_URL
    max_retries: 0
"""


def make_skill(root: Path, files: dict[str, str], name: str = "fx", version: str = "1.0.0") -> Path:
    """``root/skills/<name>/<version>/`` with SKILL.md and ``files``; the project's targets.yaml."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "targets.yaml").write_text(PROJECT_TARGETS)
    skill = root / "skills" / name / version
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(f"---\nname: {name}\ndescription: d\nversion: {version}\n---\nBe brief.\n")
    for path, text in files.items():
        (skill / path).parent.mkdir(parents=True, exist_ok=True)
        (skill / path).write_text(dedent(text))
    return skill


TESTS_JSON = {
    "version": "2.0",
    "profile": "deterministic",
    "settings": {},
    "testCases": [
        {"id": "tc-001", "name": "first", "input": {"prompt": "alpha"}, "expected": {"output": "alpha"}},
        {"id": "tc-002", "name": "second", "input": {"prompt": "beta"}, "expected": {"output": "beta"}},
        {"id": "tc-003", "name": "third", "input": {"prompt": "gamma"}, "expected": {"output": "gamma"}},
    ],
}


def suite_json(**changes: Any) -> str:
    data = json.loads(json.dumps(TESTS_JSON))
    for key, value in changes.items():
        data[key] = value
    return json.dumps(data, indent=2)


def sql(db: Path, query: str, params: list[Any] | None = None) -> list[tuple]:
    with connect(db) as con:
        return con.execute(query, params or []).fetchall()


PER_TEST_EXECUTION = """\
execution:
  targets: [default, alt]
  trials: 3
tests:
  - id: once
    input: one
    execution: {trials: 1}
    assert: [{type: contains, value: one}]
  - id: thrice
    input: three
    assert: [{type: contains, value: three}]
  - id: own-evaluator
    input: four
    execution:
      evaluators: [{type: equals, value: four}]
  - id: fresh
    input: five
    execution: {cache: false, trials: 1}
    assert: [{type: contains, value: five}]
"""
ALT_TARGET = PROJECT_TARGETS.replace("default", "alt")


HARNESS_TRIALS = """\
eval_suite:
  name: trials-suite
  environment: staging
  config: {trials: 3}
  thresholds: {pass_hat_3: 0.5}
  evals:
    - id: greet
      input: {type: prompt, content: hello}
      expected_output: {type: contains, value: hello}
      grader: {type: code}
"""


REPORTING = """\
eval_suite:
  name: reported
  reporting:
    format: [json, markdown]
    output_dir: eval-results
    include_details: false
    notify_on_failure: true
  evals:
    - id: greet
      input: {type: prompt, content: hello}
      expected_output: {type: contains, value: hello}
      grader: {type: code}
"""
