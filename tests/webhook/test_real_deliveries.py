"""Real platform deliveries the normalizer once dropped, flattened or let through (issue 13)."""

from __future__ import annotations

import copy
import json
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from svc.graph import GraphClient, PhoneNumberClient
from svc.webhook import (
    DefaultFacade,
    EditContent,
    GroupLifecycleUpdate,
    GroupStatusUpdate,
    InteractiveContent,
    MediaContent,
    MessageContext,
    MessageUpdate,
    PlatformError,
    RevokeContent,
    StatusUpdate,
    TextContent,
    UnsupportedContent,
    UserIdentity,
    is_safe_id,
    normalize,
)
from svc.webhook._normalize import _build_message, _build_status, _message_list, _status_list

from .conftest import load

WABA = "102290129340398"
PNID = "106540352242922"
DISPLAY = "15550783881"
USER = "16505551234"
USER2 = "447700900123"
GROUP = "Y2FwaV9ncm91cDoxNzA1NTU1MDEzOToxMjAzNjM0MDQ2OTQyMzM4MjAZD"
RESENT_ID = "wamid.HBgLMTY1MDU1NTEyMzQVAgASGCA2QjQ0MjNFRjFBNTZDRUM5NkM3RDlBMkE1MjQ0QjE4MwA="
ERROR_131000 = PlatformError(
    code=131000,
    title="Something went wrong",
    message="Something went wrong",
    details="Unsupported webhook payload",
)


def envelope(field: str, **value: Any) -> dict[str, Any]:
    """One change as the platform sends it, with the business metadata."""
    metadata = {"display_phone_number": DISPLAY, "phone_number_id": PNID}
    return {
        "object": "whatsapp_business_account",
        "entry": [
            {
                "id": WABA,
                "changes": [
                    {
                        "field": field,
                        "value": {"messaging_product": "whatsapp", "metadata": metadata, **value},
                    }
                ],
            }
        ],
    }


def inbound(**item: Any) -> dict[str, Any]:
    """A realistic inbound text message; keyword arguments replace or add keys (None removes)."""
    message: dict[str, Any] = {
        "from": USER,
        "id": "wamid.HBgLMTY1MDU1NTEyMzQVAgASGBQzQjFFMzg1QjcyQzlGQkEzRTU2RQA=",
        "timestamp": "1749424100",
        "type": "text",
        "text": {"body": "Hi, is my order on its way?"},
    }
    message.update(item)
    return {key: value for key, value in message.items() if value is not None}


# --- a message is never dropped for its content ----------------------------------------------


def test_interactive_resent_without_its_object_is_delivered_with_the_platform_error() -> None:
    result = normalize(load("message_interactive_resent.json"))
    assert result.skipped == ()
    [update] = result.updates
    assert isinstance(update, MessageUpdate)
    assert (update.kind, update.message_id, update.from_, update.type) == (
        "message",
        RESENT_ID,
        USER,
        "interactive",
    )
    assert (update.timestamp, update.event_time) == (1749423001, "2025-06-08T22:50:01.000Z")
    assert update.content == UnsupportedContent(
        type="interactive", reason="incomplete", errors=(ERROR_131000,)
    )
    assert update.change_errors == (ERROR_131000,)
    assert update.context is not None
    assert update.context.message_id == "wamid.HBgLMTY1MDU1NTEyMzQVAgARGBI5QTNDQTVCM0Q0Q0Q2RTY3RTcA"
    assert update.profile_name == "Sheena Nelson"
    assert update.raw["type"] == "interactive" and "interactive" not in update.raw
    assert (update.is_echo, update.to, update.text) == (False, None, None)


def test_the_items_own_errors_win_over_the_change_errors() -> None:
    own = {"code": 131051, "title": "Message type unknown", "message": "Message type unknown"}
    data = load("message_interactive_resent.json")
    data["entry"][0]["changes"][0]["value"]["messages"][0]["errors"] = [own]
    [update] = normalize(data).updates
    assert update.content == UnsupportedContent(
        type="interactive",
        reason="incomplete",
        errors=(PlatformError(code=131051, title=own["title"], message=own["message"]),),
    )
    assert update.change_errors == (ERROR_131000,)


