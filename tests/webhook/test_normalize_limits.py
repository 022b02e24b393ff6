"""Every item read, bounded per-item work on hostile envelopes, and totality on arbitrary JSON."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from svc.webhook import (
    MAX_ID_LENGTH,
    MAX_NESTED,
    MAX_TYPE_LENGTH,
    SKIP_REASONS,
    UPDATE_KINDS,
    ContactsContent,
    MessageUpdate,
    StatusUpdate,
    is_safe_id,
    normalize,
)

from .conftest import read_all


def envelope(*changes: dict[str, Any], entries: int = 1) -> dict[str, Any]:
    return {
        "object": "whatsapp_business_account",
        "entry": [{"id": "1", "changes": list(changes)} for _ in range(entries)],
    }


def status(n: int, **extra: Any) -> dict[str, Any]:
    return {"id": f"wamid.{n}", "status": "sent", "timestamp": "1700000000", **extra}


def test_every_item_of_a_long_list_is_read() -> None:
    result = normalize(
        envelope({"field": "messages", "value": {"statuses": [status(n) for n in range(12_000)]}})
    )
    assert [u.message_id for u in result.updates] == [f"wamid.{n}" for n in range(12_000)]
    assert result.skipped == ()


def test_every_list_change_and_entry_is_read() -> None:
    change = {"field": "messages", "value": {"statuses": [status(n) for n in range(300)]}}
    result = normalize(envelope(change, change, entries=3))  # 1,800 items
    assert len(result.updates) == 1_800 and result.skipped == ()


def test_thousands_of_entries_and_changes_are_each_looked_at() -> None:
    result = normalize({"object": "x", "entry": [{"changes": []}] * 5000})
    assert result == normalize({"object": "x", "entry": []})  # nothing to read, nothing skipped
    many_changes = {"object": "x", "entry": [{"changes": [{"field": "x"}] * 5000}]}
    result = normalize(many_changes)
    assert [s.reason for s in result.skipped] == ["malformed_change"] * 5000
    assert result.skipped[-1].location == "entry[0].changes[4999]"


def test_long_ids_skip_their_item() -> None:
    long = "9" * (MAX_ID_LENGTH + 1)
    edge = "9" * MAX_ID_LENGTH
    result = normalize(
        envelope(
            {"field": "messages", "value": {"statuses": [status(0, id=long), status(1, id=edge)]}},
            {
                "field": "messages",
                "value": {
                    "messages": [{"id": "m", "type": "text", "text": {"body": "x"}, "from": long}]
                },
            },
            {
                "field": "calls",
                "value": {"calls": [{"id": long, "event": "connect"}], "statuses": [{"id": long}]},
            },
            {
                "field": "group_status_update",
                "value": {"groups": [{"group_id": long, "type": "group_suspend"}]},
            },
            {"field": "user_preferences", "value": {"user_preferences": [{"wa_id": long}]}},
            {
                "field": "messages",
                "value": {"metadata": {"phone_number_id": long}, "statuses": [status(2)]},
            },
            {"field": "x" * (MAX_ID_LENGTH + 1), "value": {}},
        )
    )
    assert [u.message_id for u in result.updates] == [edge]  # exactly 256 characters passes
    reasons = [s.reason for s in result.skipped]
    assert reasons == ["id_too_long"] * 6 + ["id_too_long", "malformed_change"]


@pytest.mark.parametrize(
    ("word", "kept"),
    [
        ("sent", True),
        ("pending_review", True),  # a word the platform may add later is delivered
        ("x" * MAX_TYPE_LENGTH, True),
        ("x" * (MAX_TYPE_LENGTH + 1), False),
        ("", False),
        ("   ", False),
        ("read\nfailed", False),
        (7, False),
        (None, False),
    ],
)
def test_a_status_needs_a_status_word_of_1_to_64_printable_characters(
    word: Any, kept: bool
) -> None:
    result = normalize(
        envelope({"field": "messages", "value": {"statuses": [status(0, status=word)]}})
    )
    assert [u.status for u in result.updates if isinstance(u, StatusUpdate)] == (
        [word] if kept else []
    )
    assert [s.reason for s in result.skipped] == ([] if kept else ["malformed_status"])


def test_a_huge_id_is_not_copied_or_scanned() -> None:
    huge = "w" * 1_000_000
    result = normalize(envelope({"field": "messages", "value": {"statuses": [status(0, id=huge)]}}))
    assert result.updates == ()
    assert result.skipped[0].reason == "id_too_long"
    assert huge not in repr(result)


def test_nested_lists_are_read_up_to_the_cap() -> None:
    cards = [{"name": {"formatted_name": f"c{n}"}} for n in range(MAX_NESTED * 4)]
    message = {
        "id": "wamid.C",
        "from": "16505551234",
        "timestamp": "1749416383",
        "type": "contacts",
        "contacts": cards,
    }
    [update] = normalize(envelope({"field": "messages", "value": {"messages": [message]}})).updates
    content = update.content
    assert isinstance(content, ContactsContent)
    assert len(content.contacts) == MAX_NESTED


def test_skip_reasons_are_from_the_documented_set() -> None:
    assert {
        "malformed_entry",
        "malformed_change",
        "unsupported_field",
        "id_too_long",
    } <= SKIP_REASONS


# --- Hypothesis ------------------------------------------------------------------------

json_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)

KEYS = [
    "id",
    "type",
    "from",
    "to",
    "timestamp",
    "text",
    "body",
    "image",
    "audio",
    "contacts",
    "context",
    "interactive",
    "button_reply",
    "reaction",
    "order",
    "product_items",
    "location",
    "latitude",
    "status",
    "errors",
    "conversation",
    "pricing",
    "origin",
    "recipient_id",
    "recipient_type",
    "group_id",
    "event",
    "session",
    "duration",
    "start_time",
    "system",
    "identity",
    "wa_id",
    "profile",
    "name",
    "value",
    "added_participants",
    "group_subject",
    "profile_picture",
    "metadata",
    "phone_number_id",
    "display_phone_number",
    "messages",
    "statuses",
    "calls",
    "groups",
    "user_preferences",
    "error_data",
    "referred_product",
    "phones",
    "emails",
    "org",
    "event_type",
    "edit",
    "message",
    "original_message_id",
    "unsupported",
    "revoke",
    "call_permission_reply",
    "response",
    "expiration_timestamp",
    "is_permanent",
    "message_echoes",
    "group_id",
]
TYPES = [
    "text",
    "image",
    "audio",
    "contacts",
    "interactive",
    "button",
    "reaction",
    "order",
    "location",
    "system",
    "request_welcome",
    "unsupported",
    "connect",
    "terminate",
    "button_reply",
    "list_reply",
    "nfm_reply",
    "group_suspend",
    "group_create",
    "edit",
    "revoke",
    "call_permission_reply",
    "video",
]
FIELDS = [
    "messages",
    "calls",
    "group_lifecycle_update",
    "group_participants_update",
    "group_settings_update",
    "group_status_update",
    "user_preferences",
    "account_update",
    "message_template_status_update",
    "flows",
    "smb_message_echoes",
    "",
]

shaped_values = st.recursive(
    json_scalars | st.sampled_from(TYPES),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=6)
    ),
    max_leaves=12,
)


@st.composite
def items(draw: st.DrawFn) -> list[Any]:
    """A list of item-like objects: mostly dicts with the platform's keys, sometimes anything."""
    out = []
    for _ in range(draw(st.integers(0, 4))):
        if draw(st.booleans()):
            item = {
                "id": draw(st.text(min_size=1, max_size=5)),
                "type": draw(st.sampled_from(TYPES)),
                "status": draw(st.sampled_from(["sent", "read"])),
                "event": draw(st.sampled_from(["connect", "terminate"])),
                "from": draw(st.text(min_size=1, max_size=5)),
                "timestamp": draw(st.sampled_from(["1749416383", 1749416383, "x"])),
            }
            for key in draw(st.lists(st.sampled_from(KEYS), max_size=8)):
                item[key] = draw(shaped_values)
            out.append(item)
        else:
            out.append(draw(shaped_values))
    return out


