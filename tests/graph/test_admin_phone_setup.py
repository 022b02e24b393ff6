"""Phone number set-up helpers: verification, automation, compliance, profile node, usernames,
message history and pre-encrypted sends, as exact wire requests and typed results."""

from __future__ import annotations

from typing import Any

import pytest

from svc.graph import (
    BusinessComplianceInfo,
    BusinessProfile,
    BusinessUsername,
    CodeVerification,
    ConversationalAutomation,
    EncryptedMessageResult,
    GraphRequestValidationError,
    MessageHistoryEvent,
    RegisterDeregisterRateLimitExceededError,
    Success,
    UsernameNotAvailableError,
    UsernameSuggestions,
    paginate,
)

from ._admin_wire import PHONE_ID, Upstream, assert_wire

JWE = "eyJhbGciOiJSU0EtT0FFUCIsImVuYyI6IkExMjhDQkMtSFMyNTYifQ.a2V5.aXY.Y2lwaGVy.dGFn"


# --- verification codes


async def test_request_and_verify_code() -> None:
    up = Upstream({"success": True}, {"success": True, "id": PHONE_ID})
    phone = up.phone()
    requested = await phone.request_code(code_method="SMS", language="en_US")
    verified = await phone.verify_code(code="123456")
    assert_wire(
        up.requests[0], "POST", f"/{PHONE_ID}/request_code",
        body={"code_method": "SMS", "language": "en_US"},
    )
    assert_wire(up.requests[1], "POST", f"/{PHONE_ID}/verify_code", body={"code": "123456"})
    assert requested == Success(success=True, raw={"success": True})
    assert verified == CodeVerification(
        success=True, id=PHONE_ID, raw={"success": True, "id": PHONE_ID}
    )


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"code_method": "EMAIL", "language": "en_US"}, "code_method"),
        ({"code_method": "sms", "language": "en_US"}, "code_method"),
        ({"code_method": "VOICE", "language": "english"}, "language"),
        ({"code_method": "VOICE", "language": "en-US"}, "language"),
    ],
)
async def test_request_code_refuses_before_sending(arguments: dict[str, Any], field: str) -> None:
    up = Upstream()
    with pytest.raises(GraphRequestValidationError) as caught:
        await up.phone().request_code(**arguments)
    assert caught.value.field == field
    assert up.requests == []


FULLWIDTH_CODE = "\uff11\uff12\uff13\uff14\uff15\uff16"


@pytest.mark.parametrize("code", ["12345", "1234567", "12a456", 123456, FULLWIDTH_CODE])
async def test_verify_code_takes_six_ascii_digits(code: object) -> None:
    up = Upstream()
    with pytest.raises(GraphRequestValidationError) as caught:
        await up.phone().verify_code(code=code)  # type: ignore[arg-type]
    assert caught.value.field == "code"
    assert up.requests == []


async def test_an_error_answer_resolves_through_the_one_registry() -> None:
    error = {"error": {"message": "(#133016) Rate limit", "type": "OAuthException", "code": 133016}}
    up = Upstream(error, status=400)
    with pytest.raises(RegisterDeregisterRateLimitExceededError) as caught:
        await up.phone().request_code(code_method="VOICE", language="es")
    assert (caught.value.code, caught.value.status) == (133016, 400)


# --- conversational automation


async def test_configure_conversational_automation() -> None:
    up = Upstream({"success": True}, {"success": True})
    phone = up.phone()
    await phone.configure_conversational_automation(
        enable_welcome_message=True,
        prompts=["How can I help you today?", "Track my order"],
    )
    await phone.configure_conversational_automation(
        commands=[
            {"command_name": "help", "command_description": "Get help with your order"},
            {"command_name": "status", "command_description": "Check your order status"},
        ],
        prompts=[],
    )
    assert_wire(
        up.requests[0], "POST", f"/{PHONE_ID}/conversational_automation",
        body={
            "enable_welcome_message": True,
            "prompts": ["How can I help you today?", "Track my order"],
        },
    )
    assert_wire(
        up.requests[1], "POST", f"/{PHONE_ID}/conversational_automation",
        body={
            "prompts": [],
            "commands": [
                {"command_name": "help", "command_description": "Get help with your order"},
                {"command_name": "status", "command_description": "Check your order status"},
            ],
        },
    )


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({}, None),
        ({"enable_welcome_message": "yes"}, "enable_welcome_message"),
        ({"prompts": ["a", "b", "c", "d"]}, "prompts"),
        ({"prompts": ["x" * 81]}, "prompts"),
        ({"prompts": "one prompt"}, "prompts"),
        ({"commands": [{"command_name": "no spaces", "command_description": "d"}]}, "commands"),
        ({"commands": [{"command_name": "c" * 31, "command_description": "d"}]}, "commands"),
        ({"commands": [{"command_name": "help"}]}, "commands"),
        ({"commands": [{"command_name": "h", "command_description": "d", "x": 1}]}, "commands"),
        (
            {"commands": [{"command_name": "h", "command_description": "d"}] * 2},
            "commands",
        ),
        ({"commands": [{"command_name": f"c{n}", "command_description": "d"} for n in range(31)]},
         "commands"),
    ],
)
async def test_conversational_automation_refusals(arguments: dict[str, Any], field: str) -> None:
    up = Upstream()
    with pytest.raises(GraphRequestValidationError) as caught:
        await up.phone().configure_conversational_automation(**arguments)
    assert caught.value.field == field
    assert up.requests == []


