"""``update_to_json``/``update_from_json`` and ``queue_key``: an update kept while it waits.

The round trip keeps the kind, ``raw``, ``source`` and ``update_key`` of every update of every
fixture (the Meta examples included) and of generated envelopes; the queue key groups a
user's updates, a group's updates and the number's other updates, and holds no identifier.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from svc.webhook import (
    Update,
    UserIdentity,
    normalize,
    queue_key,
    queue_user,
    update_from_json,
    update_key,
    update_to_json,
    user_queue_keys,
)
from tests.http.test_projection_equivalence import envelopes

from .test_update_keys import _JSON, _KINDLESS, _META, HANDMADE

FIXTURES = Path(__file__).with_name("fixtures")
ALL_FIXTURES = sorted(FIXTURES.glob("*.json")) + sorted((FIXTURES / "meta_examples").glob("*.json"))


def _assert_round_trip(update: Update) -> None:
    data = update_to_json(update)
    assert isinstance(data, bytes)
    data.decode("ascii")  # plain ASCII: lone surrogates and any text travel as escapes
    back = update_from_json(data)
    assert back.kind == update.kind
    assert type(back) is type(update)
    assert back.raw == update.raw
    assert back.source == update.source
    assert back.source.value.get("metadata") == update.source.value.get("metadata")
    assert update_key(back) == update_key(update)
    assert queue_key(back) == queue_key(update)
    assert update_to_json(back) == data  # a fixed point


@pytest.mark.parametrize("path", ALL_FIXTURES, ids=lambda path: path.name)
def test_every_fixture_update_survives_the_round_trip(path: Path) -> None:
    envelope = json.loads(path.read_text(encoding="utf-8"))
    updates = normalize(envelope, received_at=1_760_000_000).updates
    for update in updates:
        _assert_round_trip(update)


def test_the_fixtures_cover_every_kind_they_hold() -> None:
    kinds = set()
    for path in ALL_FIXTURES:
        kinds |= {u.kind for u in normalize(json.loads(path.read_text("utf-8"))).updates}
    assert {"message", "status", "account", "callConnect", "groupLifecycle", "standby"} <= kinds


def test_handmade_envelopes_with_floats_big_integers_and_lone_surrogates() -> None:
    for envelope in HANDMADE:
        for update in normalize(envelope).updates:
            _assert_round_trip(update)


def test_the_kept_update_holds_only_its_own_item() -> None:
    envelope = json.loads((FIXTURES / "status_batch.json").read_text("utf-8"))
    updates = normalize(envelope).updates
    assert len(updates) > 1
    kept = json.loads(update_to_json(updates[1]))
    value = kept["envelope"]["entry"][0]["changes"][0]["value"]
    assert value["statuses"] == [updates[1].raw]


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"not json",
        b"[]",
        b'{"v": 2}',
        b'{"v": 1, "kind": "message", "envelope": {}}',
        b'{"v": 1, "kind": "status", "received_at": "x", "envelope": {"entry": []}}',
    ],
)
def test_what_is_not_a_kept_update_is_refused(data: bytes) -> None:
    with pytest.raises(ValueError):
        update_from_json(data)


def test_a_document_naming_another_kind_is_refused() -> None:
    update = normalize(json.loads((FIXTURES / "message_text.json").read_text("utf-8"))).updates[0]
    document = json.loads(update_to_json(update))
    document["kind"] = "status"
    with pytest.raises(ValueError):
        update_from_json(json.dumps(document).encode())


@settings(max_examples=150, deadline=None)
@given(envelopes(), _KINDLESS, _JSON, st.integers(0, 2**31))
def test_generated_envelopes_survive_the_round_trip(
    envelope: dict[str, Any], field: str, value: Any, received_at: int
) -> None:
    envelope["entry"][0]["changes"].append(
        {"field": field, "value": {"metadata": _META, "data": value}}
    )
    for update in normalize(envelope, received_at=received_at).updates:
        _assert_round_trip(update)


def _message(sender: dict[str, str], message_id: str, *, group: str | None = None) -> Update:
    item: dict[str, Any] = {"id": message_id, "timestamp": "1749424100", "type": "text"}
    item.update(sender)
    item["text"] = {"body": "hi"}
    if group is not None:
        item["group_id"] = group
    envelope = {
        "object": "whatsapp_business_account",
        "entry": [
            {
                "id": "102290129340398",
                "changes": [
                    {
                        "field": "messages",
                        "value": {"metadata": _META, "messages": [item]},
                    }
                ],
            }
        ],
    }
    return normalize(envelope).updates[0]


def test_queue_keys_follow_the_user_the_group_or_the_number() -> None:
    phone = {"from": "15551234567"}
    bsuid = {"from": "15551234567", "from_user_id": "US.1349120865530274191"}
    first, second = _message(phone, "wamid.1"), _message(phone, "wamid.2")
    assert queue_key(first) == queue_key(second)  # one user, one queue
    assert queue_key(_message({"from": "15557654321"}, "wamid.3")) != queue_key(first)
    # The BSUID is the identity key when present: another queue than the phone's.
    assert queue_key(_message(bsuid, "wamid.4")) != queue_key(first)
    in_group = _message(phone, "wamid.5", group="120363123456789012")
    other_member = _message({"from": "15557654321"}, "wamid.6", group="120363123456789012")
    assert queue_key(in_group) == queue_key(other_member) != queue_key(first)
    # A group message waits in the group's queue, never in its sender's.
    assert (queue_user(in_group), user_queue_keys(in_group)) == (None, ())
    account = normalize(json.loads((FIXTURES / "account_events.json").read_text("utf-8")))
    keys = {queue_key(u) for u in account.updates if u.phone_number_id is None}
    assert len(keys) <= 1  # WABA-level updates share the number's queue


def test_a_user_is_queued_by_their_bsuid_else_their_parent_bsuid_else_their_phone() -> None:
    phone, bsuid, parent = "15551234567", "US.1349120865530274191", "US.ENT.1181579921288684483"
    every = {"from": phone, "from_user_id": bsuid, "from_parent_user_id": parent}
    assert queue_key(_message(every, "wamid.1")) == queue_key(
        _message({"from_user_id": bsuid}, "wamid.2")
    )
    assert queue_key(_message({"from": phone, "from_parent_user_id": parent}, "wamid.3")) == (
        queue_key(_message({"from_parent_user_id": parent}, "wamid.4"))
    )
    assert queue_user(_message(every, "wamid.5")) == UserIdentity(
        wa_id=phone, user_id=bsuid, parent_user_id=parent
    )
    assert UserIdentity(wa_id=phone, user_id=bsuid, parent_user_id=parent).key == bsuid
    assert UserIdentity(wa_id=phone, parent_user_id=parent).key == parent
    assert UserIdentity(wa_id=phone).key == phone and UserIdentity().key is None


def test_a_queue_key_is_a_hash_holding_no_identifier() -> None:
    update = _message({"from": "15551234567"}, "wamid.1")
    key = queue_key(update)
    assert len(key) == 64 and int(key, 16) >= 0
    assert "15551234567" not in key and "106540352242922" not in key
