"""Users without phone numbers: identities on updates, the new kind, and the never-skip rule."""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from svc.webhook import (
    MessageUpdate,
    StatusUpdate,
    SystemUpdate,
    UserIdentity,
    UserIdUpdate,
    normalize,
    receive_delivery,
)

from .conftest import load

BSUID = "US.13491208655302741918"
PARENT = "US.ENT.11815799212886844830"
PHONE = "16505551234"
SECRET = b"identity-test-secret"


def test_a_username_user_without_a_phone_is_delivered_with_their_identity() -> None:
    result = normalize(load("bsuid_message_username_no_phone.json"))
    assert result.skipped == ()
    [update] = result.updates
    assert isinstance(update, MessageUpdate)
    assert update.from_ is None  # the phone field stays, empty
    assert update.text == "hello without a phone"
    assert update.user == UserIdentity(
        user_id=BSUID, parent_user_id=PARENT, username="@sheena", name="Sheena Nelson"
    )
    assert "Sheena" not in repr(update.user) and BSUID not in repr(update.user)


def test_a_user_without_a_phone_has_the_profile_name_of_their_contact() -> None:
    contacts = [
        {"profile": {"name": "Sheena Nelson"}, "user_id": BSUID},
        {"profile": {"name": "Omar Haddad"}, "user_id": "US.55", "parent_user_id": PARENT},
    ]
    text = {"type": "text", "text": {"body": "hi"}, "timestamp": "1779321024"}
    messages = [
        {"id": "wamid.S", "from_user_id": BSUID, **text},
        {"id": "wamid.O", "from_parent_user_id": PARENT, **text},
    ]
    value = {"messaging_product": "whatsapp", "contacts": contacts, "messages": messages}
    change = {"field": "messages", "value": value}
    envelope = {"object": "whatsapp_business_account", "entry": [{"id": "1", "changes": [change]}]}
    sheena, omar = normalize(envelope).updates
    assert isinstance(sheena, MessageUpdate) and isinstance(omar, MessageUpdate)
    assert (sheena.profile_name, omar.profile_name) == ("Sheena Nelson", "Omar Haddad")
    [alone] = normalize(load("bsuid_message_username_no_phone.json")).updates
    assert isinstance(alone, MessageUpdate) and alone.profile_name == "Sheena Nelson"


def test_a_message_with_phone_and_bsuid_carries_both() -> None:
    [update] = normalize(load("bsuid_message_with_phone.json")).updates
    assert isinstance(update, MessageUpdate)
    assert update.from_ == PHONE
    assert update.user == UserIdentity(wa_id=PHONE, user_id=BSUID, name="Sheena Nelson")


def test_statuses_name_the_recipient_and_a_failed_status_needs_no_contacts() -> None:
    read, failed = normalize(load("bsuid_statuses.json")).updates
    assert isinstance(read, StatusUpdate) and isinstance(failed, StatusUpdate)
    assert read.recipient_id is None
    assert read.user == UserIdentity(user_id=BSUID, parent_user_id=PARENT, username="@sheena")
    assert (failed.status, failed.user) == ("failed", UserIdentity(wa_id=PHONE))


def test_identity_change_events_are_typed() -> None:
    number, user_id, update = normalize(load("bsuid_identity_changes.json")).updates
    assert isinstance(number, SystemUpdate) and isinstance(user_id, SystemUpdate)
    assert number.system_type == "user_changed_number"
    assert number.user == UserIdentity(wa_id=PHONE, user_id=BSUID)
    assert number.new_user == UserIdentity(wa_id="12195555358")
    assert user_id.system_type == "user_changed_user_id"
    assert user_id.user == UserIdentity(user_id=BSUID)
    assert user_id.new_user == UserIdentity(user_id="US.99887766554433221100")
    assert isinstance(update, UserIdUpdate)
    assert update.kind == "userIdUpdate"
    assert update.previous == UserIdentity(wa_id=PHONE, user_id=BSUID, parent_user_id=PARENT)
    assert update.current == UserIdentity(
        wa_id=PHONE, user_id="US.99887766554433221100", parent_user_id="US.ENT.22334455667788990011"
    )
    assert update.timestamp == 1779321042


