"""AgentV's own example suites (tests/data/agentv_v2, see its README) load as AgentV reads them.

Every example either loads, or is refused for a genuine error in that file (listed
below with the reason); and for every accepted example, every input text written in
the YAML (strings, ``{type: text, value}`` parts) and the text of every file part
reaches the loaded test's messages, in the same message, role kept.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from eval_pipelines.spec.errors import SpecErrors
from eval_pipelines.spec.loader import load_suite
from eval_pipelines.spec.paths import PathPolicy

CORPUS = Path(__file__).resolve().parents[1] / "data" / "agentv_v2"
SUITES = sorted(CORPUS.rglob("*.eval.yaml"))
# The examples refused, and the genuine error each has: the file parts name files that
# are not in AgentV's repository at that path (AgentV warns and sends the prompt without them).
REFUSED = {
    "examples/features/code-judge-sdk/evals/dataset.eval.yaml": "file not found: python.instructions.md",
    "examples/features/local-cli/evals/dataset.eval.yaml": "file not found: python.instructions.md",
}
ENV = {"EVAL_CRITERIA": "Responds with a friendly greeting",
       "CUSTOM_SYSTEM_PROMPT": "You are a helpful assistant who always greets warmly."}


def package_of(suite: Path) -> Path:
    """The example's folder (examples/features/<name>), which plays the skill package."""
    rel = suite.relative_to(CORPUS).parts
    return CORPUS.joinpath(*rel[:3])


def load(suite: Path):
    return load_suite(suite, PathPolicy(allowed_roots=(package_of(suite),)))


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)


def test_corpus_is_there() -> None:
    assert len(SUITES) >= 25
    assert (CORPUS / "README.md").is_file() and (CORPUS / "MANIFEST.tsv").is_file()


@pytest.mark.parametrize("suite", SUITES, ids=lambda p: str(p.relative_to(CORPUS / "examples")))
def test_example_loads_or_is_refused_for_a_genuine_error(suite: Path) -> None:
    rel = str(suite.relative_to(CORPUS))
    if rel in REFUSED:
        with pytest.raises(SpecErrors) as caught:
            load(suite)
        assert REFUSED[rel] in str(caught.value)
        return
    loaded, _ = load(suite)
    assert loaded.tests, rel


def test_count_of_accepted_examples(capsys: pytest.CaptureFixture[str]) -> None:
    accepted = [s for s in SUITES if str(s.relative_to(CORPUS)) not in REFUSED]
    for suite in accepted:
        load(suite)
    with capsys.disabled():
        print(f"\nAgentV corpus: {len(accepted)} of {len(SUITES)} example suites load")
    assert len(accepted) == len(SUITES) - len(REFUSED)


def _interpolated(text: str) -> str:
    return re.sub(r"\$\{\{\s*(\w+)\s*\}\}", lambda m: ENV.get(m.group(1), ""), text)


def _written_texts(content: Any, base: Path) -> list[str]:
    """What the YAML says a message carries: its strings, text parts, and file parts' contents."""
    if isinstance(content, str):
        return [content]
    if isinstance(content, dict):  # a structured payload goes out as indented JSON
        return [json.dumps(content, indent=2, ensure_ascii=False, default=str)]
    out: list[str] = []
    for part in content if isinstance(content, list) else []:
        if part.get("type") == "file":
            file = next(p for p in [base / part["value"], *(q / part["value"] for q in base.parents)] if p.is_file())
            out.append(file.read_text(encoding="utf-8").replace("\r\n", "\n").strip())
        else:
            out.append(part["value"])
    return out


@pytest.mark.parametrize("suite", [s for s in SUITES if str(s.relative_to(CORPUS)) not in REFUSED],
                         ids=lambda p: str(p.relative_to(CORPUS / "examples")))
def test_no_input_text_is_lost(suite: Path) -> None:
    raw = yaml.safe_load(suite.read_text(encoding="utf-8"))
    loaded, _ = load(suite)
    by_id = {t.id: t for t in loaded.tests}
    checked = 0
    for index, test in enumerate(raw["tests"]):
        case = by_id[str(test.get("id", f"test-{index + 1}"))]
        written = test["input"] if isinstance(test["input"], list) else [{"role": "user", "content": test["input"]}]
        assert len(case.input) == len(written)
        for message, stored in zip(written, case.input):
            assert stored.role == message.get("role", "user")
            for text in _written_texts(message["content"], suite.parent):
                assert _interpolated(text) in stored.content, (case.id, text[:80])
                checked += 1
    assert checked >= len(raw["tests"])
