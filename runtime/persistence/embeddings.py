"""Embeddings for semantic recall of long-term notes, through the LangGraph store's own index.

``REINS_EMBEDDINGS=provider:model`` (e.g. ``openai:text-embedding-3-small``) picks a model through
LangChain's ``init_embeddings``, ``REINS_EMBEDDINGS_DIMS`` its vector size (default 1536). Without
it, ``LocalEmbeddings``: a deterministic bag-of-stems embedder (feature hashing of each keyword's
first five letters) that runs offline — close texts share words or word stems, so it finds
"deploy" in "deployments", not synonyms; a real embedding model finds those.
"""

from __future__ import annotations

import hashlib
import math
import os
from typing import Any

from langchain_core.embeddings import Embeddings

from reins.policies.assistant.memory import keywords
from reins.runtime.config.settings import SettingsError

EMBEDDINGS_ENV = "REINS_EMBEDDINGS"
DIMS_ENV = "REINS_EMBEDDINGS_DIMS"
DEFAULT_DIMS = 1536
LOCAL_DIMS = 256
STEM = 5


class LocalEmbeddings(Embeddings):
    """Deterministic offline embeddings (same text, same vector, on every machine)."""

    def __init__(self, dims: int = LOCAL_DIMS):
        self.dims = dims

    def _features(self, text: str) -> list[str]:
        return list(dict.fromkeys(word[:STEM] for word in keywords(text)))

    def _vector(self, text: str) -> list[float]:
        vector = [0.0] * self.dims
        for feature in self._features(text):
            digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
            slot = int.from_bytes(digest[:4], "big") % self.dims
            vector[slot] += 1.0 if digest[4] & 1 else -1.0
        norm = math.sqrt(sum(v * v for v in vector))
        return [v / norm for v in vector] if norm else vector

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vector(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)


def embeddings_from_env(env: Any = None) -> tuple[Embeddings, int]:
    """(the embeddings, their dimensions): ``REINS_EMBEDDINGS`` through ``init_embeddings``, else local."""
    env = os.environ if env is None else env
    name = env.get(EMBEDDINGS_ENV, "").strip()
    if not name:
        return LocalEmbeddings(), LOCAL_DIMS
    if ":" not in name:
        raise SettingsError(f"{EMBEDDINGS_ENV} must be provider:model, e.g. openai:text-embedding-3-small")
    raw_dims = env.get(DIMS_ENV, "").strip() or str(DEFAULT_DIMS)
    if not raw_dims.isdigit() or not 1 <= int(raw_dims) <= 65536:
        raise SettingsError(f"{DIMS_ENV} must be a whole number between 1 and 65536")
    from langchain.embeddings import init_embeddings

    try:
        return init_embeddings(name), int(raw_dims)
    except (ImportError, ValueError) as error:
        raise SettingsError(f"{EMBEDDINGS_ENV}: {str(error).splitlines()[0][:200]}") from None


def memory_index(env: Any = None) -> dict[str, Any]:
    """The store's index configuration: notes are embedded by their ``text`` field."""
    embeddings, dims = embeddings_from_env(env)
    return {"embed": embeddings, "dims": dims, "fields": ["text"]}


# The LangGraph server's store index (deploy/langgraph.json ``store.index.embed``): the offline embedder,
# LOCAL_DIMS wide; a deployment with an embedding model names ``provider:model`` there instead.
local_embeddings = LocalEmbeddings()
