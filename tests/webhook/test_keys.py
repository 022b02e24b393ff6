"""Event key and body hash for durable dedupe."""

from __future__ import annotations

import hashlib
import json

from svc.webhook import body_hash, canonical_json, event_key

ENVELOPE = {
    "object": "whatsapp_business_account",
    "entry": [
        {"id": "102290129340398", "changes": [{"field": "messages", "value": {"b": 1, "a": "é"}}]}
    ],
}


def test_event_key_is_stable_across_key_order_and_whitespace() -> None:
    compact = json.dumps(ENVELOPE, separators=(",", ":")).encode()
    pretty = json.dumps(ENVELOPE, indent=4, sort_keys=True, ensure_ascii=True).encode()
    reordered = {"entry": ENVELOPE["entry"], "object": ENVELOPE["object"]}
    keys = {event_key(json.loads(compact)), event_key(json.loads(pretty)), event_key(reordered)}
    assert len(keys) == 1
    assert body_hash(compact) != body_hash(pretty)


def test_event_key_is_sha256_of_canonical_json() -> None:
    canonical = canonical_json(ENVELOPE)
    assert (
        canonical
        == json.dumps(ENVELOPE, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    )
    assert "é".encode() in canonical
    assert event_key(ENVELOPE) == hashlib.sha256(canonical).hexdigest()


def test_event_key_changes_with_content() -> None:
    other = json.loads(json.dumps(ENVELOPE))
    other["entry"][0]["id"] = "1"
    assert event_key(other) != event_key(ENVELOPE)


def test_lone_surrogates_are_hashable() -> None:
    envelope = json.loads('{"object":"x","entry":["\\ud800"]}')
    assert len(event_key(envelope)) == 64


def test_body_hash_is_sha256_of_raw_bytes() -> None:
    body = b'{"object": "x", "entry": []}'
    assert body_hash(body) == hashlib.sha256(body).hexdigest()
