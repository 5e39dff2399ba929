"""OpenAI embeddings API (``POST /v1/embeddings``), answered with scripted vectors.

A text's vector counts its words into ``DIM`` buckets (a word's bucket comes
from a hash of it), so texts that share words are close and texts that share
none are not; ``synonyms`` maps a word onto another before it is counted, so a
test can make two words it invented mean the same to this "model" and to no
other. Every text asked for is kept in ``texts`` (per model), so a test can
tell what a client embedded and what it had kept from before.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Mapping
from typing import Any

DIM = 64
_WORD = re.compile(r"[a-z0-9]+")


class ScriptedEmbeddings:
    """The embeddings side of the scripted model server."""

    def __init__(self, synonyms: Mapping[str, str] | None = None) -> None:
        self.synonyms = dict(synonyms or {})
        # an HTTP status to answer every request with instead (a failing server)
        self.fail_with: int | None = None
        self.texts: list[tuple[str, str]] = []  # (model, text), every text asked for
        self._lock = threading.Lock()

    def vector(self, text: str) -> list[float]:
        counts = [0.0] * DIM
        for word in _WORD.findall(text.lower()):
            word = self.synonyms.get(word, word)
            bucket = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest(), "big")
            counts[bucket % DIM] += 1.0
        return counts

    def embedded(self, model: str | None = None) -> list[str]:
        """The texts asked for so far (of ``model`` only, if given)."""
        with self._lock:
            return [t for m, t in self.texts if model is None or m == model]

    def answer(self, body: bytes) -> tuple[int, dict[str, Any]]:
        """(HTTP status, JSON body) for one request."""
        if self.fail_with is not None:
            return self.fail_with, {"error": {"message": "the scripted server was told to fail"}}
        try:
            request = json.loads(body)
        except ValueError:
            return 400, {"error": {"message": "the body is not JSON"}}
        texts = request.get("input") if isinstance(request, dict) else None
        model = request.get("model") if isinstance(request, dict) else None
        if isinstance(texts, str):
            texts = [texts]
        if (
            not isinstance(model, str)
            or not isinstance(texts, list)
            or not all(isinstance(t, str) for t in texts)
        ):
            return 400, {"error": {"message": "want a model and input: a list of strings"}}
        with self._lock:
            self.texts += [(model, t) for t in texts]
        data = [
            {"object": "embedding", "index": i, "embedding": self.vector(t)}
            for i, t in enumerate(texts)
        ]
        usage = {"prompt_tokens": sum(len(t.split()) for t in texts)}
        return 200, {"object": "list", "data": data, "model": model, "usage": usage}
