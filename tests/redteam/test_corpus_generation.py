"""How many of promptfoo's own red-team recipes (the corpus's configs with a `redteam` block and no
tests, tests/data/promptfoo_examples) ``eval-pipelines redteam generate`` turns into a suite,
against the fake OpenAI server as the red-team provider, and how many of the written files then
validate (those failing only on files the corpus copy lacks, e.g. target scripts, counted apart).

The figures are printed and stated in docs/promptfoo.md ("Red-team generation"); the floors are
the measured counts, so a change that generates or validates fewer fails here. Every recipe that
is not generated is refused in one line per problem, naming its file.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from eval_pipelines.formats.promptfoo.redteam.generate import generate
from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.formats.loader import load_suite
from tests.support.fake_openai import FakeOpenAIServer, last_user_message

EXAMPLES = Path(__file__).resolve().parents[1] / "data" / "promptfoo_examples"
MISSING = ("file not found", "no file matches", "provider file not found")


def recipes() -> list[Path]:
    found = []
    for file in sorted(EXAMPLES.rglob("promptfooconfig*.yaml")):
        data = yaml.safe_load(file.read_text())
        if isinstance(data, dict) and "redteam" in data and not data.get("tests") and not data.get("scenarios"):
            found.append(file)
    return found


STAND_IN = "def call_api(prompt, options, context):\n    return {'output': ''}\n"


def _validates_with_stand_ins(written: Path, errors: list[str]) -> bool:
    """Whether ``written`` loads once each absent Python provider script exists (a stand-in)."""
    scripts = {e.split("provider file not found: ")[1].split(" ")[0] for e in errors if "provider file not found" in e}
    if not scripts or not all(s.endswith(".py") for s in scripts):
        return False
    for script in scripts:
        (written.parent / script).write_text(STAND_IN)
    try:
        return bool(load_suite(written)[0].tests)
    except SpecErrors:
        return False


def test_the_corpus_recipes_generate_and_the_written_files_validate(tmp_path: Path, fake_openai: FakeOpenAIServer,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    def responder(body: dict[str, Any]) -> str:
        wanted = int(last_user_message(body).split("Write ")[1].split(" ")[0])
        return "\n".join(f"Prompt: probe {fake_openai.request_count}.{i}" for i in range(wanted))

    fake_openai.responder = responder
    env = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": fake_openai.base_url}
    files = recipes()
    refused: dict[Path, list[str]] = {}
    valid, absent, with_stand_ins, invalid = [], [], [], {}
    for index, file in enumerate(files):
        folder = tmp_path / str(index)
        shutil.copytree(file.parent, folder)  # the written file sits beside the config, as promptfoo's
        copy = folder / file.name
        try:
            result = generate(copy, env=env)
        except SpecErrors as exc:
            refused[file] = [str(e) for e in exc.errors]
            continue
        try:
            load_suite(result.out)
            valid.append(file)
        except SpecErrors as exc:
            errors = [str(e) for e in exc.errors]
            if all(any(m in e for m in MISSING) for e in errors):
                absent.append(file)
                if _validates_with_stand_ins(result.out, errors):
                    with_stand_ins.append(file)
            else:
                invalid[file] = errors
    generated = len(files) - len(refused)
    print(f"{len(files)} red-team recipes; {generated} generate; of those {len(valid)} validate, "
          f"{len(absent)} fail only on files the copy lacks ({len(with_stand_ins)} of them validate once a "
          f"stand-in target script is put there), {len(invalid)} fail otherwise")
    kinds = {"a strategy": "strategies[", "a plugin": "plugins[", "no purpose": "redteam.purpose: missing",
             "an absent file": "file not found"}
    print("refused recipes with " + ", ".join(
        f"{label}: {sum(any(mark in e and (mark != 'plugins[' or 'file not found' not in e) for e in errors) for errors in refused.values())}"
        for label, mark in kinds.items()))
    for file, errors in sorted(refused.items()):
        print(f"refused {file.relative_to(EXAMPLES)}: {errors[0]}")
    for file, errors in sorted(invalid.items()):
        print(f"invalid {file.relative_to(EXAMPLES)}: {errors[0]}")
    assert len(files) == 39
    for file, errors in refused.items():
        for error in errors:
            assert "\n" not in error and "Traceback" not in error and file.name in error
    assert invalid == {}
    assert generated >= 11 and len(valid) + len(absent) == generated
    assert len(with_stand_ins) == len(absent)
