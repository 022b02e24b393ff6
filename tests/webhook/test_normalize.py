"""Envelope -> typed updates, one per item, from realistic platform payloads."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from svc.webhook import (
    UPDATE_KINDS,
    AccountUpdate,
    CallConnectUpdate,
    CallStatusUpdate,
    CallTerminateUpdate,
    ChatOpenedUpdate,
    ContactsContent,
    GroupLifecycleUpdate,
    GroupParticipantsUpdate,
    GroupSettingsUpdate,
    GroupStatusUpdate,
    InteractiveContent,
    LocationContent,
    MediaContent,
    MessageUpdate,
    NormalizationResult,
    OrderContent,
    ReactionContent,
    StatusUpdate,
    SystemUpdate,
    TextContent,
    UnknownUpdate,
    UnsupportedContent,
    UpdateSource,
    UserPreferencesUpdate,
    format_event_time,
    normalize,
)

from .conftest import fixture_names, load, read_all

WABA = "102290129340398"
PNID = "106540352242922"
DISPLAY = "15550783881"
USER = "16505551234"
GROUP = "Y2FwaV9ncm91cDoxNzA1NTU1MDEzOToxMjAzNjM0MDQ2OTQyMzM4MjAZD"


def run(name: str) -> NormalizationResult:
    return normalize(load(name))


def only(result: NormalizationResult) -> list[Any]:
    assert result.skipped == ()
    return list(result.updates)


def test_every_kind_has_a_fixture() -> None:
    kinds = {u.kind for name in fixture_names() for u in run(name).updates}
    assert kinds == set(UPDATE_KINDS)
    assert len(UPDATE_KINDS) == 19


def test_text_message() -> None:
    [update] = only(run("message_text.json"))
    assert isinstance(update, MessageUpdate)
    assert update.kind == "message"
    assert (update.waba_id, update.phone_number_id, update.display_phone_number) == (
        WABA,
        PNID,
        DISPLAY,
    )
    assert update.field == "messages"
    assert update.message_id == "wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA="
    assert update.from_ == USER
    assert update.type == "text"
    assert update.content == TextContent(body="Does it come in another color?")
    assert update.text == "Does it come in another color?"
    assert update.profile_name == "Sheena Nelson"
    assert update.group_id is None
    assert update.context is None
    assert update.timestamp == 1749416383
    assert update.event_time == "2025-06-08T20:59:43.000Z"


def test_media_batch_every_message() -> None:
    updates = only(run("message_media_batch.json"))
    assert [u.type for u in updates] == ["image", "video", "audio", "document", "sticker"]
    image, video, audio, document, sticker = (u.content for u in updates)
    assert image == MediaContent(
        type="image",
        media_id="1003383421387256",
        mime_type="image/jpeg",
        sha256="J4g6DqbsUQ3uDO8rbVl1bn3nyAAFFEHkYKmp1Ttq52k=",
        caption="This one",
        url="https://lookaside.fbsbx.com/whatsapp_business/attachments/?mid=1003383421387256",
    )
    assert isinstance(video, MediaContent) and video.caption == "Unboxing"
    assert isinstance(audio, MediaContent) and audio.voice is True
    assert audio.mime_type == "audio/ogg; codecs=opus"
    assert isinstance(document, MediaContent) and document.filename == "invoice-0042.pdf"
    assert isinstance(sticker, MediaContent) and sticker.animated is False
    assert all(u.text is None for u in updates)


def test_replies_and_other_inbound_types() -> None:
    updates = only(run("message_replies_batch.json"))
    by_id = {u.message_id: u for u in updates}
    assert len(by_id) == 11
    button = by_id["wamid.BTNREPLY01"]
    assert button.content == InteractiveContent(
        reply_type="button_reply", reply_id="size-m", title="Medium"
    )
    assert button.context.message_id == "wamid.ORIGINAL01"
    assert button.context.from_ == DISPLAY
    listed = by_id["wamid.LISTREPLY01"].content
    assert isinstance(listed, InteractiveContent)
    assert (listed.reply_type, listed.reply_id, listed.description) == (
        "list_reply",
        "slot-0930",
        "Tuesday morning",
    )
    flow = by_id["wamid.NFM01"].content
    assert isinstance(flow, InteractiveContent) and flow.reply_type == "nfm_reply"
    assert flow.response_json == '{"flow_token":"tok-1","rating":"5"}'
    assert (flow.flow_name, flow.flow_body) == ("flow", "Sent")
    template_button = by_id["wamid.BUTTON01"]
    assert template_button.type == "button"
    assert (template_button.content.payload, template_button.content.text) == (
        "STOP_PROMOS",
        "Stop promotions",
    )
    assert by_id["wamid.REACT01"].content == ReactionContent(
        message_id="wamid.OUTBOUND01", emoji="\U0001f44d"
    )
    assert by_id["wamid.UNREACT01"].content == ReactionContent(
        message_id="wamid.OUTBOUND01", emoji=None
    )
    location = by_id["wamid.LOC01"].content
    assert isinstance(location, LocationContent)
    assert (location.latitude, location.longitude, location.name) == (
        37.483307,
        -122.148981,
        "Main office",
    )
    contacts = by_id["wamid.CONTACTS01"].content
    assert isinstance(contacts, ContactsContent)
    [card] = contacts.contacts
    assert card.formatted_name == "Barbara J. Johnson"
    assert card.phones[0].wa_id == "19405551234"
    assert card.emails == ("bjohnson@example.com",)
    assert card.organization == "Example, Inc."
    order = by_id["wamid.ORDER01"].content
    assert isinstance(order, OrderContent)
    assert order.catalog_id == "194836987003835"
    assert [(i.product_retailer_id, i.quantity, i.item_price) for i in order.items] == [
        ("di9ozbzfi4", 2, 30.5),
        ("nqryix03ez", 1, 25.0),
    ]
    forwarded = by_id["wamid.FWD01"].context
    assert forwarded is not None and forwarded.forwarded and forwarded.frequently_forwarded
    unsupported = by_id["wamid.UNSUP01"].content
    assert isinstance(unsupported, UnsupportedContent)
    assert unsupported.type == "unsupported"
    assert unsupported.errors[0].code == 131051
    assert unsupported.errors[0].details == "Message type is currently not supported."


def test_group_messages_and_group_statuses() -> None:
    updates = only(run("message_group.json"))
    assert [u.kind for u in updates] == ["message", "message", "status", "status"]
    first, second, delivered, read = updates
    assert first.group_id == second.group_id == GROUP
    assert (first.profile_name, second.profile_name) == ("Sheena Nelson", "Omar Haddad")
    assert isinstance(delivered, StatusUpdate)
    assert delivered.recipient_type == "group"
    assert delivered.recipient_id == GROUP
    assert delivered.recipient_participant_id == USER
    assert read.recipient_participant_id == "447700900123"
    assert delivered.pricing is not None and delivered.pricing.category == "utility"


def test_status_batch() -> None:
    updates = only(run("status_batch.json"))
    assert [u.status for u in updates] == ["sent", "delivered", "read", "failed"]
    sent = updates[0]
    assert isinstance(sent, StatusUpdate)
    assert sent.message_id == "wamid.OUT01"
    assert sent.recipient_id == USER
    assert sent.recipient_type is None
    assert sent.conversation is not None
    assert sent.conversation.origin_type == "marketing"
    assert sent.conversation.expiration_timestamp == 1750350180
    assert sent.pricing is not None and sent.pricing.billable is True
    assert sent.biz_opaque_callback_data == "order-42"
    assert sent.event_time == "2025-06-18T16:22:53.000Z"
    failed = updates[3]
    assert failed.errors[0].code == 131026
    assert failed.errors[0].title == "Message undeliverable"
    assert updates[2].conversation is None and updates[2].errors == ()


def test_system_and_chat_opened() -> None:
    changed, identity, welcome = only(run("system_and_chat_opened.json"))
    assert isinstance(changed, SystemUpdate)
    assert changed.kind == "system"
    assert changed.system_type == "customer_changed_number"
    assert changed.new_wa_id == "16505559999"
    assert changed.customer == USER
    assert isinstance(identity, SystemUpdate)
    assert identity.system_type == "customer_identity_changed"
    assert identity.identity is not None and identity.identity.acknowledged is True
    assert identity.identity.hash == "Sjvjlx8G6Z0="
    assert isinstance(welcome, ChatOpenedUpdate)
    assert welcome.kind == "chatOpened"
    assert (welcome.message_id, welcome.from_, welcome.profile_name) == (
        "wamid.WELCOME01",
        USER,
        "Sheena Nelson",
    )


def test_account_fields_across_entries() -> None:
    updates = only(run("account_multi_entry.json"))
    assert all(isinstance(u, AccountUpdate) for u in updates)
    assert [(u.field, u.event) for u in updates] == [
        ("account_update", "VERIFIED_ACCOUNT"),
        ("message_template_status_update", "APPROVED"),
        ("message_template_quality_update", "YELLOW"),
        ("phone_number_quality_update", "FLAGGED"),
        ("template_category_update", "UTILITY"),
        ("account_review_update", "APPROVED"),
        ("phone_number_name_update", "APPROVED"),
        ("business_capability_update", None),
        ("account_alerts", "OBA_APPROVED"),
    ]
    assert [u.timestamp for u in updates][:3] == [1749418000, 1749418001, 1749418001]
    assert updates[0].event_time == "2025-06-08T21:26:40.000Z"
    assert updates[1].value["message_template_name"] == "order_confirmation"
    assert updates[0].phone_number_id is None


def test_calls() -> None:
    connect, completed, failed, ringing, rejected = only(run("calls.json"))
    assert isinstance(connect, CallConnectUpdate)
    assert connect.call_id == "wacid.HBgLMTY1MDU1NTEyMzQVAgARGCA4QkY3"
    assert (connect.from_, connect.to, connect.direction) == (USER, DISPLAY, "USER_INITIATED")
    assert connect.session is not None and connect.session.sdp_type == "offer"
    assert connect.deeplink_payload == "campaign-spring"
    assert connect.cta_payload is None
    assert connect.profile_name == "Sheena Nelson"
    assert isinstance(completed, CallTerminateUpdate)
    assert (completed.status, completed.duration) == ("COMPLETED", 115)
    assert (completed.start_time, completed.end_time) == (1749419005, 1749419120)
    assert (completed.deeplink_payload, completed.cta_payload) == (
        "campaign-spring",
        "support-line",
    )
    assert completed.errors[0].code == 138006  # the change's errors when the call has none
    assert isinstance(failed, CallTerminateUpdate)
    assert (failed.status, failed.biz_opaque_callback_data) == ("FAILED", "ticket-7")
    # The user of a call is the caller, or the one the business called: never the business.
    assert (failed.direction, failed.from_, failed.to) == ("BUSINESS_INITIATED", DISPLAY, USER)
    assert [u.user.wa_id if u.user else None for u in (connect, failed, ringing)] == [USER] * 3
    assert isinstance(ringing, CallStatusUpdate)
    assert (ringing.status, ringing.recipient_id) == ("RINGING", USER)
    assert isinstance(rejected, CallStatusUpdate)
    assert (rejected.status, rejected.cta_payload) == ("REJECTED", "callback-button")


def test_group_lifecycle() -> None:
    created, failed, deleted = only(run("groups_lifecycle.json"))
    assert all(isinstance(u, GroupLifecycleUpdate) for u in (created, failed, deleted))
    assert (created.group_id, created.event_type, created.request_id) == (
        GROUP,
        "group_create",
        "REQ_CREATE_1",
    )
    assert created.invite_link == "https://chat.whatsapp.com/LINK_ID"
    assert created.join_approval_mode == "approval_required"
    assert (created.subject, created.description) == ("Spring launch", "Questions about the launch")
    assert failed.group_id is None
    assert failed.errors[0].code == 131215
    assert deleted.event_type == "group_delete"


def test_group_participants() -> None:
    joined, requested, removed, left = only(run("groups_participants.json"))
    assert all(isinstance(u, GroupParticipantsUpdate) for u in (joined, requested, removed, left))
    assert joined.reason == "invite_link"
    assert [p.wa_id for p in joined.added_participants] == [USER]
    assert (requested.event_type, requested.join_request_id, requested.wa_id) == (
        "group_join_request_created",
        "MTIzNDU2Nzg5",
        "447700900123",
    )
    assert removed.initiated_by == "business"
    assert [p.wa_id for p in removed.removed_participants] == [USER]
    assert removed.failed_participants[0].errors[0].code == 131203
    assert left.initiated_by == "participant"


def test_group_settings_and_status() -> None:
    [settings] = only(run("groups_settings.json"))
    assert isinstance(settings, GroupSettingsUpdate)
    assert settings.subject is not None and settings.subject.value == "Spring launch (official)"
    assert settings.description is not None and settings.description.update_successful is True
    assert settings.profile_picture is not None
    assert settings.profile_picture.update_successful is False
    assert settings.profile_picture.errors[0].code == 131009
    suspended, cleared = only(run("groups_status.json"))
    assert isinstance(suspended, GroupStatusUpdate) and isinstance(cleared, GroupStatusUpdate)
    assert (suspended.event_type, suspended.suspended) == ("group_suspend", True)
    assert (cleared.event_type, cleared.suspended) == ("group_suspend_cleared", False)


def test_user_preferences() -> None:
    stop, resume = only(run("user_preferences.json"))
    assert isinstance(stop, UserPreferencesUpdate)
    assert (stop.wa_id, stop.category, stop.value) == (USER, "marketing_messages", "stop")
    assert stop.profile_name == "Sheena Nelson"
    assert resume.value == "resume"
    assert stop.event_time == "2025-06-08T22:08:20.000Z"


def test_unknown_field() -> None:
    [update] = only(run("unknown_field.json"))
    assert isinstance(update, UnknownUpdate)
    assert update.field == "flows"
    assert update.value["new_status"] == "PUBLISHED"
    assert update.timestamp == 1749420700


def test_mixed_batch_keeps_every_item_in_order() -> None:
    updates = only(run("batch_mixed.json"))
    assert [u.kind for u in updates] == [
        "message",
        "message",
        "status",
        "status",
        "groupLifecycle",
        "callConnect",
        "account",
        "history",
    ]
    assert [u.waba_id for u in updates][-2:] == ["102290129340399", "102290129340399"]
    assert updates[-1].field == "history"


def test_malformed_parts_are_skipped_and_the_rest_survives() -> None:
    result = run("malformed_mixed.json")
    assert [getattr(u, "message_id", None) for u in result.updates] == [
        "wamid.GOOD1",
        "wamid.BAD1",  # a text whose body is not a string is still delivered...
        "wamid.BAD2",  # no timestamp: delivered with the receipt time
        "wamid.GOOD2",  # unusable timestamp: the same
        "wamid.GOOD3",
    ]
    assert result.updates[1].content == UnsupportedContent(type="text", reason="incomplete")
    assert result.updates[1].text is None  # ...with its content marked incomplete
    skips = [(s.reason, s.location, s.kind) for s in result.skipped]
    base = "entry[4].changes"
    assert skips == [
        ("malformed_entry", "entry[0]", None),
        ("malformed_entry", "entry[1]", None),
        ("malformed_entry", "entry[2]", None),
        ("id_too_long", "entry[3]", None),
        ("malformed_change", f"{base}[0]", None),
        ("malformed_change", f"{base}[1]", None),
        ("malformed_change", f"{base}[2]", None),
        ("malformed_message", f"{base}[3].value.messages[2]", "message"),  # no id
        ("id_too_long", f"{base}[3].value.messages[3]", "message"),
        ("malformed_message", f"{base}[3].value.messages[5]", "message"),  # not an object
        ("malformed_status", f"{base}[3].value.statuses[0]", "status"),
        ("unsupported_field", f"{base}[4]", "message"),
        ("unsupported_event", f"{base}[5].value.calls[0]", None),
        ("malformed_call", f"{base}[5].value.calls[1]", None),
        ("malformed_change", f"{base}[6].value.groups", "groupStatus"),
        ("malformed_preference", f"{base}[7].value.user_preferences[0]", "userPreferences"),
    ]


@pytest.mark.parametrize("envelope", [None, [], "x", 1, {}, {"entry": {}}, {"entry": None}])
def test_not_an_envelope(envelope: Any) -> None:
    result = normalize(envelope)
    assert result.updates == ()
    assert [(s.reason, s.location) for s in result.skipped] == [("malformed_envelope", "$")]


def test_event_time_format() -> None:
    assert format_event_time(0) == "1970-01-01T00:00:00.000Z"
    assert format_event_time(1_700_000_000) == "2023-11-14T22:13:20.000Z"
    assert format_event_time(253402300799) == "9999-12-31T23:59:59.000Z"
    assert format_event_time(253402300800) is None
    assert format_event_time(-1) is None
    assert format_event_time(None) is None


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("1749416383", 1749416383),
        (1749416383, 1749416383),
        (1749416383.0, 1749416383),
        ("-5", None),
        ("12e3", None),
        ("", None),
        (True, None),
        ("٣", None),
        ("9" * 40, None),
    ],
)
def test_timestamps(raw: Any, expected: int | None) -> None:
    envelope = {
        "object": "x",
        "entry": [
            {
                "changes": [
                    {
                        "field": "messages",
                        "value": {
                            "statuses": [{"id": "wamid.T", "status": "sent", "timestamp": raw}]
                        },
                    }
                ]
            }
        ],
    }
    [update] = normalize(envelope).updates
    assert update.timestamp == expected


def test_updates_are_frozen_views_equal_to_plain_construction() -> None:
    for name in fixture_names():
        for update in normalize(load(name)).updates:
            rebuilt = type(update)(source=update.source, raw=update.raw)
            assert rebuilt == update
            assert hash(rebuilt) == hash(update)
            assert repr(rebuilt) == repr(update)
            with pytest.raises(dataclasses.FrozenInstanceError):
                update.raw = {}  # type: ignore[misc]
            source = update.source
            assert source == UpdateSource(
                waba_id=source.waba_id,
                phone_number_id=source.phone_number_id,
                display_phone_number=source.display_phone_number,
                field=source.field,
                entry_time=source.entry_time,
                value={},
            )


def test_every_property_reads_without_error() -> None:
    for name in fixture_names():
        for update in normalize(load(name)).updates:
            values = read_all(update)
            assert values["waba_id"] is None or isinstance(values["waba_id"], str)
            assert "event_time" in values


def test_repr_holds_no_ids_phones_or_text() -> None:
    rendered = " ".join(repr(u) for name in fixture_names() for u in normalize(load(name)).updates)
    for secret in (USER, DISPLAY, PNID, WABA, "wamid.", "wacid.", GROUP, "Does it come", "Sheena"):
        assert secret not in rendered
    assert "MessageUpdate(kind='message', field='messages', type='text')" in rendered