@st.composite
def envelopes(draw: st.DrawFn) -> dict[str, Any]:
    entries: list[Any] = []
    for _ in range(draw(st.integers(0, 3))):
        if not draw(st.integers(0, 5)):
            entries.append(draw(shaped_values))
            continue
        changes: list[Any] = []
        for _ in range(draw(st.integers(0, 3))):
            value: dict[str, Any] = {}
            for key in draw(st.lists(st.sampled_from(LIST_KEYS), max_size=4)):
                value[key] = draw(items())
            if draw(st.booleans()):
                value["metadata"] = draw(shaped_values)
            field = draw(st.sampled_from(FIELDS) | st.text(max_size=5))
            changes.append({"field": field, "value": value})
        entry: dict[str, Any] = {"id": draw(st.text(max_size=5) | st.none()), "changes": changes}
        if draw(st.booleans()):
            entry["time"] = draw(json_scalars)
        entries.append(entry)
    return {"object": "whatsapp_business_account", "entry": entries}


LIST_KEYS = [
    "messages",
    "statuses",
    "calls",
    "groups",
    "user_preferences",
    "contacts",
    "errors",
    "message_echoes",
]


RECEIVED_AT = 1_700_000_000
"""The receipt time the service always passes: a message without a readable timestamp reads it."""