@pytest.mark.parametrize(
    ("mtype", "payload"),
    [
        ("text", None),
        ("text", {"body": 42}),
        ("text", "Hi"),
        ("image", None),
        ("image", "1003383421387256"),
        ("video", None),
        ("audio", []),
        ("document", None),
        ("sticker", None),
        ("location", None),
        ("contacts", {"name": {"formatted_name": "Barbara"}}),
        ("interactive", None),
        ("button", None),
        ("reaction", None),
        ("order", None),
        ("revoke", None),
        ("edit", None),
        ("edit", "wamid.X"),
    ],
)
def test_a_known_type_without_a_readable_content_is_delivered_as_incomplete(
    mtype: str, payload: Any
) -> None:
    item = inbound(type=mtype, text=None)
    if payload is not None:
        item[mtype] = payload
    result = normalize(envelope("messages", messages=[item]))
    assert result.skipped == ()
    [update] = result.updates
    assert isinstance(update, MessageUpdate)
    assert update.type == mtype
    assert update.content == UnsupportedContent(type=mtype, reason="incomplete")
    assert update.text is None


@pytest.mark.parametrize(
    ("raw_type", "read_type"),
    [("poll", "poll"), (None, "unsupported"), (7, "unsupported"), ("", "unsupported"),
     ("x" * 65, "unsupported"), ("text\n", "unsupported")],
)  # fmt: skip
def test_an_unknown_or_unusable_type_is_delivered_as_unknown_type(
    raw_type: Any, read_type: str
) -> None:
    item = inbound(type=raw_type, text=None)
    [update] = normalize(envelope("messages", messages=[item])).updates
    assert isinstance(update, MessageUpdate)
    assert update.type == read_type
    assert update.content == UnsupportedContent(type=read_type, reason="unknown_type")


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"id": None}, "malformed_message"),
        ({"id": ""}, "malformed_message"),
        ({"id": 12345}, "malformed_message"),
        ({"from": None}, "malformed_message"),
        ({"from": 16505551234}, "malformed_message"),
        ({"id": "w" * 257}, "id_too_long"),
        ({"from": "1" * 257}, "id_too_long"),
        ({"id": " "}, "unsafe_id"),
        ({"from": " "}, "unsafe_id"),
        ({"from": "1650555\n1234"}, "unsafe_id"),
        ({"from_user_id": "US.1349\n1208"}, "unsafe_id"),  # beside a usable phone, too
        ({"from_parent_user_id": " "}, "unsafe_id"),
        ({"from_user_id": 1349}, "malformed_message"),
    ],
)
def test_only_an_unusable_id_or_sender_skips_a_message(
    change: dict[str, Any], reason: str
) -> None:
    result = normalize(envelope("messages", messages=[inbound(**change), inbound(id="wamid.OK")]))
    assert [u.message_id for u in result.updates] == ["wamid.OK"]
    assert [(s.reason, s.location, s.kind) for s in result.skipped] == [
        (reason, "entry[0].changes[0].value.messages[0]", "message")
    ]


@pytest.mark.parametrize("stamp", [None, "", "yesterday", "-5", "99999999999999", True])
def test_a_message_without_a_readable_timestamp_reads_the_receipt_time(stamp: object) -> None:
    result = normalize(
        envelope("messages", messages=[inbound(id="wamid.T", timestamp=stamp)]),
        received_at=1_790_000_000,
    )
    assert result.skipped == ()
    [update] = result.updates
    assert isinstance(update, MessageUpdate)
    assert (update.timestamp, update.timestamp_missing) == (1_790_000_000, True)


def test_timestamps_in_other_valid_forms_still_pass() -> None:
    items = [
        inbound(id="wamid.A", timestamp=1749424100),
        inbound(id="wamid.B", timestamp="001749424100"),
        inbound(id="wamid.C", timestamp=1749424100.0),
    ]
    result = normalize(envelope("messages", messages=items))
    assert result.skipped == ()
    assert [u.timestamp for u in result.updates] == [1749424100] * 3


# --- typed access where there was only raw -----------------------------------------------


