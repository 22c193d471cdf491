"""AgentV HEAD's example suites (tests/data/agentv_head, see its README) load as AgentV reads them.

Every example either loads, or is refused for the reason listed below (a file the
index does not hold, or a feature we do not run) in one line; and for every accepted
example, every input text the YAML writes (``input`` or v5's ``vars.input``: strings,
``{type: text, value}`` parts, the text of ``{type: file}`` parts, the strings of a
structured payload) reaches the loaded test's messages, role kept, in order.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.formats.loader import load_suite
from tests.formats.test_corpus_ratio import AGENTV

CORPUS = Path(__file__).resolve().parents[1] / "data" / "agentv_head"
# Each refused example and the reason its one-line error gives.
REFUSED = {
    # attachments AgentV's repository does not hold at that path (AgentV warns and sends the prompt without them)
    "features/agent-skills-evals/csv-analyzer.EVAL.yaml": "file not found: evals/files/sales.csv",
    "features/code-grader-sdk/evals/suite.yaml": "file not found: python.instructions.md",
    "features/transpile/csv-analyzer.EVAL.yaml": "file not found: evals/files/sales.csv",
    "features/basic/evals/suite.yaml": "file not found: javascript.instructions.md",
    "features/basic-jsonl/evals/suite.yaml": "file not found: ../basic/evals/javascript.instructions.md",
    "showcase/cw-incident-triage/evals/suite.yaml": "file not found: ../skills/cw-criticality-rating.md",
    "showcase/export-screening/evals/suite.yaml": "file not found: ../skills/export-risk-assessment.md",
    # code files of the example, not copied: AgentV too refuses a preprocessor whose command file is
    # absent; `word-count` is a custom assertion AgentV runs from .agentv/assertions/word-count.ts
    "features/preprocessors/evals/dataset.eval.yaml": "preprocessor command file not found",
    "features/sdk-custom-assertion/evals/dataset.eval.yaml": "custom assertion: file not found",
    # features we do not run: lifecycle hooks AgentV imports and runs in its own process, script
    # graders in a Docker container, a setup command that prepares the workdir in place (with network)
    "showcase/cross-repo-sync/evals/suite.yaml": "extension hook file://../scripts/setup.ts:beforeEach is not supported",
    "features/copilot-transcript-replay/evals/skill-trigger.EVAL.yaml": "extension hook file://",
    "features/copilot-transcript-replay/evals/skill-use.EVAL.yaml": "extension hook file://",
    "features/docker-workspace/evals/docker-example.EVAL.yaml": "workspace.docker: Docker workspaces are not supported",
    "contract/evals/repo-materialization.eval.yaml": "environment.setup: a setup command is not supported",
}


def _rel(suite: Path) -> str:
    return suite.relative_to(CORPUS).as_posix()


def test_corpus_is_there() -> None:
    assert len(AGENTV) >= 40
    assert (CORPUS / "README.md").is_file() and (CORPUS / "MANIFEST.tsv").is_file()
    listed = {line.split("\t")[0] for line in (CORPUS / "MANIFEST.tsv").read_text().splitlines()[1:]}
    stored = {p.relative_to(CORPUS).as_posix() for p in CORPUS.rglob("*") if p.is_file()} - {"README.md",
                                                                                         "MANIFEST.tsv"}
    assert listed == stored  # every copied file has its commit


@pytest.mark.parametrize("suite", AGENTV, ids=_rel)
def test_example_loads_or_is_refused_for_its_reason(suite: Path) -> None:
    if _rel(suite) in REFUSED:
        with pytest.raises(SpecErrors) as caught:
            load_suite(suite)
        first = str(caught.value.errors[0])
        # the file named is the suite or one it reads beside it (basic-jsonl's cases.jsonl)
        assert REFUSED[_rel(suite)] in first and "\n" not in first and str(suite.parent) in first
        return
    loaded, _ = load_suite(suite)
    assert loaded.tests


def _written(test: dict[str, Any]) -> list[dict[str, Any]]:
    written = test.get("input", (test.get("vars") or {}).get("input"))
    if written is None:
        return []
    return written if isinstance(written, list) else [{"role": "user", "content": written}]


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


def _texts(content: Any, base: Path) -> list[str]:
    """The message's strings and text parts, and the text of its file parts (found as AgentV finds them:
    relative to the suite's folder or a parent)."""
    if isinstance(content, str):
        return [content]
    if isinstance(content, dict):  # a structured payload goes out as JSON: each of its strings is in it
        return [v for v in _leaves(content) if isinstance(v, str)]
    out = []
    for part in content:
        if part.get("type") == "file":
            file = next(p for p in [base / part["value"], *(q / part["value"] for q in base.parents)] if p.is_file())
            out.append(file.read_text(encoding="utf-8").replace("\r\n", "\n").strip())
        elif part.get("type") == "text":
            out.append(part["value"])
    return out


