"""Phone number admin helpers: exact wire requests, typed results, rejection before transport."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from svc.graph import (
    BlockUsersResult,
    BusinessProfile,
    CommerceSettings,
    GraphRequestValidationError,
    OfficialBusinessAccountStatus,
    PhoneNumberInfo,
    Success,
)

from ._admin_wire import PHONE_ID, Upstream, assert_wire

PRODUCT = {"messaging_product": "whatsapp"}
PEM = (
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n"
    "-----END PUBLIC KEY-----"
)


async def test_get_phone_number_info() -> None:
    answer = {
        "id": PHONE_ID,
        "display_phone_number": "+1 650-555-1234",
        "verified_name": "Jasper's Market",
        "quality_rating": "GREEN",
        "code_verification_status": "VERIFIED",
        "name_status": "APPROVED",
        "platform_type": "CLOUD_API",
        "throughput": {"level": "STANDARD"},
    }
    up = Upstream(answer)
    info = await up.phone().get_phone_number_info(fields="verified_name,quality_rating")
    assert_wire(up.only, "GET", f"/{PHONE_ID}", query={"fields": "verified_name,quality_rating"})
    assert info == PhoneNumberInfo(
        id=PHONE_ID,
        display_phone_number="+1 650-555-1234",
        verified_name="Jasper's Market",
        quality_rating="GREEN",
        code_verification_status="VERIFIED",
        name_status="APPROVED",
        platform_type="CLOUD_API",
        throughput_level="STANDARD",
        raw=answer,
    )


async def test_get_settings_with_sip_credentials() -> None:
    answer = {
        "calling": {
            "status": "ENABLED",
            "call_icon_visibility": "DEFAULT",
            "sip": {"status": "ENABLED", "servers": [{"hostname": "sip.example.com"}]},
        },
        "storage_configuration": {"status": "DEFAULT"},
    }
    up = Upstream(answer)
    settings = await up.phone().get_settings(fields=["calling"], include_sip_credentials=True)
    assert_wire(
        up.only,
        "GET",
        f"/{PHONE_ID}/settings",
        query={"fields": "calling", "include_sip_credentials": "true"},
    )
    assert settings.calling is not None and settings.calling["status"] == "ENABLED"
    assert settings.storage_configuration == {"status": "DEFAULT"}


async def test_update_settings_emits_storage_configuration_only() -> None:
    up = Upstream({"success": True})
    result = await up.phone().update_settings(
        calling={"status": "ENABLED", "call_icon_visibility": "DEFAULT"},
        storage_configuration={
            "status": "IN_COUNTRY_STORAGE_ENABLED",
            "data_localization_region": "DE",
        },
    )
    body = {
        "calling": {"status": "ENABLED", "call_icon_visibility": "DEFAULT"},
        "storage_configuration": {
            "status": "IN_COUNTRY_STORAGE_ENABLED",
            "data_localization_region": "DE",
        },
    }
    assert_wire(up.only, "POST", f"/{PHONE_ID}/settings", body=body)
    assert "data_localization_region" not in json.loads(up.only.content)
    assert result == Success(success=True, raw={"success": True})


async def test_request_display_name_review() -> None:
    up = Upstream({"success": True})
    result = await up.phone().request_display_name_review(new_display_name="Jasper's Market")
    assert_wire(up.only, "POST", f"/{PHONE_ID}", body={"new_display_name": "Jasper's Market"})
    assert result.success is True


async def test_business_profile_get_and_update() -> None:
    answer = {
        "data": [
            {
                "about": "Fresh produce",
                "address": "1 Market St",
                "description": "Family grocer",
                "email": "hello@example.com",
                "profile_picture_url": "https://pps.whatsapp.net/v/t61/abc.jpg",
                "websites": ["https://www.example.com/"],
                "vertical": "RETAIL",
                "messaging_product": "whatsapp",
            }
        ]
    }
    up = Upstream(answer, {"success": True})
    phone = up.phone()
    profile = await phone.get_business_profile()
    updated = await phone.update_business_profile(
        about="Fresh produce daily",
        websites=["https://www.example.com/"],
        profile_picture_handle="4::aW1hZ2UvanBlZw==:ARZ",
        vertical="RETAIL",
    )
    assert_wire(
        up.requests[0],
        "GET",
        f"/{PHONE_ID}/whatsapp_business_profile",
        query={"fields": "about,address,description,email,profile_picture_url,websites,vertical"},
    )
    assert_wire(
        up.requests[1],
        "POST",
        f"/{PHONE_ID}/whatsapp_business_profile",
        body={
            **PRODUCT,
            "about": "Fresh produce daily",
            "profile_picture_handle": "4::aW1hZ2UvanBlZw==:ARZ",
            "vertical": "RETAIL",
            "websites": ["https://www.example.com/"],
        },
    )
    assert isinstance(profile, BusinessProfile)
    assert profile.websites == ("https://www.example.com/",)
    assert profile.email == "hello@example.com"
    assert updated.success is True


async def test_commerce_settings_get_and_update() -> None:
    answer = {"data": [{"is_cart_enabled": True, "is_catalog_visible": False, "id": "5283"}]}
    up = Upstream(answer, {"success": True})
    phone = up.phone()
    settings = await phone.get_commerce_settings()
    await phone.update_commerce_settings(is_cart_enabled=False, is_catalog_visible=True)
    assert_wire(up.requests[0], "GET", f"/{PHONE_ID}/whatsapp_commerce_settings")
    assert_wire(
        up.requests[1],
        "POST",
        f"/{PHONE_ID}/whatsapp_commerce_settings",
        body={"is_cart_enabled": False, "is_catalog_visible": True},
    )
    assert settings == CommerceSettings(
        id="5283", is_cart_enabled=True, is_catalog_visible=False, raw=answer
    )


async def test_block_users_list_block_unblock() -> None:
    listing = {
        "data": [{"messaging_product": "whatsapp", "wa_id": "16505551234"}],
        "paging": {"cursors": {"after": "QVFI", "before": "QVFH"}, "next": "https://x/next"},
    }
    added = {
        "messaging_product": "whatsapp",
        "block_users": {"added_users": [{"input": "+16505551234", "wa_id": "16505551234"}]},
    }
    removed = {
        "messaging_product": "whatsapp",
        "block_users": {"removed_users": [{"input": "16505551234", "wa_id": "16505551234"}]},
    }
    up = Upstream(listing, added, removed)
    phone = up.phone()
    page = await phone.list_blocked_users(limit=50)
    blocked = await phone.block_users(users=["+16505551234"])
    unblocked = await phone.unblock_users(users=["16505551234"])
    assert_wire(up.requests[0], "GET", f"/{PHONE_ID}/block_users", query={"limit": "50"})
    assert_wire(
        up.requests[1],
        "POST",
        f"/{PHONE_ID}/block_users",
        body={**PRODUCT, "block_users": [{"user": "+16505551234"}]},
    )
    assert_wire(
        up.requests[2],
        "DELETE",
        f"/{PHONE_ID}/block_users",
        body={**PRODUCT, "block_users": [{"user": "16505551234"}]},
    )
    assert page.items[0].wa_id == "16505551234"
    assert page.next_cursor == "QVFI"
    assert isinstance(blocked, BlockUsersResult)
    assert [(u.input, u.wa_id) for u in blocked.users] == [("+16505551234", "16505551234")]
    assert unblocked.users[0].wa_id == "16505551234"
    assert unblocked.failed_users == ()


async def test_official_business_account_status_and_review() -> None:
    up = Upstream({"oba_status": "NOT_STARTED", "id": PHONE_ID}, {"success": True})
    phone = up.phone()
    status = await phone.get_official_business_account()
    await phone.request_official_business_account(
        business_website_url="https://www.example.com",
        primary_country_of_operation="United States",
        primary_language="English",
        parent_business_or_brand="Jasper Holdings",
        supporting_links=["https://news.example.org/jasper", "https://en.wikipedia.org/wiki/J"],
        additional_supporting_information="Featured in national press.",
    )
    assert_wire(up.requests[0], "GET", f"/{PHONE_ID}/official_business_account")
    assert_wire(
        up.requests[1],
        "POST",
        f"/{PHONE_ID}/official_business_account",
        body={
            "business_website_url": "https://www.example.com",
            "primary_country_of_operation": "United States",
            "primary_language": "English",
            "parent_business_or_brand": "Jasper Holdings",
            "supporting_links": [
                "https://news.example.org/jasper",
                "https://en.wikipedia.org/wiki/J",
            ],
            "additional_supporting_information": "Featured in national press.",
        },
    )
    assert status == OfficialBusinessAccountStatus(
        id=PHONE_ID, oba_status="NOT_STARTED", raw={"oba_status": "NOT_STARTED", "id": PHONE_ID}
    )


async def test_official_business_account_minimal_review() -> None:
    up = Upstream({"success": True})
    await up.phone().request_official_business_account(
        business_website_url="https://www.example.com", primary_country_of_operation="India"
    )
    assert_wire(
        up.only,
        "POST",
        f"/{PHONE_ID}/official_business_account",
        body={
            "business_website_url": "https://www.example.com",
            "primary_country_of_operation": "India",
        },
    )


async def test_register_and_deregister() -> None:
    up = Upstream({"success": True}, {"success": True})
    phone = up.phone()
    assert (await phone.register_phone_number(pin="123456")).success
    assert (await phone.deregister_phone_number()).success
    assert_wire(up.requests[0], "POST", f"/{PHONE_ID}/register", body={**PRODUCT, "pin": "123456"})
    assert_wire(up.requests[1], "POST", f"/{PHONE_ID}/deregister", body={})


async def test_qr_codes_crud() -> None:
    qr = {
        "code": "4O4YGZEG3RIVE1",
        "prefilled_message": "Cyber Monday deals",
        "deep_link_url": "https://wa.me/message/4O4YGZEG3RIVE1",
        "qr_image_url": "https://scontent.example/qr.png",
    }
    up = Upstream(
        {"data": [qr]}, qr, qr, {**qr, "prefilled_message": "New text"}, {"success": True}
    )
    phone = up.phone()
    page = await phone.list_qr_codes()
    one = await phone.get_qr_code(code="4O4YGZEG3RIVE1")
    created = await phone.create_qr_code(prefilled_message="Cyber Monday deals")
    updated = await phone.update_qr_code(code="4O4YGZEG3RIVE1", prefilled_message="New text")
    deleted = await phone.delete_qr_code(code="4O4YGZEG3RIVE1")
    assert_wire(up.requests[0], "GET", f"/{PHONE_ID}/message_qrdls")
    assert_wire(up.requests[1], "GET", f"/{PHONE_ID}/message_qrdls/4O4YGZEG3RIVE1")
    assert_wire(
        up.requests[2],
        "POST",
        f"/{PHONE_ID}/message_qrdls",
        body={"prefilled_message": "Cyber Monday deals", "generate_qr_image": "PNG"},
    )
    assert_wire(
        up.requests[3],
        "POST",
        f"/{PHONE_ID}/message_qrdls",
        body={"code": "4O4YGZEG3RIVE1", "prefilled_message": "New text"},
    )
    assert_wire(up.requests[4], "DELETE", f"/{PHONE_ID}/message_qrdls/4O4YGZEG3RIVE1")
    assert page.items[0].deep_link_url == "https://wa.me/message/4O4YGZEG3RIVE1"
    assert one.code == created.code == "4O4YGZEG3RIVE1"
    assert updated.prefilled_message == "New text"
    assert deleted.success


async def test_business_public_key_get_and_set() -> None:
    answer = {
        "data": [
            {"business_public_key": PEM, "business_public_key_signature_status": "VALID"}
        ]
    }
    up = Upstream(answer, {"success": True})
    phone = up.phone()
    key = await phone.get_business_public_key()
    await phone.set_business_public_key(business_public_key=PEM)
    assert_wire(up.requests[0], "GET", f"/{PHONE_ID}/whatsapp_business_encryption")
    assert_wire(
        up.requests[1],
        "POST",
        f"/{PHONE_ID}/whatsapp_business_encryption",
        body={"business_public_key": PEM},
    )
    assert (key.business_public_key, key.signature_status) == (PEM, "VALID")


@pytest.mark.parametrize(
    ("call", "kwargs"),
    [
        ("get_phone_number_info", {"fields": ["a b"]}),
        ("get_settings", {"include_sip_credentials": "yes"}),
        ("update_settings", {}),
        ("update_settings", {"storage_configuration": {"status": "IN_COUNTRY_STORAGE_ENABLED"}}),
        ("update_settings", {"storage_configuration": {"status": "DEFAULT", "extra": 1}}),
        ("update_settings", {"storage_configuration": {"status": "ELSEWHERE"}}),
        (
            "update_settings",
            {"storage_configuration": {"status": "DEFAULT", "data_localization_region": "DE"}},
        ),
        ("request_display_name_review", {"new_display_name": ""}),
        ("update_business_profile", {}),
        ("update_business_profile", {"about": "a" * 140}),
        ("update_business_profile", {"email": "not-an-email"}),
        ("update_business_profile", {"websites": ["ftp://example.com"]}),
        ("update_business_profile", {"websites": ["https://a.example", "https://b.example",
                                                 "https://c.example"]}),
        ("update_business_profile", {"vertical": "retail"}),
        ("update_commerce_settings", {}),
        ("update_commerce_settings", {"is_cart_enabled": "true"}),
        ("block_users", {"users": []}),
        ("block_users", {"users": ["abc"]}),
        ("unblock_users", {"users": "16505551234"}),
        ("list_blocked_users", {"limit": 1001}),
        ("request_official_business_account",
         {"business_website_url": "javascript:alert(1)", "primary_country_of_operation": "US"}),
        ("request_official_business_account",
         {"business_website_url": "https://x.example", "primary_country_of_operation": ""}),
        ("register_phone_number", {"pin": "12345"}),
        ("register_phone_number", {"pin": 123456}),
        ("get_qr_code", {"code": "../x"}),
        ("create_qr_code", {"prefilled_message": "hi", "generate_qr_image": "GIF"}),
        ("create_qr_code", {"prefilled_message": "x" * 141}),
        ("set_business_public_key", {"business_public_key": "-----BEGIN PRIVATE KEY-----"}),
    ],
)
async def test_rejections_send_nothing(call: str, kwargs: dict[str, Any]) -> None:
    up = Upstream()
    with pytest.raises(GraphRequestValidationError):
        await getattr(up.phone(), call)(**kwargs)
    assert up.requests == []


@given(pin=st.text(max_size=8))
async def test_property_pin_rule(pin: str) -> None:
    up = Upstream({"success": True})
    if len(pin) == 6 and pin.isascii() and pin.isdigit():
        await up.phone().register_phone_number(pin=pin)
        assert len(up.requests) == 1
    else:
        with pytest.raises(GraphRequestValidationError):
            await up.phone().register_phone_number(pin=pin)
        assert up.requests == []


@given(fields=st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=4))
async def test_property_fields_rule(fields: list[str]) -> None:
    up = Upstream({"id": PHONE_ID})
    allowed = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.{}():,")
    if all(set(f) <= allowed for f in fields):
        await up.phone().get_phone_number_info(fields=fields)
        assert dict(up.only.url.params) == {"fields": ",".join(fields)}
    else:
        with pytest.raises(GraphRequestValidationError):
            await up.phone().get_phone_number_info(fields=fields)
        assert up.requests == []
