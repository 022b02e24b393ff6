"""Builders are pure: exact wire JSON out, validation errors for bad input, no I/O."""

from __future__ import annotations

from typing import Any

import pytest

from svc.graph import (
    GROUP_MESSAGE_TYPES,
    GraphRequestValidationError,
    build_audio_message,
    build_contacts_message,
    build_group_media_message,
    build_group_template_message,
    build_interactive_buttons_message,
    build_interactive_list_message,
    build_interactive_product_message,
    build_interactive_products_message,
    build_location_message,
    build_marketing_template_message,
    build_media_message,
    build_otp_button,
    build_sticker_message,
    build_template_message,
    check_message_payload,
)

TO = "+15551234567"
GROUP = "Y2FwaV9ncm91cDox"


def envelope(
    type_: str, body: Any, to: str = TO, recipient_type: str = "individual"
) -> dict[str, Any]:
    return {
        "messaging_product": "whatsapp",
        "recipient_type": recipient_type,
        "to": to,
        "type": type_,
        type_: body,
    }


@pytest.mark.parametrize("kind", ["image", "video", "audio", "document", "sticker"])
def test_media_message_every_kind(kind: Any) -> None:
    assert build_media_message(kind, to=TO, media_id="m1") == envelope(kind, {"id": "m1"})
    assert build_media_message(
        kind, to=TO, link="https://cdn.test/f", reply_to_message_id="wamid.A"
    ) == {**envelope(kind, {"link": "https://cdn.test/f"}), "context": {"message_id": "wamid.A"}}


def test_leading_plus_is_kept_verbatim() -> None:
    assert build_sticker_message(to=TO, media_id="s")["to"] == TO


def test_audio_voice_false_keeps_the_standard_payload() -> None:
    assert build_audio_message(to=TO, media_id="a", voice=False) == envelope("audio", {"id": "a"})
    assert build_audio_message(to=TO, media_id="a", voice=True)["audio"] == {
        "id": "a",
        "voice": True,
    }


@pytest.mark.parametrize(
    ("kind", "extra"),
    [
        ("audio", {"caption": "c"}),
        ("sticker", {"caption": "c"}),
        ("video", {"filename": "f.mp4"}),
        ("audio", {"filename": "f.ogg"}),
        ("image", {"voice": True}),
        ("document", {"voice": False}),
    ],
)
def test_media_field_kind_rules(kind: Any, extra: dict[str, Any]) -> None:
    with pytest.raises(GraphRequestValidationError) as info:
        build_media_message(kind, to=TO, media_id="m", **extra)
    assert info.value.field == next(iter(extra))


def test_location_optional_fields_and_integer_coordinates() -> None:
    assert build_location_message(to=TO, latitude=-90, longitude=180) == envelope(
        "location", {"latitude": -90.0, "longitude": 180.0}
    )


def test_contacts_minimal_card() -> None:
    payload = build_contacts_message(
        to=TO, contacts=[{"name": {"formatted_name": "Bob"}, "phones": [{"phone": "+1 555"}]}]
    )
    assert payload["contacts"] == [
        {"name": {"formatted_name": "Bob"}, "phones": [{"phone": "+1 555"}]}
    ]


@pytest.mark.parametrize(
    "contact",
    [
        {"name": {"first_name": "Bob"}, "phones": [{"phone": "1"}]},
        {"name": {"formatted_name": "Bob"}, "phones": []},
        {"name": {"formatted_name": "Bob"}, "phones": [{"wa_id": "1"}]},
        {"name": {"formatted_name": "Bob"}, "phones": [{"phone": "1", "waId": "1"}]},
        {"name": {"formatted_name": "Bob"}, "phones": [{"phone": "1"}], "emails": [{"mail": "x"}]},
        {"name": {"formatted_name": "Bob"}, "phones": [{"phone": "1"}], "org": {}},
        {"name": {"formatted_name": "Bob"}, "phones": [{"phone": "1"}], "urls": "https://x"},
        {"name": "Bob", "phones": [{"phone": "1"}]},
    ],
)
def test_contacts_rejections(contact: dict[str, Any]) -> None:
    with pytest.raises(GraphRequestValidationError):
        build_contacts_message(to=TO, contacts=[contact])


