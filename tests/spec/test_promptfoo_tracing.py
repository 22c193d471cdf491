"""promptfoo `tracing`: the block is read (not refused), trace assertions map onto the trace_*
graders, and a traced run against the fake OpenAI server stores a GenAI span per call that
trace-span-count, trace-error-spans and `context.trace` read."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from eval_pipelines.cli import main
from eval_pipelines.exit_codes import ExitCode
from eval_pipelines.spec.errors import SpecErrors
from eval_pipelines.spec.loader import load_suite
from eval_pipelines.store.connection import connect

CORPUS = Path(__file__).resolve().parents[1] / "data" / "promptfoo_examples"
TRACING = ("tracing:\n  enabled: true\n  otlp:\n    http:\n      enabled: true\n      port: 4319\n"
           "      acceptFormats: [json]\n      redactAttributes: [provider.id]\n")


def load(tmp_path: Path, head: str, asserts: str):  # noqa: ANN201
    (tmp_path / "promptfooconfig.yaml").write_text(
        head + "prompts: ['Say {{ word }}']\nproviders: [echo]\ntests:\n  - vars: {word: hello}\n    assert:\n" + asserts)
    return load_suite(tmp_path / "promptfooconfig.yaml")


def one_line_error(tmp_path: Path, head: str, asserts: str = "      - {type: contains, value: x}\n") -> str:
    with pytest.raises(SpecErrors) as caught:
        load(tmp_path, head, asserts)
    assert "Traceback" not in str(caught.value)
    return str(caught.value).splitlines()[0]


def test_tracing_block_and_trace_assertions_load(tmp_path: Path) -> None:
    suite, warnings = load(tmp_path, TRACING,
                           "      - {type: trace-span-count, value: {pattern: 'chat *', min: 1, max: 2}}\n"
                           "      - {type: not-trace-span-duration, value: {max: 5000, percentile: 95,"
                           " requirePresence: true}}\n"
                           "      - {type: trace-error-spans, value: 0}\n"
                           "      - {type: trace-error-spans, value: {max_percentage: 10, pattern: 'tool.*'}}\n")
    assert suite.tracing is not None
    assert (suite.tracing.otlp_port, suite.tracing.accept_formats, suite.tracing.redact_attributes) == (
        4319, ["json"], ["provider.id"])
    got = [(a.type, a.negate, a.config) for a in suite.tests[0].assertions]
    assert got == [
        ("trace_span_count", False, {"pattern": "chat *", "min": 1, "max": 2}),
        ("trace_span_duration", True, {"max": 5000, "percentile": 95, "require_presence": True}),
        ("trace_error_spans", False, {"max_count": 0}),
        ("trace_error_spans", False, {"max_percentage": 10, "pattern": "tool.*"}),
    ]
    assert not [w for w in warnings if "tracing" in w]


def test_trace_assertions_without_tracing_load_with_a_warning(tmp_path: Path) -> None:
    for head in ("", "tracing: {enabled: false}\n"):
        suite, warnings = load(tmp_path, head, "      - {type: trace-span-count, value: {pattern: '*', min: 1}}\n")
        assert suite.tracing is None
        assert any("not enabled, so trace-span-count find no trace" in w for w in warnings)


def test_tracing_fields_not_honoured_are_stored_warnings(tmp_path: Path) -> None:
    head = ("tracing:\n  enabled: true\n  failOnReceiverStartFailure: true\n  forwarding: {enabled: true, "
            "endpoint: 'http://collector:4318'}\n  otlp:\n    http: {enabled: true, host: 0.0.0.0}\n")
    suite, warnings = load(tmp_path, head, "      - {type: contains, value: x}\n")
    assert suite.tracing is not None and suite.tracing.otlp_port == 4318
    said = [w.split(": ", 1)[1] for w in warnings if "tracing." in w]
    assert [s.split(":")[0] for s in said] == ["tracing.otlp.http.host", "tracing.forwarding",
                                               "tracing.failOnReceiverStartFailure"]


def test_tracing_refusals_are_one_line(tmp_path: Path) -> None:
    assert "tracing.colour: unknown field" in one_line_error(tmp_path, "tracing: {enabled: true, colour: red}\n") \
        or "unknown field 'colour'" in one_line_error(tmp_path, "tracing: {enabled: true, colour: red}\n")
    assert "invalid tracing.otlp.http.acceptFormats" in one_line_error(
        tmp_path, "tracing: {enabled: true, otlp: {http: {acceptFormats: [xml]}}}\n")
    assert "invalid tracing.otlp.http.port" in one_line_error(
        tmp_path, "tracing: {enabled: true, otlp: {http: {port: 70000}}}\n")
    assert "without the OTLP/HTTP receiver" in one_line_error(
        tmp_path, "tracing: {enabled: true, otlp: {http: {enabled: false}}}\n")
    bad = "      - {type: trace-span-count, value: {pattern: '*'}}\n"
    assert "must include a min or max property" in one_line_error(tmp_path, TRACING, bad)
    bad = "      - {type: trace-span-count, value: {min: 1}}\n"
    assert "must have a value object with pattern property" in one_line_error(tmp_path, TRACING, bad)
    bad = "      - {type: trace-span-duration, value: {max: 10, percentile: 101}}\n"
    assert "percentile" in one_line_error(tmp_path, TRACING, bad)
    bad = "      - {type: trace-error-spans, value: {max_count: 1, colour: red}}\n"
    assert "unknown field(s) colour" in one_line_error(tmp_path, TRACING, bad)


def test_corpus_trace_configs_are_no_longer_refused_for_tracing() -> None:
    """Every corpus config with a `tracing` block loads, or fails for another reason than tracing."""
    refused = []
    for path in sorted(CORPUS.rglob("*.yaml")):
        text = path.read_text(errors="replace")
        if "\ntracing:" not in text:
            continue
        try:
            load_suite(path)
        except SpecErrors as exc:
            refused += [line for line in str(exc).splitlines()
                        if "OpenTelemetry" in line or re.search(r":\d+: tracing", line)]
        except Exception:  # noqa: BLE001 - other loaders' problems are not this test's
            continue
    assert refused == []


def run_config(tmp_path: Path, fake_openai, monkeypatch: pytest.MonkeyPatch,  # noqa: ANN001
               capsys: pytest.CaptureFixture[str], body: str) -> Path:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    provider = ("{id: 'openai:chat:fake-model', config: {apiBaseUrl: '" + fake_openai.base_url
                + "', apiKeyEnvar: FAKE_KEY}}")
    (tmp_path / "promptfooconfig.yaml").write_text(f"providers: [{provider}]\n" + body)
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "r.duckdb"
    code = main(["run", "promptfooconfig.yaml", "--db", str(db)])
    out = capsys.readouterr()
    assert code in (ExitCode.OK, ExitCode.GATE_FAILED), out
    return db


TESTS = ("prompts: ['Say {{ word }}']\n"
         "tests:\n"
         "  - vars: {word: hello}\n"
         "    assert:\n"
         "      - {type: trace-span-count, value: {pattern: 'chat fake-*', min: 1, max: 1}}\n"
         "      - {type: trace-error-spans, value: {max_count: 0}}\n"
         "      - {type: not-trace-span-count, value: {pattern: 'chat *', max: 0}}\n"
         "      - type: javascript\n"
         "        value: \"context.trace.spans.length === 1 && context.trace.spans[0].attributes"
         "['gen_ai.request.model'] === 'fake-model' && /^[0-9a-f]{32}$/.test(context.trace.traceId)\"\n")


def test_traced_run_stores_a_genai_span_per_call_and_grades_it(tmp_path: Path, fake_openai,  # noqa: ANN001
                                                               monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    fake_openai.answers = {"Say hello": "hello", "Say goodbye": "goodbye"}
    fake_openai.plan("500", "ok", "400")  # test 1: one retry (one span); test 2: a failed call
    body = (TRACING + "evaluateOptions: {maxConcurrency: 1}\n" + TESTS
            + "  - vars: {word: goodbye}\n    assert: [{type: contains, value: bye}]\n")
    db = run_config(tmp_path, fake_openai, monkeypatch, capsys, body)
    with connect(db) as con:
        rows = con.execute("SELECT test_id, attempts, error IS NULL, trace_id, spans FROM model_outputs "
                           "ORDER BY test_id").fetchall()
        grades = con.execute("SELECT assertion_index, passed, status, reason FROM grades WHERE test_id = 'test-1' "
                             "ORDER BY assertion_index").fetchall()
    assert len(rows) == 2 and rows[0][3] != rows[1][3]
    for test_id, attempts, ok, trace_id, spans_json in rows:
        spans = json.loads(spans_json)
        assert len(spans) == 1, spans  # one span per call, its retries included
        s = spans[0]
        assert s["trace_id"] == trace_id and s["name"] == "chat fake-model"
        assert s["attributes"]["gen_ai.system"] == "openai"
        assert s["attributes"]["gen_ai.operation.name"] == "chat"
        assert s["attributes"]["promptfoo.provider.id"] == "[REDACTED]"  # redactAttributes: [provider.id]
        assert s["end_ns"] >= s["start_ns"]
        if ok:
            assert (attempts, s["status_code"]) == (2, 1)
            assert s["attributes"]["gen_ai.response.finish_reasons"] == ["stop"]
        else:
            assert s["status_code"] == 2 and "HTTP 400" in s["status_message"]
    assert [g[:3] for g in grades] == [(0, True, "graded"), (1, True, "graded"), (2, True, "graded"),
                                       (3, True, "graded")]
    assert grades[0][3] == ('Found 1 spans matching pattern "chat fake-*" (expected 1-1). '
                            "Matched spans: chat fake-model")


def test_untraced_run_fails_trace_assertions_for_lack_of_a_trace(tmp_path: Path, fake_openai,  # noqa: ANN001
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    fake_openai.answers = {"Say hello": "hello"}
    db = run_config(tmp_path, fake_openai, monkeypatch, capsys, TESTS)
    with connect(db) as con:
        assert con.execute("SELECT trace_id, spans FROM model_outputs").fetchall() == [(None, None)]
        grades = con.execute("SELECT passed, status, reason FROM grades ORDER BY assertion_index").fetchall()
    assert grades[0] == (False, "error", "No trace data available for trace-span-count assertion")
    assert grades[2] == (False, "error", "No trace data available for trace-span-count assertion")