def _raw_tests(suite: Path) -> list[dict[str, Any]]:
    raw = yaml.safe_load(suite.read_text(encoding="utf-8"))
    tests = raw["tests"]
    if isinstance(tests, str):  # a case folder
        folder = suite.parent / tests
        return [{"id": sub.name, **yaml.safe_load((sub / "case.yaml").read_text(encoding="utf-8"))}
                for sub in sorted(p for p in folder.iterdir() if (p / "case.yaml").is_file())]
    return tests


def _with_vars(text: str, variables: dict[str, Any]) -> str:
    """A text of the tests+input shape with its `{{ name }}` / `{{ a.b }}` placeholders filled from the
    test's `vars` (AgentV's test-vars-templating README), by a plain dotted lookup."""
    def one(match: re.Match[str]) -> str:
        value: Any = variables
        if match.group(1).removeprefix("vars.").split(".")[0] not in variables:
            return match.group(0)  # not a var (`{{ env.NAME }}`): sent as written
        for key in match.group(1).removeprefix("vars.").split("."):
            value = value.get(key, "") if isinstance(value, dict) else ""
        return str(value)

    return re.sub(r"\{\{\s*([A-Za-z_][\w.]*)\s*\}\}", one, text)


@pytest.mark.parametrize("suite", [s for s in AGENTV if _rel(s) not in REFUSED], ids=_rel)
def test_no_input_text_is_lost(suite: Path) -> None:
    loaded, _ = load_suite(suite)
    by_id = {t.id: t for t in loaded.tests}
    checked = 0
    for test in _raw_tests(suite):
        written = _written(test)
        if test.get("mode") == "conversation":  # one case per turn: the last one holds every turn's input
            case = by_id[f"{test['id']}.turn-{len(test['turns'])}"]
            written = written + [{"role": "user", "content": turn["input"]} for turn in test["turns"]]
        else:
            case = by_id[str(test["id"])]
        stored = iter(case.input)
        for message in written:
            role = message.get("role", "user")
            target = next(m for m in stored if m.role == role)  # in order; a message of that role
            for text in _texts(message["content"], suite.parent):
                if isinstance(test.get("vars"), dict):  # vars fill the text they are written in (either shape)
                    text = _with_vars(text, test["vars"])
                assert text.strip() in target.content, (case.id, text[:80])
                checked += 1
    assert checked >= len(loaded.tests)


def test_the_measured_share(capsys: pytest.CaptureFixture[str]) -> None:
    accepted = [s for s in AGENTV if _rel(s) not in REFUSED]
    # refused only because the copy lacks a file they read (the index holds no text for it): every
    # error is a missing file (`transpile/csv-analyzer` also has an unknown type, so it counts as refused)
    unreadable = []
    for rel in REFUSED:
        with pytest.raises(SpecErrors) as caught:
            load_suite(CORPUS / rel)
        if all("file not found" in str(e) for e in caught.value.errors):
            unreadable.append(rel)
    held = len(AGENTV) - len(unreadable)
    with capsys.disabled():
        print(f"\nAgentV HEAD corpus: {len(accepted)} of {len(AGENTV)} example suites load "
              f"({len(accepted) / len(AGENTV):.0%}); {len(accepted)} of the {held} whose files the copy "
              f"holds ({len(accepted) / held:.0%})")
    assert len(accepted) / held >= 0.8 and len(accepted) / len(AGENTV) >= 0.8
