"""Images and audio in promptfoo chat prompts (suite/content_parts.py, formats/promptfoo/prompts/media.py).

The prompts are promptfoo's own example files (tests/data/promptfoo_examples: openai-vision's
prompt.json, openai-responses' prompt.image.json, openai-audio's audio-input.json). promptfoo
sends a message's part list as written; a variable naming an image, video or audio file is the
file's bytes as base64 (src/evaluatorHelpers.ts renderPrompt: ``imageBuffer.toString('base64')``).
"""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

import pytest

from eval_pipelines.cli import main
from eval_pipelines.analysis.exit_codes import ExitCode
from eval_pipelines.suite.errors import SpecErrors
from eval_pipelines.formats.loader import load_suite
from eval_pipelines.store.connection import connect

EXAMPLES = Path(__file__).resolve().parents[1] / "data" / "promptfoo_examples"
VISION_URL = ("https://upload.wikimedia.org/wikipedia/commons/thumb/d/dd/Gfp-wisconsin-madison-the-nature-"
              "boardwalk.jpg/2560px-Gfp-wisconsin-madison-the-nature-boardwalk.jpg")


def dumped(case) -> list[dict]:  # noqa: ANN001
    return [m.model_dump(mode="json") for m in case.input]


def test_the_vision_examples_load_with_typed_image_parts() -> None:
    suite, _ = load_suite(EXAMPLES / "openai-vision" / "promptfooconfig.yaml")
    case, = suite.tests
    # input_text/input_image (Responses shapes) become the chat completions text/image_url parts,
    # each text field rendered with the test's variables.
    assert dumped(case) == [{"role": "user", "content": f"What do you see?\n[image: {VISION_URL}]",
                             "parts": [{"type": "text", "text": "What do you see?"},
                                       {"type": "image_url", "image_url": {"url": VISION_URL}}]}]
    # text-only graders and reports see the text and a placeholder naming the image, not nothing
    assert case.user_text == f"What do you see?\n[image: {VISION_URL}]"
    suite, _ = load_suite(EXAMPLES / "openai-responses" / "promptfooconfig.image.yaml")
    case, = suite.tests
    parts = case.input[0].parts
    assert parts is not None and [p.type for p in parts] == ["text", "image_url"]
    assert parts[0].text.endswith("a short story inspired by it about secret service agents.")
    assert parts[1].image_url.url.endswith("Commander_Biden_22_December_2021_%28cropped_to_face%29.jpg")


def test_an_audio_file_variable_is_base64_in_an_input_audio_part(tmp_path: Path) -> None:
    clip = bytes(range(256)) * 3  # not text: read as bytes, never decoded
    (tmp_path / "assets").mkdir()
    (tmp_path / "assets" / "clip.mp3").write_bytes(clip)
    shutil.copy(EXAMPLES / "openai-audio" / "audio-input.json", tmp_path / "audio-input.json")
    (tmp_path / "promptfooconfig.yaml").write_text(
        "prompts: [{id: file://audio-input.json}]\nproviders: [echo]\n"
        "tests: [{vars: {audio_file: file://assets/clip.mp3}}]\n")
    suite, _ = load_suite(tmp_path / "promptfooconfig.yaml")
    case, = suite.tests
    encoded = base64.b64encode(clip).decode()
    assert case.metadata["vars"] == {"audio_file": encoded}  # promptfoo's renderPrompt: no data: prefix
    message, = case.input
    assert [p.model_dump() for p in message.parts or []] == [
        {"type": "text", "text": "What is in this recording?"},
        {"type": "input_audio", "input_audio": {"data": encoded, "format": "mp3"}}]
    assert message.content == f"What is in this recording?\n[audio: mp3, {len(clip)} bytes]"  # no base64


def test_the_audio_example_fails_only_on_its_absent_mp3_files() -> None:
    # promptfoo's examples/openai-audio/assets holds only a README in the stored index: the mp3s are absent.
    with pytest.raises(SpecErrors) as caught:
        load_suite(EXAMPLES / "openai-audio" / "promptfooconfig.yaml")
    errors = [str(e) for e in caught.value.errors]
    assert "tests[0].vars.audio_file: file not found: file://assets/Armstrong_Small_Step.mp3" in errors[0]
    assert len(errors) == 2 and "file://assets/Kennedy_berliner.mp3" in errors[1]  # no second error per test


@pytest.mark.parametrize(("part", "expected"), [
    ('{"type": "input_file", "file_id": "f"}', "content[1].type: content part type 'input_file' is not supported"),
    ('{"type": "input_audio", "input_audio": {"data": "AAAA", "format": "ogg"}}',
     "content[1].input_audio.format: input_audio part: Input should be 'wav' or 'mp3'"),
    ('{"type": "input_image", "file_id": "file-1"}', "content[1].file_id: an input_image by `file_id`"),
    ('{"type": "image_url", "image_url": {"url": "{{ url }}", "size": 3}}',
     "content[1].image_url.size: image_url part: Extra inputs are not permitted"),
])
def test_a_part_that_cannot_be_sent_is_refused_in_one_line(tmp_path: Path, part: str, expected: str) -> None:
    (tmp_path / "p.json").write_text(f'[{{"role": "user", "content": [{{"type": "text", "text": "hi"}}, {part}]}}]')
    (tmp_path / "promptfooconfig.yaml").write_text(
        "prompts: [file://p.json]\nproviders: [echo]\ntests: [{vars: {url: 'http://i'}}]\n")
    with pytest.raises(SpecErrors) as caught:
        load_suite(tmp_path / "promptfooconfig.yaml")
    line = str(caught.value.errors[0])
    assert "\n" not in line and "prompt 'p.json' message 1 " + expected in line, line


