"""AgentV's live multi-turn tests: ``mode: conversation`` with ``turns``.

What AgentV does (``examples/features/multi-turn-conversation-live``, ``conversation-mode.test.ts``):
each turn's ``input`` is sent as a new user message after the test's ``input`` (its system prompt)
and the earlier turns with the answers the target gave them, one model call per turn; each turn's
``assert`` (a plain string is a rubric criterion) and ``expected_output`` grade that turn's answer
(scores ``turn-1``, ``turn-2``, ...); the test-level ``assert`` grades the whole conversation
(score ``conversation``); ``window_size: N`` keeps the system prompt and the last N earlier turns;
``aggregation`` (``mean``, the default, ``min``, ``max``) folds the turn scores into the test's
score; ``on_turn_failure: stop`` skips the turns after a failing one (``continue`` is the default).

Here every turn is its own test case, ``<id>.turn-<k>``, that runs after the turns before it on the
same target and trial (``TestCase.after``; an earlier answer stands in its input as
``output_mark`` until it exists, as for promptfoo's ``_conversation``): its input is the test's
input, then each earlier turn's user message and answer, then its own message; its assertions and
expected output are the turn's; the test's ``criteria`` goes with every turn; the test-level
``assert`` goes with the last turn, whose input holds the whole conversation (named
``conversation`` when unnamed). ``window_size`` is applied as AgentV applies it. Each turn case
stores ``metadata.conversation`` = ``{test, turn, turns}``.

Not done here, each stored as a warning (``suites.warnings``) when the test sets it: ``aggregation``
other than ``mean`` (the turns are counted as separate cases, so a suite's pass rate is the mean
over turns; ``min``/``max`` are not folded into one score) and ``on_turn_failure: stop`` (the
later turns still run and are graded).
"""

from __future__ import annotations

from typing import Any

from eval_pipelines.suite.errors import SpecError, SpecErrors
from eval_pipelines.suite.models import Suite, output_mark
from eval_pipelines.suite.source import Document

CONVERSATION_KEYS = ("mode", "turns", "aggregation", "on_turn_failure", "window_size")
TURN_KEYS = {"input", "expected_output", "assert", "assertions"}
AGGREGATIONS = ("mean", "min", "max")
TURN_FAILURE = ("continue", "stop")


def _messages(value: Any) -> list[Any]:
    if isinstance(value, list):
        return list(value)
    if value is None:
        return []
    return [{"role": "user", "content": value}]


def turn_id(test_id: Any, turn: int) -> str:
    return f"{test_id}.turn-{turn}"