def test_list_single_section_needs_no_title_but_several_do() -> None:
    payload = build_interactive_list_message(
        to=TO, body_text="b", button_text="Open", sections=[{"rows": [{"id": "1", "title": "t"}]}]
    )
    assert payload["interactive"]["action"]["sections"] == [{"rows": [{"id": "1", "title": "t"}]}]
    with pytest.raises(GraphRequestValidationError):
        build_interactive_list_message(
            to=TO,
            body_text="b",
            button_text="Open",
            sections=[
                {"rows": [{"id": "1", "title": "t"}]},
                {"title": "x", "rows": [{"id": "2", "title": "t"}]},
            ],
        )


@pytest.mark.parametrize(
    ("second", "field"),
    [
        ({"id": "a", "title": "Other"}, "buttons[1].id"),
        ({"id": "b", "title": "Yes"}, "buttons[1].title"),
    ],
)
def test_reply_button_ids_and_titles_are_unique(second: dict[str, str], field: str) -> None:
    with pytest.raises(GraphRequestValidationError) as caught:
        build_interactive_buttons_message(
            to=TO, body_text="b", buttons=[{"id": "a", "title": "Yes"}, second]
        )
    assert caught.value.field == field


def test_list_row_ids_are_unique_across_sections() -> None:
    with pytest.raises(GraphRequestValidationError):
        build_interactive_list_message(
            to=TO,
            body_text="b",
            button_text="Open",
            sections=[
                {"title": "a", "rows": [{"id": "1", "title": "t"}]},
                {"title": "b", "rows": [{"id": "1", "title": "u"}]},
            ],
        )


def test_product_with_body_and_footer() -> None:
    payload = build_interactive_product_message(
        to=TO, catalog_id="c", product_retailer_id="p", body_text="Look", footer_text="Now"
    )
    assert payload["interactive"] == {
        "type": "product",
        "body": {"text": "Look"},
        "footer": {"text": "Now"},
        "action": {"catalog_id": "c", "product_retailer_id": "p"},
    }


def test_products_total_is_capped_at_thirty() -> None:
    sections = [
        {"title": f"s{i}", "product_retailer_ids": [f"{i}-{j}" for j in range(8)]} for i in range(4)
    ]
    with pytest.raises(GraphRequestValidationError):
        build_interactive_products_message(
            to=TO, catalog_id="c", header_text="h", body_text="b", sections=sections
        )


# --- templates, OTP buttons ---------------------------------------------------------------


def test_otp_button_maps_supported_apps_to_the_wire() -> None:
    assert build_otp_button(
        otp_type="ZERO_TAP",
        text="Copy code",
        autofill_text="Autofill",
        zero_tap_terms_accepted=True,
        supported_apps=[{"package_name": "com.example.app", "signature_hash": "K8a/AINcGX7"}],
    ) == {
        "type": "otp",
        "otp_type": "zero_tap",
        "text": "Copy code",
        "autofill_text": "Autofill",
        "zero_tap_terms_accepted": True,
        "supported_apps": [{"package_name": "com.example.app", "signature_hash": "K8a/AINcGX7"}],
    }


def test_otp_copy_code_needs_no_apps() -> None:
    assert build_otp_button(otp_type="copy_code") == {"type": "otp", "otp_type": "copy_code"}


@pytest.mark.parametrize(
    "kwargs",
    [
        {"otp_type": "one_tap"},
        {"otp_type": "two_tap"},
        {"otp_type": "zero_tap", "supported_apps": []},
        {"otp_type": "one_tap", "supported_apps": [{"package_name": "a"}]},
        {"otp_type": "one_tap", "supported_apps": [{"packageName": "a", "signatureHash": "b"}]},
        {
            "otp_type": "zero_tap",
            "zero_tap_terms_accepted": "yes",
            "supported_apps": [{"package_name": "a", "signature_hash": "b"}],
        },
    ],
)
def test_otp_button_rejections(kwargs: dict[str, Any]) -> None:
    with pytest.raises(GraphRequestValidationError):
        build_otp_button(**kwargs)