def _pdf(*pages: str) -> bytes:
    """A small, valid PDF whose pages show these lines of text (Helvetica), offsets computed."""
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(len(pages)))
    objects = ["<< /Type /Catalog /Pages 2 0 R >>", f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>",
               "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    for i, text in enumerate(pages):
        stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> "
                       f">> /Contents {5 + 2 * i} 0 R >>")
        objects.append(f"<< /Length {len(stream)} >>\nstream\n{stream.decode()}\nendstream")
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode()
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    return out + f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()


def test_a_pdf_variable_is_its_text_read_in_the_sandbox(tmp_path: Path) -> None:
    # promptfoo's renderPrompt: a file://x.pdf variable is the document's text, trimmed.
    (tmp_path / "doc.pdf").write_bytes(_pdf("Attention is all you need.", "Transformers replace recurrence."))
    (tmp_path / "promptfooconfig.yaml").write_text(
        "prompts: ['Summarise: {{ doc }}']\nproviders: [echo]\ntests: [{vars: {doc: file://doc.pdf}}]\n")
    suite, _ = load_suite(tmp_path / "promptfooconfig.yaml")
    text = suite.tests[0].input[-1].content
    assert text == "Summarise: Attention is all you need.\nTransformers replace recurrence."
    assert suite.tests[0].metadata["vars"]["doc"].startswith("Attention is all")


@pytest.mark.parametrize(("data", "needle"), [
    (b"%PDF-1.4\nnot really a pdf", "doc.pdf: the PDF's text could not be read"),
    (_pdf(""), "doc.pdf: the PDF holds no text"),
])
def test_a_pdf_without_text_is_one_line(tmp_path: Path, data: bytes, needle: str) -> None:
    (tmp_path / "doc.pdf").write_bytes(data)
    (tmp_path / "promptfooconfig.yaml").write_text(
        "prompts: ['Summarise {{ doc }}']\nproviders: [echo]\ntests: [{vars: {doc: file://doc.pdf}}]\n")
    with pytest.raises(SpecErrors) as caught:
        load_suite(tmp_path / "promptfooconfig.yaml")
    line = str(caught.value).strip()
    assert needle in line and "\n" not in line and "Traceback" not in line, line