class _Expander:
    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.errors: list[SpecError] = []
        self.warnings: list[str] = []
        self.lines: dict[tuple[Any, ...], int] = {k: v for k, v in doc.lines.items() if k[:1] != ("tests",)}
        self.after: dict[str, list[str]] = {}

    def error(self, path: tuple[Any, ...], message: str, expected: str) -> None:
        self.errors.append(SpecError(str(self.doc.file), path, message, self.doc.line_of(path), expected))

    def move(self, old: tuple[Any, ...], new: tuple[Any, ...], skip: tuple[str, ...] = ()) -> None:
        """The source lines of ``old`` (and below it) under ``new``, for errors found later."""
        for key, line in self.doc.lines.items():
            if key[:len(old)] == old and (len(key) == len(old) or key[len(old)] not in skip):
                self.lines[new + key[len(old):]] = line

    def plain(self, test: Any, old: int, new: int) -> Any:
        self.move(("tests", old), ("tests", new))
        return test

    def check(self, test: dict[str, Any], path: tuple[Any, ...]) -> bool:
        ok = True
        if test.get("mode") != "conversation":
            self.error(path + ("mode",), f"test mode {test.get('mode')!r} is not supported", "conversation (with turns)")
            ok = False
        turns = test.get("turns")
        if not isinstance(turns, list) or not turns:
            self.error(path + ("turns",), "a conversation needs turns", "a non-empty list of {input, assert, ...}")
            return False
        for k, turn in enumerate(turns):
            if not isinstance(turn, dict) or "input" not in turn:
                self.error(path + ("turns", k), "each turn needs an input", "{input, expected_output, assert}")
                ok = False
            elif unknown := sorted(set(turn) - TURN_KEYS):
                self.error(path + ("turns", k, unknown[0]), f"unknown turn field {unknown[0]!r}",
                           "input, expected_output, assert")
                ok = False
        if test.get("aggregation", "mean") not in AGGREGATIONS:
            self.error(path + ("aggregation",), f"invalid aggregation {test['aggregation']!r}", "mean, min or max")
            ok = False
        if test.get("on_turn_failure", "continue") not in TURN_FAILURE:
            self.error(path + ("on_turn_failure",), f"invalid on_turn_failure {test['on_turn_failure']!r}",
                       "continue or stop")
            ok = False
        window = test.get("window_size")
        if window is not None and (not isinstance(window, int) or isinstance(window, bool) or window < 1):
            self.error(path + ("window_size",), f"invalid window_size {window!r}", "a whole number of turns, at least 1")
            ok = False
        return ok

    def expand(self, test: dict[str, Any], old: int, start: int) -> list[dict[str, Any]]:
        path = ("tests", old)
        if not self.check(test, path):
            return []
        where = f"{self.doc.file}: tests[{old}] ({test.get('id')})"
        if test.get("aggregation", "mean") != "mean":
            self.warnings.append(f"{where}: aggregation {test['aggregation']!r} is not applied: each turn is "
                                 "its own case, graded and counted on its own (a mean over turns)")
        if test.get("on_turn_failure") == "stop":
            self.warnings.append(f"{where}: on_turn_failure 'stop' is not applied: the turns after a failing "
                                 "one still run and are graded")
        turns = test["turns"]
        base = {k: v for k, v in test.items() if k not in (*CONVERSATION_KEYS, "input", "assert", "assertions",
                                                           "expected_output", "id")}
        lead = _messages(test.get("input"))
        window = test.get("window_size")
        earlier: list[tuple[str, Any]] = []  # (case id, user messages) of the turns so far
        out: list[dict[str, Any]] = []
        for k, turn in enumerate(turns, start=1):
            case_id = turn_id(test.get("id", f"test-{old + 1}"), k)
            history = earlier[-window:] if window else earlier
            messages = list(lead)
            for previous_id, previous_input in history:
                messages += _messages(previous_input) + [{"role": "assistant", "content": output_mark(previous_id)}]
            messages += _messages(turn["input"])
            assertions = list(turn.get("assert", turn.get("assertions")) or [])
            new = ("tests", start + len(out))
            self.move(path, new, skip=("turns", "assert", "assertions", "input"))
            self.move(path + ("turns", k - 1, "assert"), new + ("assert",))
            self.move(path + ("turns", k - 1, "assertions"), new + ("assert",))
            self.move(path + ("turns", k - 1, "input"), new + ("input",))
            if k == len(turns):
                written = test.get("assert", test.get("assertions")) or []
                for i, item in enumerate(written if isinstance(written, list) else [written]):
                    if isinstance(item, str):  # a rubric criterion, as a turn's plain string is
                        item = {"type": "llm_judge", "rubric": item}
                    if isinstance(item, dict) and "name" not in item and "metric" not in item:
                        item = {**item, "name": "conversation"}
                    self.move(path + ("assert", i), new + ("assert", len(assertions)))
                    assertions.append(item)
            case = {**base, "id": case_id, "input": messages,
                    "metadata": {**(test.get("metadata") or {}),
                                 "conversation": {"test": str(test.get("id")), "turn": k, "turns": len(turns)}}}
            if assertions:
                case["assert"] = assertions
            if "expected_output" in turn:
                case["expected_output"] = turn["expected_output"]
            self.after[case_id] = [i for i, _ in earlier]
            earlier.append((case_id, turn["input"]))
            out.append(case)
        return out


def expand_conversations(doc: Document) -> tuple[Document, list[str], dict[str, list[str]]]:
    """The document with each conversation test as one test per turn, the warnings, and for each
    turn case the earlier turns it waits for (set with :func:`link_turns` once the suite is loaded)."""
    data = doc.data
    if not isinstance(data, dict) or not isinstance(data.get("tests"), list):
        return doc, [], {}
    tests = data["tests"]
    if not any(isinstance(t, dict) and any(k in t for k in CONVERSATION_KEYS) for t in tests):
        return doc, [], {}
    expander = _Expander(doc)
    out: list[Any] = []
    for old, test in enumerate(tests):
        if isinstance(test, dict) and any(k in test for k in CONVERSATION_KEYS):
            out += expander.expand(test, old, len(out))
        else:
            out.append(expander.plain(test, old, len(out)))
    if expander.errors:
        raise SpecErrors(expander.errors)
    return Document(doc.file, {**data, "tests": out}, expander.lines), expander.warnings, expander.after


def link_turns(suite: Suite, after: dict[str, list[str]]) -> None:
    for case in suite.tests:
        if after.get(case.id):
            case.after = list(after[case.id])
