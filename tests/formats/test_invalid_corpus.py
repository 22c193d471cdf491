"""The broken-suite corpus: every file gives exit 2 from `eval-pipelines validate`
and one line naming the file and the field, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval_pipelines.cli import main

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "invalid"
EXPECTED = json.loads((CORPUS / "expected_errors.json").read_text())


def test_the_corpus_is_large_enough() -> None:
    assert len(EXPECTED) >= 40


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_broken_file_is_reported_clearly(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["validate", str(CORPUS / name)])
    out = capsys.readouterr()
    text = out.out + out.err
    assert code == 2, text
    assert "Traceback" not in text
    lines = [line for line in out.out.splitlines() if line.strip()]
    assert lines, "no problem reported"
    # Every problem line starts with a file of the corpus (the one given, or a dataset it names)
    # and then names a field path: `file[:line]: field.path: message`.
    for line in lines:
        file_part, _, rest = line.partition(": ")
        assert Path(file_part.rsplit(":", 1)[0] if file_part.rsplit(":", 1)[-1].isdigit() else file_part
                    ).resolve().parent == CORPUS.resolve(), line
        assert rest.count(": ") >= 1, line
    assert any(EXPECTED[name] in line for line in lines), text
