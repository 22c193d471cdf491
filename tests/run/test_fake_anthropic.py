"""The Anthropic-Messages test server itself, over real HTTP with urllib (the ``anthropic``
package is not a dependency): scripted text and tool_use turns, plain and streamed, faults,
side requests, the other endpoints, and what it records."""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from tests.support.fake_anthropic import FakeAnthropicServer, text_turn, tool_results, tool_turn

TOOLS = [{"name": "Bash", "description": "run", "input_schema": {"type": "object"}}]


def post(server: FakeAnthropicServer, body: dict[str, Any], path: str = "/v1/messages") -> tuple[int, Any]:
    request = urllib.request.Request(server.root_url + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"content-type": "application/json", "x-api-key": "sk-ant-dummy",
                                              "anthropic-version": "2023-06-01"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            raw = response.read().decode()
            if response.headers.get("content-type", "").startswith("text/event-stream"):
                return response.status, sse_events(raw)
            return response.status, json.loads(raw)
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read().decode())


def sse_events(raw: str) -> list[dict[str, Any]]:
    events = []
    for chunk in raw.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in chunk.splitlines() if ": " in line)
        if "data" in fields:
            event = json.loads(fields["data"])
            assert fields["event"] == event["type"]
            events.append(event)
    return events


def ask(stream: bool = False, **extra: Any) -> dict[str, Any]:
    return {"model": "claude-test", "max_tokens": 100, "stream": stream, "tools": TOOLS,
            "messages": [{"role": "user", "content": "count the words"}], **extra}


def test_scripted_turns_plain_json() -> None:
    with FakeAnthropicServer(script=[tool_turn(("Bash", {"command": "wc -w input.txt"}), text="Counting."),
                                     "Five words."]) as server:
        status, first = post(server, ask())
        status2, second = post(server, ask())
        status3, third = post(server, ask())
    assert (status, status2, status3) == (200, 200, 200)
    assert first["type"] == "message" and first["role"] == "assistant" and first["stop_reason"] == "tool_use"
    text, call = first["content"]
    assert text == {"type": "text", "text": "Counting."}
    assert call["type"] == "tool_use" and call["name"] == "Bash" and call["input"] == {"command": "wc -w input.txt"}
    assert call["id"].startswith("toolu_")
    assert second["content"] == [{"type": "text", "text": "Five words."}] and second["stop_reason"] == "end_turn"
    assert third["content"][0]["text"] == "(script exhausted)"
    assert first["usage"]["input_tokens"] == 3 and first["usage"]["output_tokens"] > 0
    assert len(server.scripted_requests) == 3


def test_streamed_turns_send_the_real_event_sequence() -> None:
    with FakeAnthropicServer(script=[tool_turn(("Bash", {"command": "ls -la"}), text="Listing.")],
                             cache_read_tokens=7) as server:
        status, events = post(server, ask(stream=True))
    assert status == 200
    types = [e["type"] for e in events]
    assert types[0] == "message_start" and types[-2:] == ["message_delta", "message_stop"]
    assert types.count("content_block_start") == 2 and types.count("content_block_stop") == 2
    start = events[0]["message"]
    assert start["content"] == [] and start["usage"]["cache_read_input_tokens"] == 7
    deltas = [e["delta"] for e in events if e["type"] == "content_block_delta"]
    text = "".join(d["text"] for d in deltas if d["type"] == "text_delta")
    partial = "".join(d["partial_json"] for d in deltas if d["type"] == "input_json_delta")
    assert text == "Listing." and json.loads(partial) == {"command": "ls -la"}
    assert sum(d["type"] == "input_json_delta" for d in deltas) == 2  # the input arrives in pieces
    tool_start = [e for e in events if e["type"] == "content_block_start"][1]["content_block"]
    assert tool_start["type"] == "tool_use" and tool_start["name"] == "Bash" and tool_start["input"] == {}
    final = events[-2]
    assert final["delta"]["stop_reason"] == "tool_use" and final["usage"]["output_tokens"] > 0


def test_faults_answer_errors_and_leave_the_script_for_the_retry() -> None:
    with FakeAnthropicServer(script=["the turn"], fail_plan=["529", "500", "429", "ok"]) as server:
        answers = [post(server, ask()) for _ in range(4)]
    assert [a[0] for a in answers[:3]] == [529, 500, 429]
    assert answers[0][1] == {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    assert answers[1][1]["error"]["type"] == "api_error" and answers[2][1]["error"]["type"] == "rate_limit_error"
    assert answers[3] == (200, answers[3][1]) and answers[3][1]["content"][0]["text"] == "the turn"
    assert server.faults_served == ["529", "500", "429", "ok"]
    assert len(server.messages_requests) == 4 and len(server.scripted_requests) == 1


def test_a_cut_stream_stops_after_message_start() -> None:
    with FakeAnthropicServer(script=["never sent"], fail_plan=["cut-stream"]) as server:
        request = urllib.request.Request(server.root_url + "/v1/messages", data=json.dumps(ask(stream=True)).encode(),
                                         method="POST", headers={"content-type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as response:
            first = response.read1(65536)
            with pytest.raises((ConnectionError, http.client.IncompleteRead)):
                response.read()  # the chunked body never ends properly
    assert first.startswith(b"event: message_start\n") and b"content_block" not in first


def test_unknown_fault_names_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown fault name"):
        FakeAnthropicServer(fail_plan=["418"])


def test_side_requests_without_tools_leave_the_script_alone() -> None:
    with FakeAnthropicServer(script=["scripted"], side_reply="a title") as server:
        _, side = post(server, {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "title?"}]})
        _, main = post(server, ask())
    assert side["content"][0]["text"] == "a title" and main["content"][0]["text"] == "scripted"
    assert len(server.scripted_requests) == 1 and len(server.messages_requests) == 2


def test_a_callable_turn_sees_the_tool_results() -> None:
    def quote(body: dict[str, Any]) -> dict[str, Any]:
        return text_turn("you said: " + tool_results(body)[0]["content"])

    body = ask(messages=[
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "5"}]}])
    with FakeAnthropicServer(script=[quote], latency_plan=[0.01]) as server:
        _, answer = post(server, body)
    assert answer["content"][0]["text"] == "you said: 5"


def test_other_endpoints_answer_and_everything_is_recorded() -> None:
    with FakeAnthropicServer() as server:
        status, counted = post(server, {"model": "m", "messages": [{"role": "user", "content": "a b c"}]},
                               "/v1/messages/count_tokens")
        with urllib.request.urlopen(server.root_url + "/v1/models", timeout=10) as response:
            models = json.loads(response.read())
        head = urllib.request.Request(server.root_url + "/", method="HEAD")
        with urllib.request.urlopen(head, timeout=10) as response:
            head_status = response.status
        missing, error = post(server, {}, "/v1/complete")
        bad = urllib.request.Request(server.root_url + "/v1/messages", data=b"{not json", method="POST")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(bad, timeout=10)
    assert status == 200 and counted == {"input_tokens": 3}
    assert models["data"][0]["id"] == "claude-fake-1" and head_status == 200
    assert missing == 404 and error["error"]["type"] == "not_found_error"
    assert refused.value.code == 400
    assert server.paths == ["POST /v1/messages/count_tokens", "GET /v1/models", "HEAD /",
                            "POST /v1/complete", "POST /v1/messages"]
    assert server.records[0].headers["x-api-key"] == "sk-ant-dummy"
    assert server.records[-1].body is None and server.records[-1].raw == "{not json"