def test_unsupported_messages_expose_the_platform_type_and_errors() -> None:
    result = normalize(load("message_unsupported.json"))
    assert result.skipped == ()
    poll, unavailable = result.updates
    assert poll.content == UnsupportedContent(
        type="unsupported",
        reason="unsupported",
        unsupported_type="poll_update",
        errors=(
            PlatformError(
                code=131051,
                title="Message type unknown",
                message="Message type unknown",
                details="Message type is currently not supported.",
            ),
        ),
    )
    assert isinstance(unavailable.content, UnsupportedContent)
    assert unavailable.content.unsupported_type == "media_placeholder"
    assert [e.code for e in unavailable.content.errors] == [131060]
    assert (poll.profile_name, unavailable.profile_name) == ("Sheena Nelson", "Omar Haddad")


def test_edits_expose_the_edited_message_and_the_new_content() -> None:
    result = normalize(load("message_edit.json"))
    assert result.skipped == ()
    text_edit, caption_edit = result.updates
    assert text_edit.type == "edit"
    assert text_edit.text is None  # the new text is in content, typed like an original text
    assert text_edit.content == EditContent(
        original_message_id="wamid.HBgLMTY1MDU1NTEyMzQVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=",
        content=TextContent(body="Does it come in another colour?"),
    )
    assert caption_edit.content == EditContent(
        original_message_id="wamid.HBgLMTY1MDU1NTEyMzQVAgASGBQzQTY0NzQxNUY4OTNERjJCMzBBQgA=",
        content=MediaContent(
            type="image",
            media_id="1003383421387256",
            mime_type="image/jpeg",
            sha256="J4g6DqbsUQ3uDO8rbVl1bn3nyAAFFEHkYKmp1Ttq52k=",
            caption="This one, in navy",
            url="https://lookaside.fbsbx.com/whatsapp_business/attachments/?mid=1003383421387256",
        ),
        context=MessageContext(
            message_id="wamid.HBgLMTY1MDU1NTEyMzQVAgARGBI5QTNDQTVCM0Q0Q0Q2RTY3RTcA"
        ),
    )


@pytest.mark.parametrize(
    ("edit", "content"),
    [
        (
            {"original_message_id": "wamid.ORIG"},
            UnsupportedContent(type="unsupported", reason="incomplete"),
        ),
        (
            {"original_message_id": "wamid.ORIG", "message": {"type": "sticker"}},
            UnsupportedContent(type="sticker", reason="incomplete"),
        ),
        (
            {
                "original_message_id": "wamid.ORIG",
                "message": {"type": "edit", "edit": {"original_message_id": "wamid.ORIG"}},
            },
            UnsupportedContent(type="edit", reason="unknown_type"),
        ),
    ],
)
def test_an_edit_without_a_readable_new_message_keeps_the_edited_id(
    edit: dict[str, Any], content: UnsupportedContent
) -> None:
    item = inbound(type="edit", text=None, edit=edit)
    [update] = normalize(envelope("messages", messages=[item])).updates
    assert update.content == EditContent(original_message_id="wamid.ORIG", content=content)


def test_call_permission_replies_are_typed() -> None:
    result = normalize(load("message_call_permission_reply.json"))
    assert result.skipped == ()
    assert [u.content for u in result.updates] == [
        InteractiveContent(
            reply_type="call_permission_reply",
            response="accept",
            expiration_timestamp=1750028100,
            is_permanent=False,
            response_source="user_action",
        ),
        InteractiveContent(
            reply_type="call_permission_reply",
            response="accept",
            is_permanent=True,
            response_source="user_action",
        ),
        InteractiveContent(
            reply_type="call_permission_reply",
            response="reject",
            is_permanent=False,
            response_source="automatic",
        ),
    ]


