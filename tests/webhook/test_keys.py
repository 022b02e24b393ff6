"""Event key and body hash for durable dedupe."""

from __future__ import annotations

import hashlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from svc.webhook import body_hash, canonical_json, event_key, receive_delivery
from svc.webhook._keys import float_free_canonical_json
from svc.webhook._signature import parse_envelope_floats
from tests._support import sign

SECRET = "keys-test-secret"

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


_ANY_TEXT = st.text(alphabet=st.characters(blacklist_categories=()), max_size=12)
"""Every code point, lone surrogates and controls included (json.loads gives them from escapes)."""
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(-(2**64), 2**64)
    | _ANY_TEXT
    | st.sampled_from(["1.5", ":1.5", "null", "-0", "\u2028", "\x7f", '"', "\\", "/"])
)
_FLOATS = st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from(
    [1e-7, 1e-5, 1e16, 1e22, 5e-324, 1.5e300, 0.1, -0.0, 2.0**70]
)
_KEYS = _ANY_TEXT | st.sampled_from(["a", "B", "é", "\U0001f600", "\ud800", "\uffff"])


def _json_values(scalars: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
    return st.recursive(
        scalars,
        lambda children: (
            st.lists(children, max_size=4) | st.dictionaries(_KEYS, children, max_size=4)
        ),
        max_leaves=24,
    )


def _reference_canonical(value: object) -> bytes:
    """The canonical form as event keys were first stored: json.dumps, sorted, compact."""
    text = json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
    return text.encode("utf-8", "surrogatepass")


def _envelope(value: object) -> dict[str, object]:
    return {"object": "whatsapp_business_account", "entry": [value]}


@settings(max_examples=1500, deadline=None)
@given(_json_values(_SCALARS))
def test_the_float_free_canonical_json_is_byte_identical_for_any_json_value_without_floats(
    value: object,
) -> None:
    expected = _reference_canonical(value)
    assert float_free_canonical_json(value) == expected
    assert canonical_json(value) == expected
    reparsed = json.loads(expected.decode("utf-8", "surrogatepass"))
    assert float_free_canonical_json(reparsed) == expected
    envelope = _envelope(value)
    key = hashlib.sha256(_reference_canonical(envelope)).hexdigest()
    assert event_key(envelope, may_hold_floats=False) == key
    assert event_key(envelope) == key


@settings(max_examples=1000, deadline=None)
@given(_json_values(_SCALARS | _FLOATS))
def test_a_received_delivery_keeps_the_event_key_of_its_canonical_json(value: object) -> None:
    envelope = _envelope(value)
    body = json.dumps(envelope, ensure_ascii=True).encode()
    delivery = receive_delivery(body, sign(body=body, secret=SECRET), SECRET)
    expected = hashlib.sha256(_reference_canonical(json.loads(body))).hexdigest()
    assert delivery.event_key == expected
    assert delivery.may_hold_floats == _has_float(value)


def _has_float(value: object) -> bool:
    if isinstance(value, float):
        return True
    if isinstance(value, list):
        return any(_has_float(item) for item in value)
    if isinstance(value, dict):
        return any(_has_float(item) for item in value.values())
    return False


@settings(max_examples=300, deadline=None)
@given(_json_values(_FLOATS))
def test_a_parse_that_reads_a_float_says_so(value: object) -> None:
    body = json.dumps(_envelope([value, 1.5])).encode()
    _, floats = parse_envelope_floats(body)
    assert floats


def test_a_parse_without_floats_says_so() -> None:
    body = json.dumps(_envelope({"a": [1, "1.5", None, True, 2**70]})).encode()
    _, floats = parse_envelope_floats(body)
    assert not floats


@pytest.mark.parametrize("value", [{1: "x"}, {"a": (1, 2)}, 2**64, -(2**63) - 1, "\udfff"])
def test_values_orjson_refuses_take_the_json_dumps_path(value: object) -> None:
    assert float_free_canonical_json(value) == _reference_canonical(value)
