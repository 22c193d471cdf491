"""How much of promptfoo's and AgentV's own example files we load (issue 18's measure).

The corpora are copies of the projects' real files (see the README beside each; the promptfoo
one says which examples are in scope and why the others are not). Every file either validates
or fails with one-line errors naming a file of its example, the field and the feature.

The issue's bar is 80%. AgentV HEAD meets it. The promptfoo corpus (the in-scope example
configs found in the stored index, see its README) meets it only for the configs `promptfoo eval`
runs whose files the copy holds (146/170, 86%, since issue 35's field rule: fields promptfoo ignores
are warnings); of all 253 it is 146 (58%), of those whose files the copy holds 146/209 (70%). The floors below are those measured shares, so a change that loads
fewer examples fails here; raise them when a change loads more.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.formats.loader import load_suite

DATA = Path(__file__).resolve().parents[1] / "data"
PROMPTFOO = sorted((DATA / "promptfoo_examples").rglob("promptfooconfig*.yaml"))
# AgentV's suite files (its case files, `cases/*/case.yaml`, are read through a suite's `tests: ./cases/`).
AGENTV = sorted(p for p in (DATA / "agentv_head").rglob("*.yaml")
                if p.name in ("EVAL.yaml", "eval.yaml", "suite.yaml") or p.name.endswith((".eval.yaml", ".EVAL.yaml")))
MISSING = ("file not found", "no file matches", "provider file not found")
GENERATION_ONLY = "red-team generation (`redteam`) without tests"


@functools.cache
def _load_all(files: tuple[Path, ...]) -> tuple[dict[Path, str], dict[Path, list[str]]]:
    """Each file's suite format, or its errors; loaded once per session (252 configs, some of
    which run scripts in the sandbox at load) and read by the tests below."""
    formats, failed = {}, {}
    for file in files:
        try:
            suite, _ = load_suite(file)
        except SpecErrors as exc:
            failed[file] = [str(e) for e in exc.errors]
            continue
        assert suite.tests, file
        formats[file] = suite.format
    return formats, failed


def measure(files: list[Path]) -> tuple[list[Path], dict[Path, list[str]]]:
    formats, failed = _load_all(tuple(files))
    return list(formats), failed


# Floors: the measured shares (all files; without the files that fail only because a file they
# read is absent from the copy; and, for promptfoo, of the configs `promptfoo eval` runs, i.e. not
# red-team generation recipes, whose files the copy holds). Issue 18 asks for 80%: met for AgentV,
# for promptfoo only on the last measure (all figures are printed and stated in docs/promptfoo.md).
@pytest.mark.parametrize(("files", "formats", "minimum_files", "floor_all", "floor_present", "floor_runnable"), [
    (PROMPTFOO, {"promptfoo"}, 253, 0.57, 0.69, 0.85), (AGENTV, {"agentv-v5", "eval-yaml"}, 90, 0.84, 0.92, None)],
    ids=["promptfoo", "agentv-head"])
def test_the_real_examples_validate_or_fail_in_one_line(files: list[Path], formats: set[str], minimum_files: int,
                                                        floor_all: float, floor_present: float,
                                                        floor_runnable: float | None) -> None:
    assert len(files) >= minimum_files
    loaded, failed = measure(files)
    for file in loaded:
        assert _load_all(tuple(files))[0][file] in formats
    for file, errors in failed.items():
        for error in errors:  # one line each, naming a file of the example
            assert "\n" not in error and "Traceback" not in error
            assert str(file.parent) in error or file.name in error, error
    # Failures whose only errors are files the stored index does not hold (or we did not copy).
    absent = [f for f, errors in failed.items() if all(any(m in e for m in MISSING) for e in errors)]
    present = len(files) - len(absent)
    print(f"{len(loaded)}/{len(files)} validate ({len(loaded) / len(files):.0%}); "
          f"{len(absent)} fail only on absent files; "
          f"{len(loaded)}/{present} ({len(loaded) / present:.0%}) without them")
    # Red-team configs without tests only configure `promptfoo redteam generate`: promptfoo's own
    # `eval` warns on them ("Did you mean to run promptfoo redteam generate instead?"). Printed
    # apart, so the share of configs `promptfoo eval` runs can be read too; the floors count them.
    generation = [f for f, errors in failed.items() if any(GENERATION_ONLY in e for e in errors)]
    assert (floor_runnable is None) == (not generation)
    if generation:
        runnable, runnable_present = len(files) - len(generation), present - len(generation)
        print(f"{len(generation)} are red-team generation configs without tests: {len(loaded)}/{runnable} "
              f"({len(loaded) / runnable:.0%}) of the others validate, "
              f"{len(loaded)}/{runnable_present} ({len(loaded) / runnable_present:.0%}) without absent files")
        assert len(loaded) / runnable_present >= floor_runnable
    for file, errors in failed.items():
        print(f"  {file.relative_to(DATA)}: {errors[0].split(': ', 1)[-1]}")
    assert len(loaded) / len(files) >= floor_all and len(loaded) / present >= floor_present


def test_the_failures_name_the_unsupported_feature() -> None:
    _, failed = measure(PROMPTFOO)
    reasons = {str(f.relative_to(DATA / "promptfoo_examples")): e for f, e in failed.items()}
    assert "customAssertion.ts" in reasons["eval-custom-grader-csv/promptfooconfig.yaml"][0]  # TypeScript
    assert "nunjucks-custom-filters/promptfooconfig.yaml" not in reasons  # allcaps.js run in the sandbox
    # providers' `prompts` load; each config misses one prompt file the index does not hold
    assert reasons["config-prompts-per-model/promptfooconfig.yaml"] == [
        e for e in reasons["config-prompts-per-model/promptfooconfig.yaml"] if "file not found: file://prompt2.txt" in e]
    assert all("file not found: file://prompt1.txt" in e for e in reasons["prompts-per-model/promptfooconfig.yaml"])
    assert "openai-structured-output/promptfooconfig.yaml" not in reasons  # its derivedMetrics load
    # env (OPENAI_API_KEY: $OPENAI_API_KEY) loads; then its prompt files (not copied) and `non-empty`
    assert not any("env" in e.split(": ")[1] for e in reasons["openai-assistant/promptfooconfig.yaml"])
    assert any("'non-empty' is not supported" in e for e in reasons["openai-assistant/promptfooconfig.yaml"])
    # tracing is honoured (trace assertions load); redteam is accepted next to tests
    assert "python" in reasons["openai-agents/promptfooconfig_traced.yaml"][0]  # past `tracing`
    assert "without tests" in reasons["custom-provider-multi-turn/promptfooconfig.yaml"][0]
    # its defaultTest's trace-span-count loads: only the red-team generation recipe is refused
    assert "without tests" in reasons["openai-agents/promptfooconfig.redteam.coding.yaml"][0]
    # promptfoo:redteam:* graders load; the agentic runtime ones (graded from the evidence promptfoo's
    # agentic plugins collect, not the output) are refused; nothing else is refused for traces
    assert "openai-responses/promptfooconfig.tool-discovery.yaml" not in reasons
    assert "promptfoo.agentic.evidence_json" in reasons["openai-codex-sdk/agentic-runtime/promptfooconfig.yaml"][0]
    assert not any("OpenTelemetry" in e for errors in reasons.values() for e in errors)
    # its prompt's own config and its test CSV load; eval-f-score's mathjs conditionals too
    assert "f-score/promptfooconfig.yaml" not in reasons and "eval-f-score/promptfooconfig.yaml" not in reasons
    assert "Hugging Face datasets" in reasons["openai-gpt-4.1-vs-gpt-4o-mmlu/promptfooconfig.yaml"][0]
    # exec: prompts run in the sandbox: the shell one renders, the Ruby one fails in one line (no Ruby here)
    assert "exec:./template-prompt.rb failed in the sandbox" in reasons["config-executable-prompts/promptfooconfig.yaml"][0]
    assert not any("prompt-generator.sh" in e for e in reasons["config-executable-prompts/promptfooconfig.yaml"])
    assert "config-multi-turn/promptfooconfig.yaml" not in reasons  # _conversation (promptfoo_history)
    # image parts are sent as parts (test_promptfoo_media.py); the audio example lacks its mp3 files
    assert "openai-vision/promptfooconfig.yaml" not in reasons
    assert "openai-responses/promptfooconfig.image.yaml" not in reasons
    assert "file not found: file://assets/Armstrong_Small_Step.mp3" in reasons["openai-audio/promptfooconfig.yaml"][0]
    assert "openai-realtime/promptfooconfig-conversation.yaml" not in reasons  # _conversation in its function
    for loads in ("chat-messages-format", "dynamic-var", "config-dynamic-var", "python-test-cases"):  # code run in the sandbox
        assert f"{loads}/promptfooconfig.yaml" not in reasons
    assert any("TypeScript file prompt_chat.ts is not run" in e
               for e in reasons["config-custom-prompt-function/promptfooconfig.yaml"])
    _, failed = measure(AGENTV)
    assert any("extensions" in e[0] for e in failed.values())