def test_echoes_are_one_message_update_each_and_say_they_are_echoes() -> None:
    result = normalize(load("smb_message_echoes.json"))
    assert result.skipped == ()
    text, image, revoke = result.updates
    assert all(isinstance(u, MessageUpdate) and u.kind == "message" for u in result.updates)
    assert [(u.is_echo, u.from_, u.to, u.field) for u in result.updates] == [
        (True, DISPLAY, USER, "smb_message_echoes"),
        (True, DISPLAY, USER, "smb_message_echoes"),
        (True, DISPLAY, USER2, "smb_message_echoes"),
    ]
    assert text.message_id == "wamid.HBgLMTY1MDU1NTEyMzQVAgARGBJFQ0hPMDFBQkNERUYwMTIzNDUA"
    assert (text.type, text.text, text.timestamp) == (
        "text",
        "Yes, it also comes in navy and sand.",
        1749423600,
    )
    assert isinstance(image.content, MediaContent) and image.content.caption == "Navy"
    assert revoke.content == RevokeContent(
        original_message_id="wamid.HBgMNDQ3NzAwOTAwMTIzFQIAERgSRUNITzAwQUJDREVGMDEyMzQA"
    )
    assert all(u.profile_name is None for u in result.updates)
    assert (text.waba_id, text.phone_number_id) == (WABA, PNID)
    # The user of an echo is the one it went to, never the business number that sent it.
    assert [u.user for u in result.updates] == [
        UserIdentity(wa_id=USER), UserIdentity(wa_id=USER), UserIdentity(wa_id=USER2)
    ]  # fmt: skip


def test_echo_items_are_checked_like_messages_and_never_become_other_kinds() -> None:
    echoes = [
        {"from": DISPLAY, "to": USER, "id": "wamid.E1", "timestamp": "1749423600",
         "type": "request_welcome"},
        {"from": DISPLAY, "to": USER, "id": "wamid.E2", "type": "text", "text": {"body": "x"}},
        {"from": DISPLAY, "id": "wamid.E3", "timestamp": "1749423601", "type": "text",
         "text": {"body": "no recipient"}},
    ]  # fmt: skip
    result = normalize(envelope("smb_message_echoes", message_echoes=echoes))
    assert [(u.kind, u.message_id, u.to) for u in result.updates] == [
        ("message", "wamid.E1", USER),
        ("message", "wamid.E2", USER),
        ("message", "wamid.E3", None),
    ]
    assert result.skipped == ()
    result = normalize(envelope("smb_message_echoes", history=[]))
    assert [(s.reason, s.kind) for s in result.skipped] == [("unsupported_field", "message")]


async def test_the_demo_echo_reply_never_answers_an_echo() -> None:
    sent: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, json={"messages": [{"id": "wamid.R"}]})

    client = GraphClient(access_token="EAAG-test-token", transport=httpx.MockTransport(handler))
    async with client:
        facade = DefaultFacade(
            echo_reply=True, echo_client=PhoneNumberClient(client, phone_number_id=PNID)
        )
        for update in normalize(load("smb_message_echoes.json")).updates:
            await facade.dispatch(update)
        assert sent == []
        for update in normalize(load("message_text.json")).updates:
            await facade.dispatch(update)
    [request] = sent
    assert json.loads(request.content)["to"] == USER
    assert facade.statistics().echo_sent == 1


def test_change_errors_are_kept_on_the_updates_of_any_change() -> None:
    errors = [{"code": 131000, "title": "Something went wrong", "message": "Something went wrong",
               "error_data": {"details": "Unsupported webhook payload"}}]  # fmt: skip
    statuses = load("status_batch.json")
    statuses["entry"][0]["changes"][0]["value"]["errors"] = errors
    groups = load("groups_status.json")
    groups["entry"][0]["changes"][0]["value"]["errors"] = errors
    for data in (statuses, groups):
        result = normalize(data)
        assert result.skipped == ()
        assert result.updates and all(u.change_errors == (ERROR_131000,) for u in result.updates)
    plain = normalize(load("status_batch.json")).updates
    assert all(u.change_errors == () for u in plain)
    [connect, *_] = normalize(load("calls.json")).updates
    assert [e.code for e in connect.change_errors] == [138006]


# --- hostile or odd input ---------------------------------------------------------------


