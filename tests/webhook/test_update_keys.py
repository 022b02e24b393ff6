"""``update_key``: one stable key per update, however a delivery groups or repeats it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from svc.webhook import normalize, update_key

FIXTURES = Path(__file__).with_name("fixtures")


def _keys(envelope: Any) -> list[str]:
    return [update_key(u) for u in normalize(envelope).updates]


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