async def test_get_business_bot() -> None:
    answer = {
        "id": "1234567890123456",
        "prompts": ["How can I assist you today?"],
        "commands": [{"command_name": "help", "command_description": "Show help"}],
        "enable_welcome_message": True,
    }
    up = Upstream(answer)
    bot = await up.phone().get_business_bot(bot_id="1234567890123456", fields=["prompts"])
    assert_wire(up.only, "GET", "/1234567890123456", query={"fields": "prompts"})
    assert bot == ConversationalAutomation(
        id="1234567890123456",
        enable_welcome_message=True,
        prompts=("How can I assist you today?",),
        commands=(("help", "Show help"),),
        raw=answer,
    )


# --- business compliance


COMPLIANCE = {
    "messaging_product": "whatsapp",
    "entity_name": "Lucky Shrub Private Limited",
    "entity_type": "PARTNERSHIP",
    "is_registered": True,
    "grievance_officer_details": {
        "name": "Chandravati P.",
        "email": "chandravati@luckyshrub.com",
        "mobile_number": "+913854559033",
    },
    "customer_care_details": {
        "email": "support@luckyshrub.com",
        "landline_number": "+913857614343",
    },
}


async def test_compliance_info_read_and_update() -> None:
    listing = {"data": [{**COMPLIANCE, "whatsapp_business_account_id": "102290129340398"}]}
    up = Upstream(listing, {"success": True})
    phone = up.phone()
    info = await phone.get_compliance_info()
    await phone.update_compliance_info(
        entity_name="Lucky Shrub Private Limited",
        entity_type="PARTNERSHIP",
        is_registered=True,
        grievance_officer_details=COMPLIANCE["grievance_officer_details"],  # type: ignore[arg-type]
        customer_care_details=COMPLIANCE["customer_care_details"],  # type: ignore[arg-type]
    )
    assert_wire(up.requests[0], "GET", f"/{PHONE_ID}/business_compliance_info")
    assert_wire(up.requests[1], "POST", f"/{PHONE_ID}/business_compliance_info", body=COMPLIANCE)
    assert info == BusinessComplianceInfo(
        waba_id="102290129340398",
        entity_name="Lucky Shrub Private Limited",
        entity_type="PARTNERSHIP",
        entity_type_custom=None,
        is_registered=True,
        grievance_officer_details=COMPLIANCE["grievance_officer_details"],  # type: ignore[arg-type]
        customer_care_details=COMPLIANCE["customer_care_details"],  # type: ignore[arg-type]
        raw=listing,
    )


async def test_compliance_other_entity_type_needs_its_custom_name() -> None:
    up = Upstream({"success": True})
    phone = up.phone()
    officer = {"name": "Rajesh Kumar", "email": "rajesh@example.in"}
    care = {"email": "support@example.in"}
    with pytest.raises(GraphRequestValidationError) as caught:
        await phone.update_compliance_info(
            entity_name="Innovative Tech", entity_type="OTHER",
            grievance_officer_details=officer, customer_care_details=care,
        )
    assert caught.value.field == "entity_type_custom"
    await phone.update_compliance_info(
        entity_name="Innovative Tech", entity_type="OTHER", entity_type_custom="Trust",
        grievance_officer_details=officer, customer_care_details=care,
    )
    assert_wire(
        up.only, "POST", f"/{PHONE_ID}/business_compliance_info",
        body={
            "messaging_product": "whatsapp",
            "entity_name": "Innovative Tech",
            "entity_type": "OTHER",
            "entity_type_custom": "Trust",
            "grievance_officer_details": officer,
            "customer_care_details": care,
        },
    )