def test_the_vision_example_sends_the_image_part_to_the_model_and_stores_it(
        tmp_path: Path, fake_openai, capsys: pytest.CaptureFixture[str],  # noqa: ANN001
        monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(EXAMPLES / "openai-vision", tmp_path / "openai-vision")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.chdir(tmp_path / "openai-vision")
    fake_openai.answers["What do you see?"] = "A wooden boardwalk through a marsh."  # the text parts
    db = tmp_path / "r.duckdb"
    code = main(["run", "promptfooconfig.yaml", "--db", str(db)])
    out = capsys.readouterr()
    assert code == ExitCode.OK, out
    bodies = [b for b in fake_openai.requests if b and "messages" in b]
    assert len(bodies) == 1
    assert bodies[0]["messages"] == [{"role": "user", "content": [
        {"type": "text", "text": "What do you see?"},
        {"type": "image_url", "image_url": {"url": VISION_URL}}]}]
    with connect(db) as con:
        stored, shown = con.execute("SELECT messages, input FROM test_cases").fetchone()
        url = con.execute("SELECT json_extract_string(messages, '$[0].parts[1].image_url.url') "
                          "FROM test_cases").fetchone()[0]
        passed = con.execute("SELECT count(*) FROM grades WHERE passed").fetchone()[0]
    assert json.loads(stored)[0]["parts"][1] == {"type": "image_url", "image_url": {"url": VISION_URL}}
    assert url == VISION_URL and shown == f"What do you see?\n[image: {VISION_URL}]"
    assert passed == 1  # `contains: boardwalk` graded the model's answer


def test_a_command_target_refuses_a_case_with_an_image(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copy(EXAMPLES / "openai-vision" / "prompt.json", tmp_path / "prompt.json")
    (tmp_path / "promptfooconfig.yaml").write_text(
        "prompts: [file://prompt.json]\nproviders: [echo]\n"
        "tests: [{vars: {question: hi, url: 'http://img/1.png'}, assert: [{type: contains, value: hi}]}]\n")
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "r.duckdb"
    main(["run", "promptfooconfig.yaml", "--db", str(db)])
    capsys.readouterr()
    with connect(db) as con:
        output, error = con.execute("SELECT output, error FROM model_outputs").fetchone()
        warnings = con.execute("SELECT warnings FROM suites").fetchone()[0]
    assert ("prompt 'prompt.json' sends image or audio parts: command target 'echo' cannot take them, "
            "so its rows for these cases are errors") in warnings  # said at load time too
    assert output is None
    assert error == ("a command target cannot take image_url content parts (its stdin is text); "
                     "run this case on an OpenAI-compatible target")


def test_a_yaml_chat_prompt_with_an_image_part_is_typed_and_templated(tmp_path: Path) -> None:
    (tmp_path / "promptfooconfig.yaml").write_text(
        "prompts:\n  - label: look\n    messages:\n      - {role: system, content: 'Be brief.'}\n"
        "      - role: user\n        content:\n          - {type: text, text: 'Is {{ thing }} here?'}\n"
        "          - {type: image_url, image_url: {url: 'data:image/png;base64,{{ pic }}', detail: low}}\n"
        "providers: [echo]\ntests: [{vars: {thing: a cat, pic: iVBORw0KGgo}}]\n")
    suite, _ = load_suite(tmp_path / "promptfooconfig.yaml")
    system, user = suite.tests[0].input
    assert system.model_dump() == {"role": "system", "content": "Be brief."}  # text messages dump as before
    assert user.model_dump(mode="json")["parts"] == [
        {"type": "text", "text": "Is a cat here?"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo", "detail": "low"}}]
    assert user.content == "Is a cat here?\n[image: data:image/png;base64, 11 characters]"


def test_the_response_cache_tells_two_images_apart() -> None:
    from eval_pipelines.run.cache import request_hash
    from eval_pipelines.run.targets.base import TargetRequest
    from eval_pipelines.run.targets.config import OpenAITargetConfig
    from eval_pipelines.suite.content_parts import parse_parts
    from eval_pipelines.suite.models import Message

    def key(url: str) -> str:
        message = Message.of_parts("user", parse_parts([{"type": "text", "text": "What is it?"},
                                                        {"type": "image_url", "image_url": {"url": url}}]))
        return request_hash(OpenAITargetConfig(name="m", model="m"), None,
                            TargetRequest("t", 0, None, [message], 30.0))

    # same text view ("[image: data:image/png;base64, 4 characters]"): only the parts differ
    assert key("data:image/png;base64,AAAA") != key("data:image/png;base64,BBBB")


def test_a_judge_reads_the_text_parts_and_a_placeholder_for_the_image() -> None:
    from eval_pipelines.grading.graders._judging import input_text

    suite, _ = load_suite(EXAMPLES / "openai-vision" / "promptfooconfig.yaml")
    assert input_text(suite.tests[0]) == f"What do you see?\n[image: {VISION_URL}]"


def test_a_base64_variable_in_a_text_prompt_is_cut_in_the_html_report(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # promptfoo writes the base64 into the text, and so do we (the model gets it whole); the page cuts it.
    (tmp_path / "pic.png").write_bytes(b"\x89PNG" * 10_000)
    (tmp_path / "promptfooconfig.yaml").write_text(
        "description: pics\nprompts: ['Describe {{ pic }}']\nproviders: ['exec: printf done']\n"
        "tests: [{vars: {pic: file://pic.png}, assert: [{type: contains, value: done}]}]\n")
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "r.duckdb"
    assert main(["run", "promptfooconfig.yaml", "--db", str(db)]) == ExitCode.OK, capsys.readouterr()
    with connect(db) as con:
        stored = con.execute("SELECT input FROM test_cases").fetchone()[0]
    encoded = base64.b64encode(b"\x89PNG" * 10_000).decode()
    assert stored == f"Describe {encoded}"  # stored whole
    page, = [p.read_text() for p in (tmp_path / "reports").rglob("*.html")]  # the run's own report
    assert encoded not in page and encoded[:1000] in page
    assert f"{len(stored) - 20_000} more characters (the whole input is in test_cases.messages)" in page


def test_a_function_prompt_returning_image_parts_gives_a_message_with_parts(tmp_path: Path) -> None:
    (tmp_path / "prompt.py").write_text(
        "def build(context):\n"
        "    v = context['vars']\n"
        "    return [{'role': 'user', 'content': [{'type': 'input_text', 'text': 'Name ' + v['q']},\n"
        "                                         {'type': 'input_image', 'image_url': v['url']}]}]\n")
    (tmp_path / "promptfooconfig.yaml").write_text(
        "prompts: ['file://prompt.py:build']\nproviders: [echo]\n"
        "tests: [{vars: {q: it, url: 'http://img/2.png'}}]\n")
    suite, _ = load_suite(tmp_path / "promptfooconfig.yaml")
    assert dumped(suite.tests[0]) == [{"role": "user", "content": "Name it\n[image: http://img/2.png]",
                                       "parts": [{"type": "text", "text": "Name it"},
                                                 {"type": "image_url", "image_url": {"url": "http://img/2.png"}}]}]
