"""``read_users``: every update's ``user``, a user named again in one change read once."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings

from svc.webhook import (
    MessageUpdate,
    StatusUpdate,
    UpdateSource,
    UserIdentity,
    normalize,
    read_users,
)
from tests.http.test_projection_equivalence import envelopes

_META = {"display_phone_number": "15550783881", "phone_number_id": "106540352242922"}


@settings(max_examples=200, deadline=None)
@given(envelopes(), envelopes())
def test_read_users_equals_each_updates_user(first: dict[str, Any], second: dict[str, Any]) -> None:
    """Over messages, echoes, system messages, statuses and user-id changes with contacts that
    match, differ or are missing, and two envelopes' changes in one delivery."""
    first["entry"].extend(second["entry"])
    updates = normalize(first).updates
    assert read_users(updates) == [getattr(u, "user", None) for u in updates]


def _message(value: dict[str, Any], sender: str) -> MessageUpdate:
    source = UpdateSource(field="messages", phone_number_id="1", value=value)
    return MessageUpdate(source=source, raw={"id": "wamid.1", "from": sender, "type": "text"})


def test_the_same_ids_in_two_changes_read_each_changes_contacts() -> None:
    ann = {"contacts": [{"wa_id": "1555", "profile": {"name": "Ann", "username": "ann"}}]}
    bob = {"contacts": [{"wa_id": "1555", "user_id": "US.2", "profile": {"name": "Bob"}}]}
    updates = (_message(ann, "1555"), _message(bob, "1555"), _message(ann, "1555"))
    assert read_users(updates) == [
        UserIdentity(wa_id="1555", username="ann", name="Ann"),
        UserIdentity(wa_id="1555", user_id="US.2", name="Bob"),
        UserIdentity(wa_id="1555", username="ann", name="Ann"),
    ]


def test_ids_of_any_raw_type_read_as_each_updates_user() -> None:
    """Unhashable, non-string and equal-comparing raw ids (``1``, ``1.0``, ``True``) read
    alike with or without the memo: as missing."""
    value: dict[str, Any] = {"contacts": [{"wa_id": "1555", "profile": {"name": "Ann"}}]}
    source = UpdateSource(field="messages", phone_number_id="1", value=value)
    raws: list[dict[str, Any]] = [
        {"id": "s1", "status": "read", "recipient_id": {"x": 1}},
        {"id": "s2", "status": "read", "recipient_id": ["1555"], "recipient_user_id": "US.1"},
        {"id": "s3", "status": "read", "recipient_id": 1, "recipient_user_id": "US.1"},
        {"id": "s4", "status": "read", "recipient_id": True, "recipient_user_id": "US.1"},
        {"id": "s5", "status": "read", "recipient_id": "1555"},
        {"id": "s6", "status": "read", "recipient_id": "1555", "recipient_type": "group"},
    ]
    updates = tuple(StatusUpdate(source=source, raw=raw) for raw in raws)
    users = read_users(updates)
    assert users == [u.user for u in updates]
    assert users[0] is None and users[5] is None
    assert users[4] == UserIdentity(wa_id="1555", name="Ann")