@pytest.mark.parametrize(
    ("officer", "care", "field"),
    [
        ({"email": "a@b.in"}, {"email": "c@d.in"}, "grievance_officer_details"),
        ({"name": "A", "email": "not-an-email"}, {"email": "c@d.in"},
         "grievance_officer_details.email"),
        ({"name": "A", "email": "a@b.in", "mobile_number": "9876543210"}, {"email": "c@d.in"},
         "grievance_officer_details.mobile_number"),
        ({"name": "A", "email": "a@b.in"}, {"email": "c@d.in", "name": "B"},
         "customer_care_details"),
    ],
)
async def test_compliance_contact_refusals(
    officer: dict[str, str], care: dict[str, str], field: str
) -> None:
    up = Upstream()
    with pytest.raises(GraphRequestValidationError) as caught:
        await up.phone().update_compliance_info(
            entity_name="Lucky Shrub", entity_type="PRIVATE_COMPANY",
            grievance_officer_details=officer, customer_care_details=care,
        )
    assert caught.value.field == field
    assert up.requests == []


# --- the business-profile node


async def test_business_profile_node_read_and_update() -> None:
    node = {
        "id": "1234567890123456",
        "about": "Quality products delivered worldwide",
        "email": "contact@business-example.com",
        "vertical": "RETAIL",
        "websites": ["https://www.business-example.com"],
        "messaging_product": "whatsapp",
    }
    up = Upstream(node, {"id": "1234567890123456", "success": True})
    phone = up.phone()
    profile = await phone.get_business_profile_node(profile_id="1234567890123456")
    updated = await phone.update_business_profile_node(
        profile_id="1234567890123456", description="Updated customer service business",
        email="updated-support@service-example.com",
    )
    assert_wire(up.requests[0], "GET", "/1234567890123456")
    assert_wire(
        up.requests[1], "POST", "/1234567890123456",
        body={
            "messaging_product": "whatsapp",
            "description": "Updated customer service business",
            "email": "updated-support@service-example.com",
        },
    )
    assert profile == BusinessProfile(
        about="Quality products delivered worldwide", address=None, description=None,
        email="contact@business-example.com", profile_picture_url=None,
        websites=("https://www.business-example.com",), vertical="RETAIL", raw=node,
    )
    assert updated.success is True


async def test_business_profile_node_update_needs_a_field_and_a_safe_id() -> None:
    up = Upstream()
    phone = up.phone()
    with pytest.raises(GraphRequestValidationError):
        await phone.update_business_profile_node(profile_id="1234567890123456")
    with pytest.raises(GraphRequestValidationError) as caught:
        await phone.get_business_profile_node(profile_id="../1234")
    assert caught.value.field == "profile_id"
    assert up.requests == []


# --- usernames


async def test_username_read_set_delete_and_suggestions() -> None:
    up = Upstream(
        {"username": "jaspers_market", "status": "approved"},
        {"status": "reserved"},
        {"success": True},
        {"data": [{"username_suggestions": ["jaspers.market", "jasper_market"]}]},
    )
    phone = up.phone()
    current = await phone.get_username()
    claimed = await phone.set_username(username="jaspers.market", transfer_action="force_transfer")
    await phone.delete_username()
    suggestions = await phone.list_username_suggestions()
    assert_wire(up.requests[0], "GET", f"/{PHONE_ID}/username")
    assert_wire(
        up.requests[1], "POST", f"/{PHONE_ID}/username",
        body={"username": "jaspers.market", "transfer_action": "force_transfer"},
    )
    assert_wire(up.requests[2], "DELETE", f"/{PHONE_ID}/username")
    assert_wire(up.requests[3], "GET", f"/{PHONE_ID}/username_suggestions")
    assert current == BusinessUsername(
        username="jaspers_market",
        status="approved",
        raw={"username": "jaspers_market", "status": "approved"},
    )
    assert (claimed.username, claimed.status) == (None, "reserved")
    assert suggestions == UsernameSuggestions(
        suggestions=("jaspers.market", "jasper_market"),
        raw={"data": [{"username_suggestions": ["jaspers.market", "jasper_market"]}]},
    )


@pytest.mark.parametrize(
    "username",
    ["ab", "a" * 36, "no spaces", ".lead", "trail.", "dou..ble", "1234567", "www_shop",
     "shop.com", "shop.HTML", "emoji😀", 12345],
)
async def test_set_username_refuses_what_the_platform_refuses(username: object) -> None:
    up = Upstream()
    with pytest.raises(GraphRequestValidationError) as caught:
        await up.phone().set_username(username=username)  # type: ignore[arg-type]
    assert caught.value.field == "username"
    assert up.requests == []


async def test_a_taken_username_is_the_registry_class() -> None:
    up = Upstream({"error": {"message": "taken", "code": 147001}}, status=400)
    with pytest.raises(UsernameNotAvailableError):
        await up.phone().set_username(username="jaspers_market")