def test_ids_with_control_characters_or_only_whitespace_are_skipped() -> None:
    result = normalize(load("hostile_ids.json"))
    base = "entry[2].changes"
    assert [(s.reason, s.location, s.kind) for s in result.skipped] == [
        ("unsafe_id", "entry[0]", None),
        ("unsafe_id", "entry[1]", None),
        ("unsafe_id", f"{base}[0]", None),
        ("unsafe_id", f"{base}[1]", None),
        *[("unsafe_id", f"{base}[2].value.messages[{k}]", "message") for k in range(6)],
        ("unsafe_id", f"{base}[2].value.statuses[0]", "status"),
        ("unsafe_id", f"{base}[2].value.statuses[1]", "status"),
        ("unsafe_id", f"{base}[3].value.calls[0]", None),
        ("unsafe_id", f"{base}[3].value.statuses[0]", "callStatus"),
        ("unsafe_id", f"{base}[4].value.groups[0]", "groupParticipants"),
        ("unsafe_id", f"{base}[5].value.user_preferences[0]", "userPreferences"),
    ]
    assert [(u.kind, getattr(u, "message_id", None)) for u in result.updates] == [
        ("message", "wamid.OK1"),
        ("status", "wamid.OK2"),
        ("callConnect", None),
        ("groupParticipants", None),
    ]
    assert result.updates[2].call_id == "wacid.OK3"
    assert result.updates[3].group_id == GROUP
    assert "\n" not in repr(result) and "\r" not in repr(result)


@pytest.mark.parametrize(
    "bad",
    ["\r", "\n", "\x00", "\t", "\x7f", "\x85", "\u2028", "\u2029", "\u202e", "\u200b", "\ufeff"],
)
def test_every_control_format_or_separator_character_makes_an_id_unsafe(bad: str) -> None:
    message_id = f"wamid.HBgLMTY1MDU1{bad}NTEyMzQVAgASGBQz"
    assert not is_safe_id(message_id)
    item = inbound(id=message_id)
    status = {"id": message_id, "status": "read", "timestamp": "1749424100"}
    result = normalize(envelope("messages", messages=[item], statuses=[status]))
    assert result.updates == ()
    assert [s.reason for s in result.skipped] == ["unsafe_id", "unsafe_id"]


@pytest.mark.parametrize("blank", [" ", "   ", "\u3000", "\t \n"])
def test_whitespace_only_ids_are_unsafe(blank: str) -> None:
    assert not is_safe_id(blank)
    result = normalize(envelope("messages", messages=[inbound(id=blank)]))
    assert [s.reason for s in result.skipped] == ["unsafe_id"]


def test_optional_ids_read_lazily_are_none_when_unsafe() -> None:
    item = inbound(context={"from": DISPLAY + "\n", "id": "wamid.CTX\u2028"}, group_id=" ")
    status = {"id": "wamid.S", "status": "read", "timestamp": "1", "recipient_id": USER + "\r"}
    [message, read] = normalize(envelope("messages", messages=[item], statuses=[status])).updates
    assert message.context == MessageContext()
    assert message.group_id is None
    assert isinstance(read, StatusUpdate) and read.recipient_id is None
    assert is_safe_id("wamid.HBgLMTY1MDU1NTEyMzQVAgASGBQz+/=") and is_safe_id("15550783881")
    assert not is_safe_id("") and not is_safe_id("9" * 257)


def test_the_same_message_twice_in_one_delivery_is_dispatched_once() -> None:
    result = normalize(load("message_duplicate.json"))
    [update] = result.updates
    assert update.message_id == "wamid.HBgLMTY1MDU1NTEyMzQVAgASGBQzQURVUExJQ0FURTAxMjM0NTY3OAA="
    assert [(s.reason, s.location, s.kind, s.count) for s in result.skipped] == [
        ("duplicate_item", "entry[0].changes[0].value.messages[1]", "message", 1),
        ("duplicate_item", "entry[1].changes[0].value.messages[0]", "message", 1),
    ]


def test_duplicates_are_judged_among_delivered_items_only() -> None:
    statuses = [
        {"id": "wamid.OUT", "status": s, "timestamp": "1749424100"} for s in ("sent", "read")
    ]
    messages = [inbound(id="wamid.M", timestamp="soon"), inbound(id="wamid.M")]
    result = normalize(envelope("messages", messages=messages, statuses=statuses))
    # A copy without a usable timestamp is still delivered (the receipt time), so the
    # second is the duplicate; the statuses of one outbound message are not duplicates.
    assert [(u.kind, u.message_id) for u in result.updates] == [
        ("message", "wamid.M"),
        ("status", "wamid.OUT"),
        ("status", "wamid.OUT"),
    ]
    assert [s.reason for s in result.skipped] == ["duplicate_item"]


