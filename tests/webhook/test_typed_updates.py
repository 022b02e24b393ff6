"""Typed template, account, referral, contact, Flow and coexistence updates (issue 23, 4 and 7-10).

Fixtures follow the platform's published webhook examples; the raw ``value``
stays where it was, and no optional field missing or added skips an update.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from svc.webhook import (
    AccountAlert,
    AccountEvent,
    AccountRestriction,
    AccountReview,
    AccountUpdate,
    ContactAddress,
    ContactEmail,
    ContactOrg,
    ContactPhone,
    ContactsContent,
    ContactUrl,
    DefaultFacade,
    HistoryUpdate,
    InteractiveContent,
    MediaContent,
    MessageUpdate,
    PlatformError,
    Referral,
    SharedContact,
    SmbAppStateSyncUpdate,
    StatusUpdate,
    SyncedContact,
    TemplateCategoryChange,
    TemplateComponentButton,
    TemplateComponentsChange,
    TemplateOtherInfo,
    TemplateQualityChange,
    TemplateRejection,
    TemplateStatusChange,
    TextContent,
    WabaInfo,
    normalize,
)

from .conftest import load, read_all

WABA = "102290129340398"
USER = "16505551234"


def run(name: str) -> list[Any]:
    result = normalize(load(name))
    assert result.skipped == ()
    return list(result.updates)


def envelope(field: str, value: dict[str, Any]) -> dict[str, Any]:
    return {
        "entry": [{"id": WABA, "time": 1749426000, "changes": [{"field": field, "value": value}]}]
    }


# --- item 7: template status, category, quality, components ---------------------------


def test_template_changes_are_typed_and_keep_the_raw_value() -> None:
    rejected, disabled, locked, category, quality, components = run("account_templates.json")
    assert all(type(u) is AccountUpdate and u.kind == "account" for u in (rejected, category))
    assert rejected.details == TemplateStatusChange(
        template_id="1689556908129832",
        name="order_confirmation",
        language="en_US",
        event="REJECTED",
        reason="INVALID_FORMAT",
        category="UTILITY",
        rejection=TemplateRejection(
            reason="The template has a variable at the start of the body.",
            recommendation="Move the variable so the body starts with text.",
        ),
    )
    assert rejected.event == "REJECTED"
    assert rejected.value["message_template_name"] == "order_confirmation"  # as before
    assert disabled.details.event == "DISABLED"
    assert disabled.details.disable_date == 1749513600
    assert disabled.details.rejection is None
    assert locked.details.template_id == "1689556908129834"  # a string id reads the same
    assert locked.details.other_info == TemplateOtherInfo(
        title="TEMPLATE_LOCKED",
        description="The template was paused twice and can no longer be edited.",
    )
    assert category.details == TemplateCategoryChange(
        template_id="1689556908129832",
        name="order_confirmation",
        language="en_US",
        previous_category="UTILITY",
        new_category="MARKETING",
    )
    assert category.event == "MARKETING"
    assert quality.details == TemplateQualityChange(
        template_id="1689556908129835",
        name="welcome_back",
        language="pt_BR",
        previous_quality_score="GREEN",
        new_quality_score="YELLOW",
    )
    assert components.details == TemplateComponentsChange(
        template_id="1689556908129836",
        name="delivery_update",
        language="en_US",
        body="Your order {{1}} is on its way.",
        header="Delivery update",
        footer="Reply STOP to opt out",
        buttons=(
            TemplateComponentButton(
                type="URL", text="Track", url="https://example.com/track/{{1}}"
            ),
            TemplateComponentButton(
                type="PHONE_NUMBER", text="Call us", phone_number="+15550783881"
            ),
        ),
    )


# --- item 8: account_update, account_alerts, account_review_update -------------------------


def test_account_events_alerts_and_reviews_are_typed() -> None:
    ban, violation, restriction, installed, removed, offboarded, reconnected, alert, review = run(
        "account_events.json"
    )
    assert ban.details == AccountEvent(
        event="DISABLED_UPDATE", ban_states=("SCHEDULE_FOR_DISABLE",), ban_date="2025-06-20"
    )
    assert violation.details == AccountEvent(event="ACCOUNT_VIOLATION", violation_type="SCAM")
    assert restriction.details.restrictions == (
        AccountRestriction(
            type="RESTRICTED_ADD_PHONE_NUMBER_ACTION", expiration="2025-06-30T07:09:27+0000"
        ),
    )
    assert installed.details.waba_info == WabaInfo(
        waba_id=WABA,
        owner_business_id="2729063490586005",
        partner_app_id="1016591366592371",
        solution_id="1169474934598347",
        solution_partner_business_ids=("506914307656634", "516880150839939"),
    )
    assert removed.details.event == "PARTNER_REMOVED"
    assert removed.details.disconnection_reason == "DEVICE_INACTIVE"
    assert [offboarded.details.event, reconnected.details.event] == [
        "ACCOUNT_OFFBOARDED",
        "ACCOUNT_RECONNECTED",
    ]
    assert offboarded.details.waba_info == WabaInfo(waba_id=WABA)
    assert alert.details == AccountAlert(
        entity_type="WABA",
        entity_id=WABA,  # sent as a number
        alert_severity="WARNING",
        alert_status="ACTIVE",
        alert_type="INCREASED_BLOCK_RATE",
        alert_description="More users than usual are blocking this business.",
    )
    assert alert.event == "INCREASED_BLOCK_RATE"
    assert review.details == AccountReview(decision="APPROVED")
    assert review.event == "APPROVED"


def test_a_single_restriction_object_and_a_string_ban_state_read_too() -> None:
    value = {
        "event": "ACCOUNT_RESTRICTION",
        "restriction_info": {"restriction_type": "RESTRICTED_BIZ_INITIATED_MESSAGING"},
        "ban_info": {"waba_ban_state": "DISABLE"},
    }
    [update] = normalize(envelope("account_update", value)).updates
    assert update.details == AccountEvent(
        event="ACCOUNT_RESTRICTION",
        ban_states=("DISABLE",),
        restrictions=(AccountRestriction(type="RESTRICTED_BIZ_INITIATED_MESSAGING"),),
    )


def test_other_account_fields_have_no_details() -> None:
    [update] = normalize(envelope("security", {"event": "PIN_CHANGED"})).updates
    assert update.kind == "account"
    assert update.details is None


# --- item 4 (webhook half): biz_opaque_callback_data on statuses ---------------------------


def test_statuses_surface_biz_opaque_callback_data() -> None:
    value = {
        "messaging_product": "whatsapp",
        "metadata": {"display_phone_number": "15550783881", "phone_number_id": "106540352242922"},
        "statuses": [
            {
                "id": "wamid.HBgLMTY1MDU1NTEyMzQVAgARGBI1QUYxRjhGRDhENUQ3NjM0NzkA",
                "status": "delivered",
                "timestamp": "1749428300",
                "recipient_id": USER,
                "biz_opaque_callback_data": "campaign=summer;variant=b",
                "pricing": {"billable": True, "pricing_model": "PMP", "category": "marketing"},
            },
            {
                "id": "wamid.HBgLMTY1MDU1NTEyMzQVAgARGBI1QUYxRjhGRDhENUQ3NjM0NzkB",
                "status": "read",
                "timestamp": "1749428400",
                "recipient_id": USER,
            },
        ],
    }
    tagged, plain = normalize(envelope("messages", value)).updates
    assert isinstance(tagged, StatusUpdate)
    assert tagged.biz_opaque_callback_data == "campaign=summer;variant=b"
    assert plain.biz_opaque_callback_data is None


# --- item 9: referral, full shared contacts, Flow completion -------------------------------


def test_referral_contacts_and_flow_completion_are_typed() -> None:
    ad, card, flow = run("message_referral_contacts_flow.json")
    assert isinstance(ad, MessageUpdate)
    assert ad.content == TextContent(body="Hi! I saw your ad, is the offer still on?")
    assert ad.referral == Referral(
        source_url="https://fb.me/3cr4Wqqkv",
        source_id="120226305854810726",
        source_type="ad",
        headline="Summer sale: 20% off",
        body="Chat with us to get your discount code.",
        media_type="image",
        image_url="https://scontent.xx.fbcdn.net/v/t45.1600-4/ad_image.jpg",
        thumbnail_url="https://scontent.xx.fbcdn.net/v/t45.1600-4/ad_thumb.jpg",
        ctwa_clid=(
            "ARAkLkA8rmlFeiCktEJQ-QTwRiyYHAFDLMNDBH0CD3qpjd0HR4irJ6LEkR7JwFF4XvnO2E4Nx0"
            "-eM-GABDLOPaOdRMv-_zfUQ2a"
        ),
        welcome_message="Hi! Ask us about the summer sale.",
    )
    assert card.referral is None
    assert card.content == ContactsContent(
        contacts=(
            SharedContact(
                formatted_name="Dr. Barbara J. Johnson Jr.",
                first_name="Barbara",
                last_name="Johnson",
                middle_name="J.",
                name_prefix="Dr.",
                name_suffix="Jr.",
                birthday="1990-04-12",
                phones=(ContactPhone(phone="+1 (650) 555-1200", wa_id="16505551200", type="WORK"),),
                emails=("barbara.johnson@example.com",),
                email_entries=(ContactEmail(email="barbara.johnson@example.com", type="WORK"),),
                organization="Example Inc.",
                org=ContactOrg(company="Example Inc.", department="Design", title="Lead designer"),
                addresses=(
                    ContactAddress(
                        street="1 Hacker Way",
                        city="Menlo Park",
                        state="CA",
                        zip="94025",
                        country="United States",
                        country_code="us",
                        type="WORK",
                    ),
                ),
                urls=(ContactUrl(url="https://www.example.com", type="WORK"),),
            ),
        )
    )
    content = flow.content
    assert isinstance(content, InteractiveContent)
    assert content.reply_type == "nfm_reply"
    assert content.flow_token == "booking-7d2f"
    assert content.flow_response == {
        "flow_token": "booking-7d2f",
        "party_size": 2,
        "date": "2025-06-13",
        "notes": None,
    }
    assert content.response_json is not None  # the text stays, as before
    hash(content)  # still hashable: the parsed response is left out of the hash


def _flow_reply(response_json: Any) -> InteractiveContent:
    message = {
        "from": USER,
        "id": "wamid.FLOW",
        "timestamp": "1749428200",
        "type": "interactive",
        "interactive": {"type": "nfm_reply", "nfm_reply": {"response_json": response_json}},
    }
    [update] = normalize(envelope("messages", {"messages": [message]})).updates
    assert isinstance(update.content, InteractiveContent)
    return update.content


def test_a_flow_response_that_is_not_a_json_object_reads_none_and_is_still_delivered() -> None:
    for text in ("not json", "[1, 2]", '{"x": NaN}', '{"x": Infinity}', "[" * 100_000, 7):
        content = _flow_reply(text)
        assert (content.flow_response, content.flow_token) == (None, None)
    content = _flow_reply('{"flow_token": 12, "a": 1}')
    assert (content.flow_response, content.flow_token) == ({"flow_token": 12, "a": 1}, None)
    nested = ['{"a":' * depth + "1" + "}" * depth for depth in (64, 65)]
    assert [_flow_reply(text).flow_response is not None for text in nested] == [True, False]


# --- item 10: coexistence history and smb_app_state_sync ------------------------------------


def test_history_chunks_are_typed_updates() -> None:
    chunk, declined = run("coexistence_history.json")
    assert isinstance(chunk, HistoryUpdate) and chunk.kind == "history"
    assert (chunk.phase, chunk.chunk_order, chunk.progress) == (0, 1, 55)
    assert chunk.timestamp == 1749425000
    assert chunk.thread_ids == (USER,)
    [thread] = chunk.threads
    sent, received = thread.messages
    assert (sent.from_, sent.to, sent.status, sent.from_me, sent.type) == (
        "15550783881",
        USER,
        "read",
        True,
        "text",
    )
    assert sent.content == TextContent(body="Your table for two is booked for Friday.")
    assert (received.status, received.from_me, received.timestamp) == ("pending", False, 1749300300)
    assert isinstance(received.content, MediaContent)
    assert received.content.media_id == "1003383421387256"
    assert chunk.errors == ()
    assert declined.threads == ()
    assert declined.errors == (
        PlatformError(
            code=2593109,
            title="History sharing is turned off by the business",
            message="History sharing is turned off by the business",
            details="The business declined to share its chat history",
        ),
    )
    assert repr(chunk) == "HistoryUpdate(kind='history', field='history', phase=0, chunk_order=1)"


def test_state_sync_items_are_typed_updates() -> None:
    added, removed = run("coexistence_state_sync.json")
    assert isinstance(added, SmbAppStateSyncUpdate) and added.kind == "smbAppStateSync"
    assert (added.sync_type, added.action, added.timestamp) == ("contact", "add", 1749425050)
    assert added.contact == SyncedContact(
        full_name="Pablo Morales", first_name="Pablo", phone_number=USER
    )
    assert added.phone_number == USER
    assert (removed.action, removed.contact) == (
        "remove",
        SyncedContact(phone_number="447700900123"),
    )
    assert "447700900123" not in repr(removed)


def test_non_object_coexistence_items_are_skipped_with_a_reason() -> None:
    result = normalize(envelope("history", {"history": [1, {}]}))
    assert [u.kind for u in result.updates] == ["history"]
    assert [(s.reason, s.kind) for s in result.skipped] == [("malformed_history", "history")]
    result = normalize(envelope("smb_app_state_sync", {"state_sync": ["x", {}]}))
    assert [(u.kind, u.action) for u in result.updates] == [("smbAppStateSync", None)]
    assert [(s.reason, s.kind) for s in result.skipped] == [
        ("malformed_state_sync", "smbAppStateSync")
    ]


async def test_new_kinds_reach_their_handlers() -> None:
    facade = DefaultFacade()
    seen: list[str] = []
    facade.on(HistoryUpdate, lambda u: seen.append(f"history:{u.chunk_order}"))
    facade.on(SmbAppStateSyncUpdate, lambda u: seen.append(f"sync:{u.action}"))
    facade.on("account", lambda u: seen.append(type(u.details).__name__))
    for name in ("coexistence_history.json", "coexistence_state_sync.json", "account_events.json"):
        for update in normalize(load(name)).updates:
            await facade.dispatch(update)
    assert seen[:4] == ["history:1", "history:None", "sync:add", "sync:remove"]
    assert seen[4:] == ["AccountEvent"] * 7 + ["AccountAlert", "AccountReview"]


# --- any subset of optional fields, and any values, never skips an update -------------------

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=8,
)
_REFERRAL_KEYS = (
    "source_url",
    "source_id",
    "source_type",
    "headline",
    "body",
    "media_type",
    "image_url",
    "video_url",
    "thumbnail_url",
    "ctwa_clid",
    "welcome_message",
)
_CARD_KEYS = ("addresses", "birthday", "emails", "name", "org", "phones", "urls")


@settings(max_examples=60, deadline=None)
@given(
    referral=st.dictionaries(st.sampled_from(_REFERRAL_KEYS), _JSON | st.text(), max_size=11),
    card=st.dictionaries(st.sampled_from(_CARD_KEYS), _JSON, max_size=7),
)
def test_any_referral_or_contact_card_is_delivered(
    referral: dict[str, Any], card: dict[str, Any]
) -> None:
    messages = [
        {"from": USER, "id": "wamid.R", "timestamp": "1", "type": "text", "text": {"body": "hi"}},
        {"from": USER, "id": "wamid.C", "timestamp": "1", "type": "contacts", "contacts": [card]},
    ]
    messages[0]["referral"] = referral
    result = normalize(envelope("messages", {"messages": messages}))
    assert result.skipped == ()
    ad, shared = result.updates
    assert isinstance(ad.referral, Referral)
    for key in ("source_url", "headline", "ctwa_clid"):
        value = referral.get(key)
        assert getattr(ad.referral, key) == (value if type(value) is str else None)
    assert isinstance(shared.content, ContactsContent)
    [contact] = shared.content.contacts
    read_all(contact)
    assert contact.birthday == (card["birthday"] if type(card.get("birthday")) is str else None)


@settings(max_examples=60, deadline=None)
@given(
    field=st.sampled_from(
        [
            "message_template_status_update",
            "template_category_update",
            "message_template_quality_update",
            "message_template_components_update",
            "account_update",
            "account_alerts",
            "account_review_update",
        ]
    ),
    value=st.dictionaries(st.text(max_size=30), _JSON, max_size=6),
)
def test_any_account_value_is_delivered_and_reads_without_raising(
    field: str, value: dict[str, Any]
) -> None:
    [update] = normalize(envelope(field, value)).updates
    assert update.kind == "account" and update.value is value
    details = update.details
    assert details is not None
    read_all(update)


@settings(max_examples=60, deadline=None)
@given(
    history=st.dictionaries(st.sampled_from(["metadata", "threads", "errors"]), _JSON, max_size=3),
    sync=st.dictionaries(st.sampled_from(["type", "contact", "action", "metadata"]), _JSON),
)
def test_any_history_or_state_sync_item_is_delivered(
    history: dict[str, Any], sync: dict[str, Any]
) -> None:
    result = normalize(envelope("history", {"history": [history]}))
    [chunk] = result.updates
    read_all(chunk)
    result = normalize(envelope("smb_app_state_sync", {"state_sync": [sync]}))
    [item] = result.updates
    read_all(item)
