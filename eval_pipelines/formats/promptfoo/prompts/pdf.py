"""A PDF given as a promptfoo variable: its text, as promptfoo's renderPrompt gives it.

promptfoo (src/evaluatorHelpers.ts ``extractTextFromPDF``) replaces a ``file://x.pdf`` variable
with the document's text (pdf-parse), trimmed. Here the text is pypdf's: each page's text, the
pages joined by a newline, trimmed; spacing inside a page can differ from pdf-parse's, the words
do not. A PDF is untrusted input and its parser can be made to spin or swell (compressed streams,
deep object graphs), so the extraction runs in the sandbox (30 s, 1 GB, no network), never in
this process; a file that does not parse, holds no text, or is too much for those limits is a
one-line load error.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from eval_pipelines.formats.eval_yaml.fields import LoadContext
from eval_pipelines.suite.source import Document

TIMEOUT_S = 30.0
MEMORY_MB = 1024
MAX_TEXT_BYTES = 10_000_000
_EXTRACT = """\
import json, sys
from pypdf import PdfReader
reader = PdfReader(sys.argv[1])
sys.stdout.write(json.dumps({"text": "\\n".join(page.extract_text() or "" for page in reader.pages)}))
"""


def pdf_text(ctx: LoadContext, doc: Document, path: tuple[Any, ...], file: Path) -> str | None:
    """The PDF's text (errors recorded, None on failure)."""
    from eval_pipelines.run.sandbox.runner import run_sandboxed

    try:
        data = file.read_bytes()
    except OSError as exc:
        ctx.error(doc, path, f"cannot read {file.name}: {exc.strerror or exc}", "a readable PDF file")
        return None
    result = run_sandboxed(["python", "-c", _EXTRACT, "document.pdf"], stdin=b"", timeout_s=TIMEOUT_S,
                           memory_mb=MEMORY_MB, files={"document.pdf": data}, max_output_bytes=MAX_TEXT_BYTES)
    if result.output_truncated:
        ctx.error(doc, path, f"{file.name}: more than {MAX_TEXT_BYTES} bytes of text", "a smaller PDF")
        return None
    if result.error or result.timed_out or result.returncode != 0:
        lines = [line.strip() for line in result.stderr_tail(2000).splitlines() if line.strip()]
        why = result.error or (f"timed out after {TIMEOUT_S:g} s" if result.timed_out
                               else lines[-1][-200:] if lines else f"exited with {result.returncode}")
        ctx.error(doc, path, f"{file.name}: the PDF's text could not be read: {why}", "a PDF with text")
        return None
    text = json.loads(result.stdout_text())["text"].strip()
    if not text:  # a scan: promptfoo would send an empty variable; nothing to evaluate here
        ctx.error(doc, path, f"{file.name}: the PDF holds no text (a scanned image?)", "a PDF with text")
        return None
    return text
