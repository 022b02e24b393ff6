"""``update_key``: one stable key per update, however a delivery groups or repeats it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from svc.webhook import normalize, update_key
from svc.webhook._signature import parse_envelope_floats
from tests.http.test_projection_equivalence import envelopes

from . import _update_key_reference as reference

FIXTURES = Path(__file__).with_name("fixtures")
GOLDEN = Path(__file__).with_name("update_keys_golden.json")
_META = {"display_phone_number": "15550783881", "phone_number_id": "106540352242922"}


def _envelope(field: str, value: dict[str, Any]) -> dict[str, Any]:
    return {
        "object": "whatsapp_business_account",
        "entry": [{"id": "102290129340398", "changes": [{"field": field, "value": value}]}],
    }


HANDMADE = [
    _envelope("flows", {"event": "X", "ratio": 1e-07, "neg": -0.0, "big": 2**70, "n": 3.0}),
    _envelope(
        "flows", {"name": "café ☕ 東京", "lone": "\ud800", "nested": {"b": [1, {"a": None}]}}
    ),
    _envelope("account_update", {"event": "VERIFIED_ACCOUNT", "é": True, "A": False}),
    _envelope(
        "messages",
        {
            "messaging_product": "whatsapp",
            "metadata": _META,
            "messages": [
                {"from": "16505551234", "id": "wamid.é1", "timestamp": "1", "type": "text",
                 "text": {"body": "hi"}}
            ],
            "statuses": [
                {"id": "wamid.S1", "status": "read", "timestamp": "2",
                 "recipient_id": "16505551234"}
            ],
        },
    ),
    _envelope(
        "smb_message_echoes",
        {
            "messaging_product": "whatsapp",
            "metadata": _META,
            "message_echoes": [
                {"from": "15550783881", "to": "16505551234", "id": "wamid.E1", "timestamp": "1",
                 "type": "text", "text": {"body": "x"}}
            ],
        },
    ),
]  # fmt: skip
"""Kinds without ids whose canonical JSON holds floats, big integers, non-ASCII text and a
lone surrogate; a message, a status and an echo with non-ASCII or plain ids."""


def _keys(envelope: Any) -> list[str]:
    return [update_key(u) for u in normalize(envelope).updates]


def _fast_keys(envelope: Any) -> list[str]:
    """The keys as the service takes them: the envelope read from its bytes, and the
    float-free canonical JSON wherever that read saw no float."""
    parsed, floats = parse_envelope_floats(json.dumps(envelope).encode())
    return [update_key(u, may_hold_floats=floats) for u in normalize(parsed).updates]


def _load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def test_every_fixture_update_has_a_hex_key_stable_across_key_order() -> None:
    for path in sorted(FIXTURES.glob("*.json")):
        envelope = json.loads(path.read_text(encoding="utf-8"))
        keys = _keys(envelope)
        assert all(len(k) == 64 and int(k, 16) >= 0 for k in keys), path.name
        reordered = json.loads(json.dumps(envelope, sort_keys=True))
        assert _keys(reordered) == keys, path.name


def test_a_message_keeps_its_key_in_another_grouping_and_statuses_differ_by_status() -> None:
    envelope = _load("message_text.json")
    value = envelope["entry"][0]["changes"][0]["value"]
    message = value["messages"][0]
    alone = _keys(envelope)
    value["messages"] = [dict(message, id="wamid.other"), message]
    assert _keys(envelope)[1] == alone[0]
    assert _keys(envelope)[0] != alone[0]
    statuses = _load("status_batch.json")
    items = statuses["entry"][0]["changes"][0]["value"]["statuses"]
    keys = _keys(statuses)
    pairs = [(s["id"], s["status"]) for s in items]
    assert len(set(keys)) == len(set(pairs))


def test_another_business_number_gives_another_key() -> None:
    envelope = _load("message_text.json")
    mine = _keys(envelope)
    envelope["entry"][0]["changes"][0]["value"]["metadata"]["phone_number_id"] = "1"
    assert _keys(envelope) != mine


def test_every_key_keeps_its_stored_value() -> None:
    """Keys are stored: the key of every fixture update and of the hand-made ones is pinned
    (values computed at main @ 29db921); a changed key would run an update again."""
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    for keys in (_keys, _fast_keys):
        found = {path.name: keys(_load(path.name)) for path in sorted(FIXTURES.glob("*.json"))}
        found |= {f"handmade[{i}]": keys(envelope) for i, envelope in enumerate(HANDMADE)}
        assert found == golden, keys.__name__
    assert sum(map(len, golden.values())) == 122


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(codec=None), max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(st.characters(codec=None), max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
"""Any parsed JSON value: floats, big integers, lone surrogates, nesting."""
_KINDLESS = st.sampled_from(
    ["flows", "account_update", "user_preferences", "group_lifecycle_update", "history"]
)
_CALLS = st.fixed_dictionaries(
    {"id": st.sampled_from(["wacid.1", "wacid.é"]), "event": st.sampled_from(["connect", "x"])},
    optional={"status": st.sampled_from(["RINGING", "ACCEPTED"])},
)


@settings(max_examples=150, deadline=None)
@given(envelopes(), _KINDLESS, _JSON, st.lists(_CALLS, max_size=2))
def test_every_key_equals_the_reference_form(
    envelope: dict[str, Any], field: str, value: Any, calls: list[dict[str, Any]]
) -> None:
    """The one-string form gives the reference form's key for messages, echoes, system
    messages, statuses, user-id changes, calls and kinds keyed by their canonical JSON."""
    changes = envelope["entry"][0]["changes"]
    changes.append({"field": field, "value": {"metadata": _META, "data": value}})
    changes.append({"field": "calls", "value": {"metadata": _META, "calls": calls}})
    updates = normalize(envelope).updates
    expected = [reference.update_key(u) for u in updates]
    assert [update_key(u) for u in updates] == expected
    assert _fast_keys(envelope) == expected
