"""The differential harness (benchmarks/promptfoo_differential.py) on users' configs.

The corpus test is fast: at least 40 users' configs, each with its repository, path and commit.
The harness test is slow and needs promptfoo itself (npm, installed as docs/benchmarks.md says):
on three configs in scope, promptfoo and eval-pipelines both run, send the same model requests and
agree on every deterministic verdict. No timing is asserted.
"""

from __future__ import annotations

import re

import pytest

from benchmarks.promptfoo_differential import CORPUS, compare, figures, manifest, promptfoo_binary

THREE = ["AnthonyRonning__promptfoo-workshop", "Chigozie4378__azure-ai", "Ahmad-Tamim-Hamad__promptfoo"]


def test_the_corpus_holds_at_least_40_users_configs_each_with_its_source() -> None:
    rows = manifest()
    assert len(rows) >= 40
    for row in rows:
        assert (CORPUS / row["folder"] / row["path"]).is_file(), row
        assert re.fullmatch(r"[0-9a-f]{40}", row["commit"]) and "/" in row["repository"], row
        assert not row["repository"].startswith("promptfoo/"), row  # users', not promptfoo's own examples


@pytest.mark.slow
@pytest.mark.skipif(promptfoo_binary() is None, reason="promptfoo is not installed (.bench-tools, see "
                                                       "docs/benchmarks.md 'Reproduce')")
def test_promptfoo_and_eval_pipelines_send_the_same_requests_and_agree_on_three_configs() -> None:
    binary = promptfoo_binary()
    assert binary is not None
    outcomes = [compare(row, binary) for row in manifest() if row["folder"] in THREE]
    assert len(outcomes) == 3
    found = figures(outcomes)
    assert found["both_run"] == found["promptfoo_runs"] == 3, [o.__dict__ for o in outcomes]
    assert found["requests"] > 0 and found["requests_identical"] == found["requests"], [o.differences for o in outcomes]
    assert found["verdicts"] > 0 and found["verdicts_agree"] == found["verdicts"], [o.differences for o in outcomes]
