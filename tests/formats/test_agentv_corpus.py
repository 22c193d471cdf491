"""AgentV's own example suites (tests/data/agentv_v2, see its README) load as AgentV reads them.

Every example either loads, or is refused for a genuine error in that file (listed
below with the reason); and for every accepted example, every input text written in
the YAML (strings, ``{type: text, value}`` parts) and the text of every file part
reaches the loaded test's messages, in the same message, role kept.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.formats.loader import load_suite
from eval_pipelines.suite.paths import PathPolicy

CORPUS = Path(__file__).resolve().parents[1] / "data" / "agentv_v2"
SUITES = sorted(CORPUS.rglob("*.eval.yaml"))
# The examples refused, and the genuine error each has: each names a file (a file part, a
# dataset) that the code index's copy of AgentV's repository does not hold at that path (AgentV
# warns and sends the prompt without a missing file part; a missing dataset stops its run).
REFUSED = {
    "examples/features/code-judge-sdk/evals/dataset.eval.yaml": "file not found: python.instructions.md",
    "examples/features/local-cli/evals/dataset.eval.yaml": "file not found: python.instructions.md",
    "examples/features/basic-jsonl/evals/dataset.eval.yaml":
        "file not found: ../basic/evals/javascript.instructions.md",
    "examples/features/suite-level-input/evals/dataset.eval.yaml": "file not found: ./system-prompt.md",
    "examples/features/basic/evals/dataset.eval.yaml": "file not found: javascript.instructions.md",
    "examples/showcase/cw-incident-triage/evals/dataset.eval.yaml":
        "file not found: ../skills/cw-criticality-rating.md",
    "examples/showcase/export-screening/evals/dataset.eval.yaml":
        "file not found: ../skills/export-risk-assessment.md",
    "examples/showcase/psychotherapy/evals/encouragement.eval.yaml": "file not found: ../skills/encouragement.md",
    "examples/showcase/psychotherapy/evals/listening.eval.yaml": "file not found: ../skills/listening.md",
    # The labelled export these read is produced by a script of the showcase, not kept in the repository.
    "examples/showcase/offline-judge-benchmark/evals/setup-a.eval.yaml":
        "file not found: file://../fixtures/labeled-judge-export.jsonl",
    "examples/showcase/offline-judge-benchmark/evals/setup-b.eval.yaml":
        "file not found: file://../fixtures/labeled-judge-export.jsonl",
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
    assert len(SUITES) >= 60
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


@pytest.mark.parametrize("rel", sorted(REFUSED), ids=lambda r: r.removeprefix("examples/"))
def test_a_refused_example_loads_once_its_missing_files_exist(rel: str, tmp_path: Path) -> None:
    """The only thing wrong with each refused example is the file it names: in a copy of its
    folder with a placeholder for every file reported missing, it loads."""
    suite = CORPUS / rel
    package = tmp_path / package_of(suite).name
    shutil.copytree(package_of(suite), package)
    copy = package / suite.relative_to(package_of(suite))
    supplied: list[str] = []
    for _ in range(4):
        try:
            loaded, _ = load_suite(copy, PathPolicy(allowed_roots=(package,)))
            break
        except SpecErrors as exc:
            missing = re.search(r"file not found: (?:file://)?(\S+?)(?: \(|$)", str(exc), re.MULTILINE)
            assert missing, str(exc)  # any other error would be a gap of ours, not the file's
            name = missing.group(1)
            placeholder = copy.parent / name
            placeholder.parent.mkdir(parents=True, exist_ok=True)
            placeholder.write_text('{"id": "placeholder", "input": "placeholder"}\n' if name.endswith(".jsonl")
                                   else "placeholder\n", encoding="utf-8")
            supplied.append(name)
    else:
        pytest.fail(f"still refused after supplying {supplied}")
    assert loaded.tests and REFUSED[rel].endswith(supplied[0])


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


def _raw_tests(suite: Path, raw: dict[str, Any]) -> list[tuple[dict[str, Any], Path]]:
    """Every test mapping of a suite, with the file it is written in: inline, a dataset path
    (``tests: ./cases.yaml``), or ``file://`` entries among inline tests."""
    tests = raw["tests"]
    out: list[tuple[dict[str, Any], Path]] = []
    for entry in [tests] if isinstance(tests, str) else tests:
        if isinstance(entry, dict):
            out.append((entry, suite))
            continue
        file = suite.parent / entry.removeprefix("file://")
        text = file.read_text(encoding="utf-8")
        rows = [json.loads(line) for line in text.splitlines() if line.strip()] if file.suffix == ".jsonl" \
            else yaml.safe_load(text)
        out.extend((row, file) for row in rows)
    return out


def _messages(value: Any, base: Path) -> list[tuple[str, list[str]]]:
    messages = value if isinstance(value, list) else [{"role": "user", "content": value}]
    return [(m.get("role", "user"), _written_texts(m["content"], base.parent)) for m in messages]


def written_inputs(suite: Path) -> dict[str, list[tuple[str, list[str]]]]:
    """For each test id, the messages the YAML writes for it (role, texts): the suite's ``input``
    first unless the test skips the suite's defaults, then its own ``input`` (with AgentV's
    ``input_files``, the test's or the suite's, as file parts before the text)."""
    raw = yaml.safe_load(suite.read_text(encoding="utf-8"))
    out: dict[str, list[tuple[str, list[str]]]] = {}
    for index, (test, file) in enumerate(_raw_tests(suite, raw)):
        execution = test.get("execution") or {}
        skip = bool(test.get("skip_defaults", execution.get("skip_defaults", False)))
        messages = [] if skip or "input" not in raw else _messages(raw["input"], suite)
        files, base = (test.get("input_files"), file) if "input_files" in test else \
            (None if skip else raw.get("input_files"), suite)
        if files:
            parts = [{"type": "file", "value": f} for f in files] + [{"type": "text", "value": test["input"]}]
            messages += [("user", _written_texts(parts, base.parent))]
        else:
            messages += _messages(test["input"], file)
        out[str(test.get("id", f"test-{index + 1}"))] = messages
    return out


@pytest.mark.parametrize("suite", [s for s in SUITES if str(s.relative_to(CORPUS)) not in REFUSED],
                         ids=lambda p: str(p.relative_to(CORPUS / "examples")))
def test_no_input_text_is_lost(suite: Path) -> None:
    loaded, _ = load(suite)
    by_id = {t.id: t for t in loaded.tests}
    written = written_inputs(suite)
    assert set(written) == set(by_id)
    checked = 0
    for test_id, messages in written.items():
        case = by_id[test_id]
        assert len(case.input) == len(messages), test_id
        for (role, texts), stored in zip(messages, case.input):
            assert stored.role == role
            for text in texts:
                assert _interpolated(text) in stored.content, (case.id, text[:80])
                checked += 1
    assert checked >= len(written)
