"""An embeddings endpoint a user has (``[wiki] embeddings``), as the brief's vector signal.

Any server that speaks the OpenAI embeddings API: ``POST <url>`` with
``{"model": ..., "input": [texts]}`` answers ``{"data": [{"index": i,
"embedding": [...]}, ...]}`` (OpenAI, a local Ollama at
``http://localhost:11434/v1/embeddings``, llama.cpp's server, vLLM, ...). A
``url`` that does not end in ``/embeddings`` gets it appended, so the API's
base (``http://localhost:11434/v1``) works too. The key, if the server wants
one, is read from the environment variable named by ``key_env`` (never from
the file).

The endpoint is optional and never the only way: any failure (no server, a
refusal, a timeout, an answer of the wrong shape) raises ``EndpointError``
with one line that says what happened, and the brief falls back to the
offline models.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from tether.core.errors import TetherError

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

DEFAULT_TIMEOUT = 30.0
_SHOWN = 200  # characters of a refusal's body quoted in the error


class EndpointError(TetherError):
    """The embeddings endpoint could not give vectors (the line says why)."""


@dataclass(frozen=True)
class Endpoint:
    """One model on one OpenAI-compatible embeddings endpoint, as an ``Embedder``."""

    url: str
    model: str
    key_env: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    batch: int = 64

    @property
    def name(self) -> str:
        # vectors are kept per model: the same model behind another address gives the same
        return f"endpoint:{self.model}"

    @property
    def address(self) -> str:
        """The URL requests go to."""
        url = self.url.rstrip("/")
        return url if url.endswith("/embeddings") else url + "/embeddings"

    @property
    def passages(self) -> bool:
        # one vector per page: an endpoint is asked for the whole wiki, and a request per
        # passage would multiply what it costs
        return False

    def describe(self) -> str:
        return f"the embeddings endpoint {self.address} (model {self.model})"

    def embed(self, texts: list[str]) -> NDArray[np.float32]:
        import numpy as np

        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        answer = self._post({"model": self.model, "input": texts})
        rows = _embeddings(answer, len(texts))
        vectors = np.array(rows, dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        unit: NDArray[np.float32] = vectors / norms
        return unit

    def _post(self, payload: Mapping[str, Any]) -> Any:
        # imported here: every wiki command imports this module, few of them post
        import urllib.error
        import urllib.request

        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.key_env:
            key = os.environ.get(self.key_env, "")
            if not key:
                raise EndpointError(f"{self.key_env} is not set (the key for {self.describe()})")
            headers["Authorization"] = f"Bearer {key}"
        request = urllib.request.Request(  # noqa: S310 - the scheme is checked: http or https
            _checked(self.address),
            data=json.dumps(payload).encode("utf-8"),
            headers=headers,
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310
                body = response.read()
        except urllib.error.HTTPError as exc:
            text = exc.read(_SHOWN).decode("utf-8", "replace").strip().replace("\n", " ")
            raise EndpointError(
                f"{self.describe()} answered HTTP {exc.code}" + (f": {text}" if text else "")
            ) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
            raise EndpointError(f"{self.describe()} is not reachable: {reason}") from None
        try:
            return json.loads(body)
        except ValueError:
            raise EndpointError(f"{self.describe()} answered with no JSON") from None


def _checked(url: str) -> str:
    if urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).netloc:
        raise EndpointError(f"{url!r} is no http(s) URL")
    return url


def _embeddings(answer: Any, count: int) -> list[list[float]]:
    """The vectors of an embeddings answer, in the order of the texts asked for."""
    data = answer.get("data") if isinstance(answer, dict) else None
    if not isinstance(data, list) or len(data) != count:
        raise EndpointError(
            f"the embeddings endpoint answered {len(data) if isinstance(data, list) else 'no'}"
            f" vectors for {count} texts"
        )
    rows: list[list[float] | None] = [None] * count
    for position, item in enumerate(data):
        where = item.get("index", position) if isinstance(item, dict) else None
        vector = item.get("embedding") if isinstance(item, dict) else None
        if (
            not isinstance(where, int)
            or not 0 <= where < count
            or not isinstance(vector, list)
            or not vector
            or not all(isinstance(x, int | float) for x in vector)
        ):
            raise EndpointError("the embeddings endpoint answered a vector that is not a list")
        rows[where] = vector
    widths = {len(r) for r in rows if r is not None}
    if None in rows or len(widths) != 1:
        raise EndpointError("the embeddings endpoint answered vectors of different lengths")
    return [r for r in rows if r is not None]
