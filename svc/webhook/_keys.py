"""Durable-dedupe keys of a delivery: the event key of the envelope and the hash of the raw body."""

from __future__ import annotations

import json
from typing import Any

from svc.crypto import sha256_hex

__all__ = ["body_hash", "canonical_json", "event_key"]


def canonical_json(envelope: Any) -> bytes:
    """The canonical UTF-8 JSON of a parsed envelope: sorted keys, compact separators."""
    text = json.dumps(
        envelope, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
    # "surrogatepass" keeps lone surrogates (valid JSON escapes) hashable.
    return text.encode("utf-8", "surrogatepass")


def event_key(envelope: Any) -> str:
    """SHA-256 hex of ``canonical_json(envelope)``: stable across key order and whitespace."""
    return sha256_hex(canonical_json(envelope))


def body_hash(body: bytes) -> str:
    """SHA-256 hex of the raw body bytes, exactly as received."""
    return sha256_hex(body)
