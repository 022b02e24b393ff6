"""The projection mapping, sans-IO: rows, sightings and identity changes of updates and sends."""

from __future__ import annotations

from datetime import UTC, datetime

from svc.http._projection import IdentityChange, delivery_projection, send_projection
from svc.store import UserIdentityRecord
from svc.webhook import normalize

from .conftest import T0, fixture

BSUID = "US.13491208655302741918"
PARENT = "US.ENT.11815799212886844830"


def _now() -> datetime:
    return T0


def _at(seconds: int) -> datetime:
    return datetime.fromtimestamp(seconds, tz=UTC)


def test_a_bsuid_only_message_is_a_row_and_a_sighting_with_its_username() -> None:
    updates = normalize(fixture("bsuid_message_username_no_phone.json")).updates
    projection = delivery_projection(updates, _now)
    [row] = projection.messages
    assert (row.from_phone, row.user_id, row.parent_user_id) == (None, BSUID, PARENT)
    assert projection.identities == (
        UserIdentityRecord(
            user_id=BSUID,
            parent_user_id=PARENT,
            username="@sheena",
            last_seen_at=_at(1779321024),
        ),
    )
    assert projection.unprojected == 0


def test_a_message_naming_its_user_through_its_contact_is_a_row_with_that_phone() -> None:
    phone = "16505551234"
    text = {"type": "text", "text": {"body": "hi"}, "timestamp": "1779321024"}
    value = {
        "metadata": {"display_phone_number": "15550783881", "phone_number_id": "106540352242922"},
        "contacts": [{"profile": {"name": "N"}, "wa_id": phone, "user_id": BSUID}],
        "messages": [{"id": "wamid.C1", **text}, {"id": "wamid.C2", "from_user_id": BSUID, **text}],
    }
    change = {"field": "messages", "value": value}
    envelope = {"object": "whatsapp_business_account", "entry": [{"id": "1", "changes": [change]}]}
    projection = delivery_projection(normalize(envelope).updates, _now)
    assert [(r.wa_message_id, r.from_phone, r.user_id) for r in projection.messages] == [
        ("wamid.C1", phone, BSUID),
        ("wamid.C2", phone, BSUID),
    ]
    assert projection.unprojected == 0


def test_identity_events_become_changes_and_a_new_number_is_not_a_sighting() -> None:
    updates = normalize(fixture("bsuid_identity_changes.json")).updates
    projection = delivery_projection(updates, _now)
    assert projection.changes == (
        IdentityChange(user=BSUID, new_user_id=None, new_wa_id="12195555358", at=_at(1779321040)),
        IdentityChange(
            user=BSUID, new_user_id="US.99887766554433221100", new_wa_id=None, at=_at(1779321041)
        ),
        IdentityChange(
            user=BSUID, new_user_id="US.99887766554433221100", new_wa_id=None, at=_at(1779321042)
        ),
    )
    wa_ids = {i.wa_id for i in projection.identities if i.user_id is None}
    assert "12195555358" not in wa_ids
    assert any(i.user_id == "US.99887766554433221100" for i in projection.identities)


def test_a_send_to_a_bsuid_or_parent_records_it_by_user_id() -> None:
    answer = {"messages": [{"id": "wamid.X"}]}
    cases = [
        ({"to": "15551234567", "type": "text"}, ("15551234567", None, None)),
        ({"recipient": BSUID, "type": "text"}, (None, BSUID, None)),
        ({"recipient": PARENT, "type": "text"}, (None, None, PARENT)),
    ]
    for payload, expected in cases:
        projected = send_projection(payload, answer, _now)
        assert projected is not None
        row = projected[0]
        assert (row.to_phone, row.user_id, row.parent_user_id) == expected


def test_a_field_the_store_refuses_empties_the_rows_but_keeps_the_changes() -> None:
    """A business number id over the store's 64 characters (the reader allows 256) is refused
    while building, as the store would refuse the record: no rows, the identity changes stay."""
    payload = fixture("bsuid_identity_changes.json")
    text = fixture("message_text.json")["entry"][0]["changes"][0]["value"]["messages"][0]
    value = payload["entry"][0]["changes"][0]["value"]
    value["messages"].append(text)
    kept = delivery_projection(normalize(payload).updates, _now)
    assert kept.refusal is None and len(kept.messages) == 1 and len(kept.changes) == 3
    value["metadata"]["phone_number_id"] = "1" * 65
    projection = delivery_projection(normalize(payload).updates, _now)
    assert projection.refusal is not None and projection.refusal.code == "invalid_record"
    assert projection.messages == () and projection.statuses == ()
    assert projection.identities == ()
    assert projection.changes == kept.changes