def test_a_contacts_answer_to_a_contact_info_request_is_marked() -> None:
    [update] = normalize(load("bsuid_contact_info_answer.json")).updates
    assert isinstance(update, MessageUpdate)
    assert update.answers_contact_request
    assert update.user is not None and update.user.user_id == BSUID
    [card] = update.content.contacts  # type: ignore[union-attr]
    assert (card.phones[0].wa_id, card.phones[0].user_id) == (PHONE, BSUID)
    [plain] = normalize(load("bsuid_message_with_phone.json")).updates
    assert isinstance(plain, MessageUpdate) and not plain.answers_contact_request


def test_the_delivery_lists_its_identities_once_each() -> None:
    body = json.dumps(load("bsuid_identity_changes.json")).encode()
    tag = "sha256=" + hmac.new(SECRET, body, hashlib.sha256).hexdigest()
    delivery = receive_delivery(body, tag, SECRET, received_at=1_790_000_000)
    assert delivery.identities == (
        UserIdentity(wa_id=PHONE, user_id=BSUID),
        UserIdentity(wa_id="12195555358"),
        UserIdentity(user_id=BSUID),
        UserIdentity(user_id="US.99887766554433221100"),
        UserIdentity(
            wa_id=PHONE, user_id="US.99887766554433221100",
            parent_user_id="US.ENT.22334455667788990011",
        ),
        UserIdentity(wa_id=PHONE, user_id=BSUID, parent_user_id=PARENT),
    )  # fmt: skip


def test_the_delivery_lists_the_participants_a_group_event_names() -> None:
    """Added, removed and failed participants are users the delivery names: a phone and a
    BSUID named together there link in the store's identity map like a sender's."""
    envelope = load("groups_participants.json")
    events = envelope["entry"][0]["changes"][0]["value"]["groups"]
    events[0]["added_participants"][0]["user_id"] = BSUID
    events[2]["failed_participants"][0]["user_id"] = "US.99887766554433221100"
    body = json.dumps(envelope).encode()
    tag = "sha256=" + hmac.new(SECRET, body, hashlib.sha256).hexdigest()
    identities = receive_delivery(body, tag, SECRET, received_at=1_790_000_000).identities
    assert UserIdentity(wa_id=PHONE, user_id=BSUID) in identities
    assert UserIdentity(wa_id="447700900123", user_id="US.99887766554433221100") in identities
    assert UserIdentity(wa_id=PHONE) in identities  # the removed participant, by phone alone


_FIELDS = {
    "message.from": PHONE,
    "message.from_user_id": BSUID,
    "message.from_parent_user_id": PARENT,
    "contact.wa_id": PHONE,
    "contact.user_id": BSUID,
    "contact.parent_user_id": PARENT,
}


@given(
    present=st.sets(st.sampled_from(sorted(_FIELDS)), min_size=1),
    stamp=st.sampled_from([None, "1779321024", "soon"]),
)
def test_a_message_naming_its_user_by_any_field_is_never_skipped(
    present: set[str], stamp: str | None
) -> None:
    message: dict[str, Any] = {"id": "wamid.H", "type": "text", "text": {"body": "hi"}}
    if stamp is not None:
        message["timestamp"] = stamp
    contact: dict[str, Any] = {"profile": {"name": "N"}}
    for name in present:
        where, key = name.split(".")
        (message if where == "message" else contact)[key.removeprefix("message.")] = _FIELDS[name]
    value = {"messaging_product": "whatsapp", "contacts": [contact], "messages": [message]}
    change = {"field": "messages", "value": value}
    envelope = {"object": "whatsapp_business_account", "entry": [{"id": "1", "changes": [change]}]}
    result = normalize(envelope, received_at=1_790_000_000)
    assert result.skipped == ()
    [update] = result.updates
    assert isinstance(update, MessageUpdate)
    assert update.user is not None
    named = {update.user.wa_id, update.user.user_id, update.user.parent_user_id} - {None}
    assert named >= {_FIELDS[name] for name in present if name.startswith("message.")}
    assert update.timestamp == (1779321024 if stamp == "1779321024" else 1_790_000_000)
    assert update.timestamp_missing is (stamp != "1779321024")