def read_everything(result: Any) -> None:
    for update in result.updates:
        assert update.kind in UPDATE_KINDS
        values = read_all(update)
        for value in values.values():
            read_all(value)
            if isinstance(value, tuple):
                for item in value:
                    read_all(item)
        repr(update)
        if isinstance(update, MessageUpdate):
            # What the HTTP layer projects is always usable: safe ids, a time, a type word.
            assert is_safe_id(update.message_id)
            assert update.from_ is not None and is_safe_id(update.from_)
            assert update.timestamp is not None  # its own, else the receipt time
            assert 0 < len(update.type) <= MAX_TYPE_LENGTH and update.type.isprintable()
        if isinstance(update, StatusUpdate):
            assert is_safe_id(update.message_id)
            assert update.status.isprintable() and not update.status.isspace()
    for skip in result.skipped:
        assert skip.reason in SKIP_REASONS
        assert skip.count >= 1


@pytest.mark.slow
@given(json_values)
def test_arbitrary_json_never_raises(value: Any) -> None:
    read_everything(normalize(value, received_at=RECEIVED_AT))
    read_everything(normalize({"object": "x", "entry": [value]}, received_at=RECEIVED_AT))
    read_everything(
        normalize({"object": "x", "entry": [{"changes": [value]}]}, received_at=RECEIVED_AT)
    )


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(envelopes())
def test_envelope_shaped_json_never_raises_and_reads_totally(value: Any) -> None:
    read_everything(normalize(value, received_at=RECEIVED_AT))


@pytest.mark.parametrize(
    ("waba_id", "reason"),
    [
        ("9" * (MAX_ID_LENGTH + 1), "id_too_long"),
        ("\u0663" * 5, None),  # Arabic-Indic digits are decimal and printable: a safe id
        ("12\u200b34", "unsafe_id"),
        ("   ", "unsafe_id"),
        ("", "unsafe_id"),
        (102290129340398, "malformed_entry"),
    ],
)
def test_entry_ids_take_the_same_rule_as_every_id(waba_id: Any, reason: str | None) -> None:
    """The decimal shortcut for the entry id never admits what the complete id check refuses."""
    data = {"entry": [{"id": waba_id, "changes": [{"field": "messages", "value": {}}]}]}
    result = normalize(data)
    assert [s.reason for s in result.skipped if s.reason != "unsupported_field"] == (
        [reason] if reason else []
    )