# --- message history


HISTORY = {
    "data": [
        {
            "id": "1234567890123456",
            "message_id": "wamid.HBgLMTY0NzM3Nzc3NzUVAgARGBI5QTNEQTA2RjdGMEY4RTRGAA==",
            "events": {
                "data": [
                    {"id": "2345678901234567", "delivery_status": "SENT",
                     "timestamp": 1640995200, "application": {"id": "9876543210987654"}},
                ]
            },
        }
    ],
    "paging": {"cursors": {"after": "QVFI"}, "next": "https://graph.facebook.com/x?after=QVFI"},
}


async def test_message_history_and_its_events() -> None:
    events = {
        "data": [
            {"cursor": "MTA=", "node": {"id": "3456789012345678", "delivery_status": "READ",
                                        "occurrence_timestamp": 1640995320,
                                        "status_timestamp": 1640995325,
                                        "application": {"id": "9876543210987654"}}},
        ]
    }
    up = Upstream(HISTORY, events)
    phone = up.phone()
    page = await phone.list_message_history(
        message_id="wamid.HBgLMTY0NzM3Nzc3NzUVAgARGBI5QTNEQTA2RjdGMEY4RTRGAA==", limit=10
    )
    listed = await phone.list_message_history_events(
        message_history_id="1234567890123456", status_filter="READ"
    )
    assert_wire(
        up.requests[0], "GET", f"/{PHONE_ID}/message_history",
        query={
            "message_id": "wamid.HBgLMTY0NzM3Nzc3NzUVAgARGBI5QTNEQTA2RjdGMEY4RTRGAA==",
            "limit": "10",
        },
    )
    assert_wire(
        up.requests[1], "GET", "/1234567890123456/events", query={"status_filter": "READ"}
    )
    [entry] = page.items
    assert (entry.id, page.next_cursor) == ("1234567890123456", "QVFI")
    [event] = entry.events
    assert (event.delivery_status, event.occurrence_timestamp, event.application_id) == (
        "SENT", 1640995200, "9876543210987654"
    )
    assert listed.items == (
        MessageHistoryEvent(
            id="3456789012345678", delivery_status="READ", occurrence_timestamp=1640995320,
            status_timestamp=1640995325, error_description=None,
            application_id="9876543210987654", raw=events["data"][0],
        ),
    )


async def test_message_history_pages_with_paginate() -> None:
    last = {"data": [{"id": "2", "message_id": "wamid.B"}]}
    up = Upstream(HISTORY, last)
    entries = [e async for e in paginate(up.phone().list_message_history, limit=1)]
    assert [e.id for e in entries] == ["1234567890123456", "2"]
    assert dict(up.requests[1].url.params) == {"limit": "1", "after": "QVFI"}


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"message_id": "not-a-wamid"}, "message_id"),
        ({"message_id": "wamid.has space"}, "message_id"),
        ({"limit": 0}, "limit"),
    ],
)
async def test_message_history_refusals(arguments: dict[str, Any], field: str) -> None:
    up = Upstream()
    with pytest.raises(GraphRequestValidationError) as caught:
        await up.phone().list_message_history(**arguments)
    assert caught.value.field == field
    with pytest.raises(GraphRequestValidationError) as caught:
        await up.phone().list_message_history_events(message_history_id="1", status_filter="SEEN")
    assert caught.value.field == "status_filter"
    assert up.requests == []


# --- pre-encrypted sends


async def test_send_encrypted_message_passes_the_jwe_through() -> None:
    up = Upstream({"encrypted_contents": "eyJhbGciOiJSU0EtT0FFUCJ9.b.c.d.e"})
    result = await up.phone().send_encrypted_message(encrypted_contents=JWE)
    assert_wire(
        up.only, "POST", f"/{PHONE_ID}/messages_encrypted",
        body={"messaging_product": "whatsapp", "encrypted_contents": JWE},
    )
    answer = {"encrypted_contents": "eyJhbGciOiJSU0EtT0FFUCJ9.b.c.d.e"}
    assert result == EncryptedMessageResult(encrypted_contents=answer["encrypted_contents"],
                                            raw=answer)


@pytest.mark.parametrize(
    "contents", ["", "a.b.c.d", "a.b.c.d.e.f", "{\"text\": \"plain\"}", ".b.c.d.e", "a b.c.d.e.f"]
)
async def test_send_encrypted_message_refuses_anything_but_a_compact_jwe(contents: str) -> None:
    up = Upstream()
    with pytest.raises(GraphRequestValidationError) as caught:
        await up.phone().send_encrypted_message(encrypted_contents=contents)
    assert caught.value.field == "encrypted_contents"
    assert up.requests == []
