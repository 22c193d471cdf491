"""promptfoo `tracing`: the block is read (not refused), trace assertions map onto the trace_*
graders, and a traced run against the fake OpenAI server stores a GenAI span per call that
trace-span-count, trace-error-spans and `context.trace` read."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from eval_pipelines.cli import main
from eval_pipelines.analysis.exit_codes import ExitCode
from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.formats.loader import load_suite
from eval_pipelines.store.connection import connect
from tests.support.promptfoo_run import run_config

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
            "endpoint: 'http://collector:4318'}\n  storage: {type: sqlite}\n"
            "  otlp:\n    http: {enabled: true, host: 0.0.0.0}\n    grpc: {enabled: true, port: 4317}\n")
    suite, warnings = load(tmp_path, head, "      - {type: contains, value: x}\n")
    assert suite.tracing is not None and suite.tracing.otlp_port == 4318
    said = [w.split(": ", 1)[1] for w in warnings if "tracing." in w]
    assert [s.split(":")[0] for s in said] == ["tracing.otlp.http.host", "tracing.forwarding",
                                               "tracing.failOnReceiverStartFailure", "tracing.storage",
                                               "tracing.otlp.grpc"]


def test_tracing_refusals_are_one_line(tmp_path: Path) -> None:
    assert "unknown field 'enable'; did you mean 'enabled'?" in one_line_error(tmp_path, "tracing: {enable: true}\n")
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
    # a second run answers test-1 from the response cache: its call still has its span, marked as a hit
    db = run_config(tmp_path, fake_openai, monkeypatch, capsys, body)
    with connect(db) as con:
        cached, spans_json = con.execute("SELECT cached, spans FROM model_outputs WHERE test_id = 'test-1' "
                                         "ORDER BY created_at DESC LIMIT 1").fetchone()
    hit = json.loads(spans_json)
    assert cached and len(hit) == 1 and hit[0]["attributes"]["promptfoo.cache_hit"] is True


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


SDK_PROVIDER = '''\
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.propagate import extract
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))  # OTLP/protobuf to the endpoint
tracer = provider.get_tracer("sdk-provider")


def call_api(prompt, options, context):
    with tracer.start_as_current_span("retrieve_document", context=extract({"traceparent": context["traceparent"]})) as span:
        span.set_attribute("api_key", "not-for-the-database")
        with tracer.start_as_current_span("tool.search") as child:
            child.set_attribute("tool.name", "search")
    provider.shutdown()
    return {"output": "sdk: " + prompt}
'''
# OTLP/JSON posted by hand (urllib): one span of our trace, one error span, one span of another trace.
JSON_PROVIDER = '''\
import json, os, urllib.request


def span(trace_id, span_id, parent, name, code):
    return {"traceId": trace_id, "spanId": span_id, "parentSpanId": parent, "name": name, "kind": 3,
            "startTimeUnixNano": "1700000000000000000", "endTimeUnixNano": "1700000000250000000",
            "attributes": [{"key": "db.rows", "value": {"intValue": "3"}}], "status": {"code": code}}


def call_api(prompt, options, context):
    _, trace_id, parent, _ = context["traceparent"].split("-")
    body = {"resourceSpans": [{"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "hand"}}]},
            "scopeSpans": [{"scope": {"name": "hand-made"}, "spans": [
                span(trace_id, "00000000000000a1", parent, "db.query", 1),
                span(trace_id, "00000000000000a2", parent, "db.write", 2),
                span("ffffffffffffffffffffffffffffffff", "00000000000000a3", None, "db.other", 1)]}]}]}
    request = urllib.request.Request(os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] + "/v1/traces",
                                     data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    urllib.request.urlopen(request, timeout=10).read()
    return {"output": "json: " + prompt}
'''


@pytest.mark.slow
def test_traced_python_providers_export_spans_to_the_receiver_in_their_sandbox(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("opentelemetry.sdk")
    (tmp_path / "sdk_provider.py").write_text(SDK_PROVIDER)
    (tmp_path / "json_provider.py").write_text(JSON_PROVIDER)
    (tmp_path / "promptfooconfig.yaml").write_text(
        "tracing:\n  enabled: true\n  otlp:\n    http:\n      port: 4318\n      redactAttributes: [api_key]\n"
        "prompts: ['Say {{ word }}']\n"
        "providers: ['file://sdk_provider.py', 'file://json_provider.py']\n"
        "tests:\n  - vars: {word: hi}\n    assert:\n"
        "      - {type: trace-span-count, value: {pattern: '*', min: 2, max: 2}}\n"
        "      - {type: trace-error-spans, value: {max_count: 0}}\n"
        "      - type: trajectory:step-count\n        value: {type: tool, pattern: search, min: 1}\n")
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "r.duckdb"
    code = main(["run", "promptfooconfig.yaml", "--db", str(db)])
    assert code in (ExitCode.OK, ExitCode.GATE_FAILED), capsys.readouterr()
    with connect(db) as con:
        rows = con.execute("SELECT target, output, trace_id, spans, trace_error FROM model_outputs "
                           "ORDER BY target").fetchall()
        grades = con.execute("SELECT target, assertion_index, passed, reason FROM grades "
                             "ORDER BY target, assertion_index").fetchall()
    (json_target, json_out, json_trace, json_spans, json_err), (sdk_target, sdk_out, sdk_trace, sdk_spans, sdk_err) = rows
    assert (json_out, sdk_out, json_err, sdk_err) == ("json: Say hi", "sdk: Say hi", None, None)
    hand = json.loads(json_spans)  # the span of another trace is not kept
    assert [(s["name"], s["trace_id"], s["status_code"]) for s in hand] == [
        ("db.query", json_trace, 1), ("db.write", json_trace, 2)]
    assert hand[0]["attributes"]["db.rows"] == 3 and hand[0]["attributes"]["service.name"] == "hand"
    assert hand[0]["end_ns"] - hand[0]["start_ns"] == 250_000_000
    sdk = {s["name"]: s for s in json.loads(sdk_spans)}  # protobuf bodies, decoded
    assert set(sdk) == {"retrieve_document", "tool.search"}
    assert sdk["retrieve_document"]["attributes"]["api_key"] == "[REDACTED]"  # never stored as written
    assert sdk["tool.search"]["parent_span_id"] == sdk["retrieve_document"]["span_id"]
    assert all(s["trace_id"] == sdk_trace for s in sdk.values())
    by_target = {(t, i): (p, r) for t, i, p, r in grades}
    assert by_target[(sdk_target, 0)][0] and by_target[(sdk_target, 1)][0] and by_target[(sdk_target, 2)][0]
    assert by_target[(json_target, 0)][0]
    assert by_target[(json_target, 1)] == (False, "Found 1 error spans, expected at most 0. Errors: db.write "
                                                  "(status: 2)")
    assert not by_target[(json_target, 2)][0]  # no tool step among its spans


def test_a_tests_metadata_tracing_enabled_traces_that_test_only(tmp_path: Path, fake_openai,  # noqa: ANN001
                                                                monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """promptfoo's isTracingEnabled: test.metadata.tracingEnabled, or the suite's tracing.enabled."""
    fake_openai.answers = {"Say hello": "hello", "Say goodbye": "goodbye"}
    body = ("prompts: ['Say {{ word }}']\ntests:\n"
            "  - vars: {word: hello}\n    metadata: {tracingEnabled: true}\n"
            "    assert: [{type: trace-span-count, value: {pattern: 'chat *', min: 1}}]\n"
            "  - vars: {word: goodbye}\n    assert: [{type: contains, value: bye}]\n")
    db = run_config(tmp_path, fake_openai, monkeypatch, capsys, body)
    with connect(db) as con:
        rows = con.execute("SELECT test_id, trace_id IS NOT NULL, json_array_length(spans) FROM model_outputs "
                           "ORDER BY test_id").fetchall()
        passed = con.execute("SELECT passed FROM grades WHERE test_id = 'test-1'").fetchall()
        warnings = con.execute("SELECT warnings::VARCHAR FROM suites").fetchone()[0]
    assert rows == [("test-1", True, 1), ("test-2", False, None)]
    assert passed == [(True,)] and "not enabled" not in warnings