def test_group_items_sitting_directly_in_value_are_read_as_one_item() -> None:
    result = normalize(load("groups_flat_value.json"))
    assert result.skipped == ()
    suspended, deleted = result.updates
    assert isinstance(suspended, GroupStatusUpdate)
    assert (suspended.group_id, suspended.suspended, suspended.timestamp) == (
        GROUP,
        True,
        1749423700,
    )
    assert isinstance(deleted, GroupLifecycleUpdate)
    assert (deleted.event_type, deleted.request_id) == ("group_delete", "REQ_DELETE_1")
    unsafe = normalize(envelope("group_status_update", group_id=GROUP + "\n", type="group_suspend"))
    assert [(s.reason, s.location, s.kind) for s in unsafe.skipped] == [
        ("unsafe_id", "entry[0].changes[0].value", "groupStatus")
    ]
    empty = normalize(envelope("group_status_update"))
    assert [(s.reason, s.kind) for s in empty.skipped] == [("unsupported_field", "groupStatus")]


# --- the inline fast paths agree with the complete checks --------------------------------

ids = st.sampled_from(["wamid.A", "wamid.B", "", " ", "wamid.\n", "w" * 257, "wamid.\u2028"])
stamps = st.sampled_from(["1749424100", "", "-1", "12345678901", "123456789012", "٣", 1749424100])
words = st.sampled_from(["text", "system", "request_welcome", "image", "", None])
statuses = st.sampled_from(["sent", "read", "", " ", "re\nad", "x" * 65])
item_values = st.fixed_dictionaries(
    {"id": ids, "from": ids, "timestamp": stamps, "status": statuses},
    optional={"type": words},
) | st.fixed_dictionaries(
    {},
    optional={"id": ids | st.integers(), "from": ids, "timestamp": stamps, "status": statuses},
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(item_values | st.none(), max_size=6))
def test_messages_take_the_same_decisions_as_echoes(listed: list[Any]) -> None:
    """``messages[]`` has an inline fast path; ``message_echoes[]`` only the complete checks."""
    messages = normalize(envelope("messages", messages=copy.deepcopy(listed)))
    echoes = normalize(envelope("smb_message_echoes", message_echoes=copy.deepcopy(listed)))
    assert [s.reason for s in messages.skipped] == [s.reason for s in echoes.skipped]
    assert [u.raw for u in messages.updates] == [u.raw for u in echoes.updates]


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(item_values | st.none(), max_size=6))
def test_the_status_fast_path_agrees_with_the_complete_checks(listed: list[Any]) -> None:
    source = normalize(load("status_batch.json")).updates[0].source
    fast: list[Any] = []
    bad: list[tuple[int, str]] = []
    _status_list(listed, source, set(), fast, bad)
    slow = [_build_status(item, source, set()) for item in listed]
    assert fast == [u for u in slow if not isinstance(u, str)]
    assert bad == [(k, u) for k, u in enumerate(slow) if isinstance(u, str)]


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    st.lists(item_values | st.none() | st.integers(), max_size=6),
    st.sets(st.sampled_from(["wamid.A", "wamid.B"])),
)
def test_the_message_fast_path_agrees_with_the_complete_checks(
    listed: list[Any], already: set[str]
) -> None:
    """Item by item, with ids already delivered by earlier lists of the envelope."""
    source = normalize(load("status_batch.json")).updates[0].source
    fast: list[Any] = []
    bad: list[tuple[int, str]] = []
    seen_fast = set(already)
    _message_list(listed, source, seen_fast, fast, bad)
    seen_slow = set(already)
    slow = [_build_message(item, source, seen_slow) for item in listed]
    assert fast == [u for u in slow if not isinstance(u, str)]
    assert [type(u) for u in fast] == [type(u) for u in slow if not isinstance(u, str)]
    assert bad == [(k, u) for k, u in enumerate(slow) if isinstance(u, str)]
    assert seen_fast == seen_slow