def test_template_components_normalize_otp_buttons_and_reject_the_flat_form() -> None:
    button = {
        "type": "OTP",
        "otp_type": "ONE_TAP",
        "autofill_text": "Autofill",
        "supported_apps": [{"package_name": "com.example.app", "signature_hash": "K8a/AINcGX7"}],
    }
    payload = build_template_message(
        to=TO,
        name="auth_code",
        language_code="en",
        components=[{"type": "BUTTONS", "buttons": [button]}],
    )
    assert payload["template"]["components"] == [
        {
            "type": "BUTTONS",
            "buttons": [
                {
                    "type": "otp",
                    "otp_type": "one_tap",
                    "autofill_text": "Autofill",
                    "supported_apps": [
                        {"package_name": "com.example.app", "signature_hash": "K8a/AINcGX7"}
                    ],
                }
            ],
        }
    ]
    flat = {**button, "package_name": "com.example.app", "signature_hash": "K8a/AINcGX7"}
    with pytest.raises(GraphRequestValidationError) as info:
        build_template_message(
            to=TO,
            name="auth_code",
            language_code="en",
            components=[{"type": "BUTTONS", "buttons": [flat]}],
        )
    assert info.value.field is not None and info.value.field.endswith("package_name")


def test_template_components_pass_through_unchanged() -> None:
    components = [
        {"type": "body", "parameters": [{"type": "text", "text": "123456"}]},
        {
            "type": "button",
            "sub_type": "url",
            "index": "0",
            "parameters": [{"type": "text", "text": "123456"}],
        },
    ]
    payload = build_template_message(
        to=TO, name="auth_code", language_code="pt_BR", components=components
    )
    assert payload["template"] == {
        "name": "auth_code",
        "language": {"code": "pt_BR"},
        "components": components,
    }


def test_marketing_template_needs_a_recipient() -> None:
    with pytest.raises(GraphRequestValidationError):
        build_marketing_template_message(name="promo", language_code="en")
    with pytest.raises(GraphRequestValidationError):
        build_marketing_template_message(name="promo", language_code="en", to="not-a-phone")


# --- groups ---------------------------------------------------------------------------------


def test_group_media_and_marketing_template() -> None:
    assert build_group_media_message(
        "document", to=GROUP, media_id="d", filename="a.pdf"
    ) == envelope("document", {"id": "d", "filename": "a.pdf"}, to=GROUP, recipient_type="group")
    assert build_group_template_message(
        to=GROUP, name="sale", language_code="en", template_category="MARKETING"
    ) == envelope(
        "template", {"name": "sale", "language": {"code": "en"}}, to=GROUP, recipient_type="group"
    )


@pytest.mark.parametrize("category", ["AUTHENTICATION", "utility", "", None])
def test_group_template_category_gate(category: Any) -> None:
    with pytest.raises(GraphRequestValidationError) as info:
        build_group_template_message(
            to=GROUP, name="t", language_code="en", template_category=category
        )
    assert info.value.field == "template_category"


def test_group_media_rejects_phone_shaped_rules_violations() -> None:
    with pytest.raises(GraphRequestValidationError):
        build_group_media_message("image", to="a/b", media_id="m")


def test_prebuilt_payloads() -> None:
    payload = {
        "recipient_type": "group",
        "to": GROUP,
        "type": "pin",
        "pin": {"type": "unpin", "message_id": "m"},
    }
    assert check_message_payload(payload) == payload
    assert check_message_payload(payload) is not payload
    assert {
        "text",
        "image",
        "video",
        "audio",
        "document",
        "sticker",
        "template",
        "pin",
    } == GROUP_MESSAGE_TYPES
    for bad in (
        {"recipient_type": "broadcast", "to": TO},
        {"recipient": "bad\nid"},
        {1: "x"},
    ):
        with pytest.raises(GraphRequestValidationError):
            check_message_payload(bad)
