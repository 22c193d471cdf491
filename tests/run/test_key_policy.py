"""A suite cannot send the operator's API key to an address it chose (run/targets/key_policy.py).

The hostile suite here writes what a real promptfoo config may write: a provider with
``apiBaseUrl`` and ``apiKeyEnvar: OPENAI_API_KEY``. The "collector" is the local fake server,
which records every request's headers, so the tests read what actually went over HTTP.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval_pipelines.cli import main
from eval_pipelines.analysis.exit_codes import ExitCode
from eval_pipelines.run.targets.config import OpenAITargetConfig, resolve_connection
from eval_pipelines.run.targets.key_policy import withheld_key_reason
from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.store.connection import connect
from tests.support.fake_openai import FakeOpenAIServer

SECRET = "sk-operator-secret-0123456789"


def _config(**fields: object) -> OpenAITargetConfig:
    return OpenAITargetConfig.model_validate({"name": "t", "model": "m", **fields})


@pytest.mark.parametrize(("fields", "env", "sent"), [
    ({"base_url": "https://collector.example/v1"}, {}, True),  # the operator's own targets.yaml
    ({"declared_by": "suite"}, {}, True),  # no address: the client's default, api.openai.com
    ({"declared_by": "suite", "base_url": "https://api.openai.com/v1"}, {}, True),
    ({"declared_by": "suite", "base_url_env": "MY_URL"}, {"MY_URL": "https://proxy.internal/v1"}, True),
    ({"declared_by": "suite", "base_url": "https://collector.example/v1"}, {}, False),
    ({"declared_by": "suite", "base_url": "http://127.0.0.1:9999/v1"}, {}, False),  # loopback is not trusted
    ({"declared_by": "suite", "base_url_default": "http://0.0.0.0:4000"}, {}, False),  # litellm's default
    ({"declared_by": "suite", "base_url": "https://collector.example/v1"},
     {"EVAL_PIPELINES_TRUSTED_HOSTS": "other.example, collector.example"}, True),
    ({"declared_by": "suite", "base_url": "https://eu.collector.example/v1"},
     {"EVAL_PIPELINES_TRUSTED_HOSTS": "*.collector.example"}, True),
    ({"declared_by": "suite", "base_url": "https://collector.example.evil/v1"},
     {"EVAL_PIPELINES_TRUSTED_HOSTS": "*.collector.example,collector.example"}, False),
    ({"declared_by": "suite", "base_url": "http://127.0.0.1:9999/v1"}, {"EVAL_PIPELINES_TRUSTED_HOSTS": "127.0.0.1:9999"}, True),
    ({"declared_by": "suite", "base_url": "http://127.0.0.1:9998/v1"}, {"EVAL_PIPELINES_TRUSTED_HOSTS": "127.0.0.1:9999"}, False),
], ids=["operator", "default-host", "openai", "url-from-env", "chosen-host", "loopback", "litellm-default",
        "listed", "wildcard", "suffix-trick", "host-port", "other-port"])
def test_a_key_goes_only_where_the_operator_allows(fields: dict, env: dict, sent: bool) -> None:
    config = _config(**fields)
    key, base_url = resolve_connection(config, {"OPENAI_API_KEY": SECRET, **env})
    assert (key == SECRET) is sent
    assert base_url == (fields.get("base_url") or env.get("MY_URL") or fields.get("base_url_default"))
    reason = withheld_key_reason(config, env)
    assert (reason is None) is sent
    if reason:
        assert "$OPENAI_API_KEY" in reason and "EVAL_PIPELINES_TRUSTED_HOSTS" in reason


def _hostile_config(tmp_path: Path, server: FakeOpenAIServer) -> Path:
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(
        "prompts: ['Say {{ q }}']\nproviders:\n"
        f"  - {{id: 'openai:chat:fake-model', config: {{apiBaseUrl: '{server.base_url}', apiKeyEnvar: OPENAI_API_KEY}}}}\n"
        "tests: [{vars: {q: hi}, assert: [{type: contains, value: hi}]}]\n")
    return config


def test_a_suite_chosen_address_gets_no_authorization_header_and_the_run_says_why(
        tmp_path: Path, fake_openai: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.delenv("EVAL_PIPELINES_TRUSTED_HOSTS", raising=False)
    db = tmp_path / "r.duckdb"
    assert main(["run", str(_hostile_config(tmp_path, fake_openai)), "--db", str(db)]) == ExitCode.OK
    out = capsys.readouterr()
    assert fake_openai.request_count == 1  # the call is still made: a server that needs no key answers
    assert [h.get("authorization") for h in fake_openai.headers] == [None]  # no key, no placeholder bearer
    assert SECRET not in out.out + out.err
    with connect(db) as con:
        warnings = json.loads(con.execute("SELECT warnings FROM suites").fetchone()[0])
        stored = con.execute("SELECT count(*) FROM suites WHERE CAST(spec AS VARCHAR) LIKE ?",
                             [f"%{SECRET}%"]).fetchone()[0]
    assert stored == 0
    assert any("the key in $OPENAI_API_KEY is not sent to 127.0.0.1" in w for w in warnings), warnings


def test_a_trusted_host_gets_the_key(tmp_path: Path, fake_openai: FakeOpenAIServer,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("EVAL_PIPELINES_TRUSTED_HOSTS", "127.0.0.1")
    assert main(["run", str(_hostile_config(tmp_path, fake_openai)), "--db", str(tmp_path / "r.duckdb")]) == ExitCode.OK
    assert [h.get("authorization") for h in fake_openai.headers] == [f"Bearer {SECRET}"]


def test_a_rejected_call_says_the_key_was_withheld(tmp_path: Path, fake_openai: FakeOpenAIServer,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.delenv("EVAL_PIPELINES_TRUSTED_HOSTS", raising=False)
    fake_openai.fail_plan = ["401"]
    db = tmp_path / "r.duckdb"
    main(["run", str(_hostile_config(tmp_path, fake_openai)), "--db", str(db)])
    with connect(db) as con:
        (error,) = con.execute("SELECT error FROM model_outputs").fetchone()
    assert error.startswith("HTTP 401") and "the key in $OPENAI_API_KEY is not sent" in error


def test_a_grading_provider_the_suite_points_elsewhere_gets_no_key(
        tmp_path: Path, fake_openai: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.delenv("EVAL_PIPELINES_TRUSTED_HOSTS", raising=False)
    fake_openai.script = ['{"reason": "It greets.", "pass": true, "score": 1}']
    (tmp_path / "promptfooconfig.yaml").write_text(
        "prompts: ['{{ q }}']\nproviders: [echo]\n"
        "defaultTest:\n  options:\n    provider:\n"
        f"      id: 'openai:chat:grader'\n      config: {{apiBaseUrl: '{fake_openai.base_url}'}}\n"
        "tests: [{vars: {q: hello}, assert: [{type: llm-rubric, value: greets}]}]\n")
    monkeypatch.chdir(tmp_path)
    assert main(["run", "promptfooconfig.yaml", "--db", str(tmp_path / "r.duckdb")]) == ExitCode.OK, capsys.readouterr()
    assert fake_openai.request_count == 1 and [h.get("authorization") for h in fake_openai.headers] == [None]


def _skill(tmp_path: Path, targets_yaml: str) -> Path:
    skill = tmp_path / "skills" / "hostile"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: hostile\ndescription: d\nversion: 1.0.0\n---\nBe brief.\n")
    (skill / "targets.yaml").write_text(targets_yaml)
    (skill / "eval.yaml").write_text("tests:\n  - id: a\n    input: hi\n    assert: [{type: contains, value: hi}]\n")
    return skill


def test_a_skill_packages_own_targets_file_cannot_claim_to_be_the_operators(tmp_path: Path) -> None:
    from eval_pipelines.formats.loader import load_skill

    skill = _skill(tmp_path, "targets:\n  - {name: default, type: openai, model: m, "
                             "base_url: 'https://collector.example/v1', declared_by: operator}\n")
    with pytest.raises(SpecErrors) as caught:
        load_skill(skill, datasets_dir=None, extract_dir=tmp_path / "x")
    assert str(caught.value) == (f"{skill / 'targets.yaml'}:2: targets[0].declared_by: `declared_by` is not written "
                                 "in a targets file (expected no `declared_by`: where the file is decides it)")


def test_a_skill_packages_targets_are_the_suites_and_the_projects_are_the_operators(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from eval_pipelines.run.targets.config import load_targets_file
    from eval_pipelines.formats.loader import load_skill

    monkeypatch.delenv("EVAL_PIPELINES_TRUSTED_HOSTS", raising=False)
    line = "targets:\n  - {name: default, type: openai, model: m, base_url: 'https://collector.example/v1'}\n"
    skill = _skill(tmp_path, line)
    loaded = load_skill(skill, datasets_dir=None, extract_dir=tmp_path / "x")
    assert loaded.targets["default"].declared_by == "suite"
    assert any("is not sent to collector.example" in w for w in loaded.warnings)
    # The same file as the project's own (`run .` inside the skill folder): the operator's target.
    project = {t.name: t for t in load_targets_file(skill / "targets.yaml")}
    loaded = load_skill(skill, datasets_dir=None, extract_dir=tmp_path / "y", project_targets=project)
    assert loaded.targets["default"].declared_by == "operator"
    assert not any("is not sent" in w for w in loaded.warnings)


@pytest.mark.parametrize(("url", "listed", "sent"), [
    ("https://evil.example\\@api.openai.com/v1", "", False),  # the HTTP client's host is evil.example
    ("https://api.openai.com@evil.example/v1", "", False),
    ("https://api.openai.com.evil.example/v1", "", False),
    ("https://API.OpenAI.com./v1", "", True),
    ("https://api.openai.com/v1?x=@evil.example", "", False),
    ("https://proxy.internal/v1", "proxy.internal:443", True),  # https's default port
    ("http://proxy.internal/v1", "proxy.internal:443", False),
    ("http://[::1]:8000/v1", "[::1]:8000", True),
    ("http://[::1]:8001/v1", "[::1]:8000", False),
    ("ftp://api.openai.com/v1", "", False),
])
def test_only_a_plain_address_can_be_trusted(url: str, listed: str, sent: bool) -> None:
    config = _config(declared_by="suite", base_url=url)
    env = {"OPENAI_API_KEY": SECRET, "EVAL_PIPELINES_TRUSTED_HOSTS": listed}
    assert (resolve_connection(config, env)[0] == SECRET) is sent


def test_an_unreadable_address_is_withheld_with_a_reason_not_a_traceback() -> None:
    reason = withheld_key_reason(_config(declared_by="suite", base_url="http://[::1/v1"), {})
    assert reason is not None and "is not sent to [::1" in reason


def test_a_base_url_variable_cannot_name_a_secret(tmp_path: Path) -> None:
    """Its value is the host a request goes to: a key named there would be sent out as an address."""
    from eval_pipelines.run.targets.config import load_targets_file
    from eval_pipelines.formats.loader import load_suite

    targets = tmp_path / "targets.yaml"
    targets.write_text("targets:\n  - name: t\n    type: openai\n    model: m\n    base_url_env: OPENAI_API_KEY\n")
    with pytest.raises(SpecErrors) as caught:
        load_targets_file(targets)
    (line,) = str(caught.value).splitlines()
    assert line.startswith(f"{targets}:5: targets[0].base_url_env:") and "looks like a secret" in line
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text("env: {OPENAI_BASE_URL: $GITHUB_TOKEN}\nprompts: [hi]\nproviders: [openai:chat:m]\n"
                      "tests: [{vars: {}}]\n")
    with pytest.raises(SpecErrors) as caught:
        load_suite(config)
    assert "env.OPENAI_BASE_URL: GITHUB_TOKEN looks like a secret" in str(caught.value).splitlines()[0]
