"""The platform's 50 published send examples, each built with the typed API to the same wire JSON.

Meta's description of the API (``business-messaging-api_v23.0.yaml``) holds 50
request examples for ``POST /{Phone-Number-ID}/messages``.
``fixtures/meta_send_examples.json`` mirrors each one under its name: the same
keys at the same places with the same JSON types, with the project's own
numbers, ids and texts. Each is sent here through a ``PhoneNumberClient`` send
helper (so through the typed builders) and the request body the transport
sees is compared with it. ``test_every_published_send_example_has_a_builder``
fails when an example has no builder or a builder no example.

What the comparison allows, and nothing else:

- the builders always write ``recipient_type: individual`` and the message
  ``type``, which some examples leave to the platform's defaults;
- a template button's ``index`` is compared as a number: the platform reads
  ``0`` and ``"0"`` alike, and Meta's examples write the same quick-reply
  button both ways, so no one builder output can equal both;
- one deliberate difference in the fixture itself: Meta's "Send Sample Issue
  Resolution Template" carries the quick-reply texts as the booleans
  ``true``/``false`` (its YAML's reading of ``Yes``/``No``); the fixture
  sends the strings ``"Yes"`` and ``"No"``.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from svc.graph import (
    GraphClient,
    PhoneNumberClient,
    build_template_body,
    build_template_catalog_button,
    build_template_flow_button,
    build_template_header_media,
    build_template_quick_reply_button,
    template_currency_parameter,
    template_date_time_parameter,
    template_text_parameter,
)

EXAMPLES: dict[str, dict[str, Any]] = json.loads(
    (Path(__file__).parent / "fixtures" / "meta_send_examples.json").read_text(encoding="utf-8")
)
TO = "447911123456"
TO_PLUS = "+447911123456"
PREV = "wamid.HBgMNDQ3OTExMTIzNDU2FQIAERgSQkVFRjAwMTIzNDU2Nzg5AA=="
CDN = "https://cdn.kettles.example"
AUDIO_ID, IMAGE_ID, DOC_ID = "1834567890123456", "1945678901234567", "2056789012345678"
VIDEO_ID, STICKER_ID = "2167890123456789", "2278901234567890"
ANSWER = {"messaging_product": "whatsapp", "messages": [{"id": "wamid.SENT"}], "success": True}

Send = Callable[[PhoneNumberClient], Awaitable[object]]
BUILDERS: dict[str, Send] = {}


def example(name: str) -> Callable[[Send], Send]:
    def register(send: Send) -> Send:
        assert name not in BUILDERS
        BUILDERS[name] = send
        return send

    return register


# --- the shared pieces of several examples ------------------------------------------------

CONTACT: dict[str, Any] = {
    "addresses": [
        {
            "street": "12 Harbour Row",
            "city": "Edinburgh",
            "state": "Scotland",
            "zip": "EH6 6LA",
            "country": "United Kingdom",
            "country_code": "gb",
            "type": "HOME",
        },
        {
            "street": "40 Merchant Lane",
            "city": "Glasgow",
            "state": "Scotland",
            "zip": "G1 1QX",
            "country": "United Kingdom",
            "country_code": "gb",
            "type": "WORK",
        },
    ],
    "birthday": "1990-04-12",
    "emails": [
        {"email": "amara@work.example", "type": "WORK"},
        {"email": "amara@home.example", "type": "HOME"},
    ],
    "name": {
        "formatted_name": "Amara Okafor",
        "first_name": "Amara",
        "last_name": "Okafor",
        "middle_name": "N.",
        "prefix": "Ms",
        "suffix": "PhD",
    },
    "org": {"company": "Leith Kettles", "department": "Sales", "title": "Lead"},
    "phones": [
        {"phone": "+44 131 496 0000", "type": "HOME"},
        {"phone": "+44 7911 123456", "type": "WORK", "wa_id": "447911123456"},
    ],
    "urls": [
        {"url": "https://kettles.example", "type": "WORK"},
        {"url": "https://amara.example", "type": "HOME"},
    ],
}
SECTIONS = [
    {
        "title": day,
        "rows": [
            {"id": f"slot-{key}-am", "title": f"{day} morning", "description": "Between 9 and 12"},
            {
                "id": f"slot-{key}-pm",
                "title": f"{day} afternoon",
                "description": "Between 13 and 17",
            },
        ],
    }
    for day, key in (("Monday", "mon"), ("Tuesday", "tue"))
]
LOCATION = {
    "latitude": 55.976124,
    "longitude": -3.172895,
    "name": "Harbour Row Depot",
    "address": "12 Harbour Row, Leith, Edinburgh EH6 6LA",
}


def order_body() -> dict[str, Any]:
    """The body of the order confirmation templates: a text, a currency and a full date-time."""
    return build_template_body(
        [
            template_text_parameter("Amara"),
            template_currency_parameter(fallback_value="£45.99", code="GBP", amount_1000=45990),
            template_date_time_parameter(
                fallback_value="Wednesday 14 January 2026, 10:30",
                calendar="GREGORIAN",
                day_of_week=3,
                year=2026,
                month=1,
                day_of_month=14,
                hour=10,
                minute=30,
            ),
        ]
    )


def offer_header() -> dict[str, Any]:
    return build_template_header_media("image", link=f"{CDN}/offer.jpg")


async def flow(phone: PhoneNumberClient, *, by_name: bool, draft: bool) -> object:
    words = (
        ("Preview the form", "Draft preview of the delivery form", "Draft", "Draft form")
        if draft
        else ("Open the form", "Tell us where to deliver", "Takes a minute", "Delivery details")
    )
    cta, body, footer, header = words
    return await phone.send_interactive_flow(
        to=TO,
        body_text=body,
        flow_cta=cta,
        flow_id=None if by_name else "1122334455667788",
        flow_name="delivery_details" if by_name else None,
        flow_token="flow-token-k2041",
        flow_action="navigate",
        screen="DELIVERY_DETAILS",
        data={"order_ref": "K-2041"},
        mode="draft" if draft else None,
        header_text=header,
        footer_text=footer,
    )


# --- media ----------------------------------------------------------------------------------


def media(kind: Any, given: dict[str, str], *, reply: bool) -> Send:
    async def send(phone: PhoneNumberClient) -> object:
        return await phone.send_media(
            kind, to=TO, reply_to_message_id=PREV if reply else None, **given
        )

    return send


for _kind, _by_id, _by_url in (
    ("Audio", {"media_id": AUDIO_ID}, {"link": f"{CDN}/welcome.ogg"}),
    ("Image", {"media_id": IMAGE_ID}, {"link": f"{CDN}/kettle-blue.jpg"}),
    ("Sticker", {"media_id": STICKER_ID}, {"link": f"{CDN}/thanks.webp"}),
    (
        "Video",
        {"media_id": VIDEO_ID, "caption": "How to descale"},
        {"link": f"{CDN}/descale.mp4", "caption": "How to descale"},
    ),
    (
        "Document",
        {"media_id": DOC_ID, "caption": "Your invoice", "filename": "invoice-K2041.pdf"},
        {"link": f"{CDN}/care-guide.pdf", "caption": "Care guide"},
    ),
):
    for _how, _given in (("ID", _by_id), ("URL", _by_url)):
        example(f"Send {_kind} Message by {_how}")(media(_kind.lower(), _given, reply=False))
        example(f"Send Reply to {_kind} Message by {_how}")(
            media(_kind.lower(), _given, reply=True)
        )


# --- text, location, contacts, reaction, read receipt -----------------------------------------


@example("Send Text Message")
async def _text(phone: PhoneNumberClient) -> object:
    return await phone.send_text(to=TO, text="Your kettle ships today.", preview_url=False)


@example("Send Reply to Text Message")
async def _reply_text(phone: PhoneNumberClient) -> object:
    return await phone.send_text(
        to=TO,
        text="Thanks, we will check and come back to you.",
        preview_url=False,
        reply_to_message_id=PREV,
    )


@example("Send Text Message with Preview URL")
async def _text_preview(phone: PhoneNumberClient) -> object:
    return await phone.send_text(
        to=TO, text="Track it at https://track.kettles.example/K2041", preview_url=True
    )


@example("Send Location Message")
async def _location(phone: PhoneNumberClient) -> object:
    return await phone.send_location(to=TO, **LOCATION)


@example("Send Reply to Location Message")
async def _reply_location(phone: PhoneNumberClient) -> object:
    return await phone.send_location(to=TO, reply_to_message_id=PREV, **LOCATION)


@example("Send Contact Message")
async def _contacts(phone: PhoneNumberClient) -> object:
    return await phone.send_contacts(to=TO, contacts=[CONTACT])


@example("Send Reply to Contact Message")
async def _reply_contacts(phone: PhoneNumberClient) -> object:
    return await phone.send_contacts(to=TO, contacts=[CONTACT], reply_to_message_id=PREV)


@example("Send Reply with Reaction Message")
async def _reaction(phone: PhoneNumberClient) -> object:
    return await phone.send_reaction(to=TO, message_id=PREV, emoji="\u2764\ufe0f")


@example("Send typing indicator and read receipt")
async def _read(phone: PhoneNumberClient) -> object:
    return await phone.mark_as_read(
        message_id="wamid.HBgMNDQ3OTExMTIzNDU2FQIAEhggQTFCMkMzRDRFNUY2QTdCOEM5RDBFMUYyAA==",
        typing_indicator=True,
    )


# --- interactive --------------------------------------------------------------------------


@example("Send List Message")
async def _list(phone: PhoneNumberClient) -> object:
    return await phone.send_interactive_list(
        to=TO,
        body_text="When should the courier come?",
        button_text="Pick a slot",
        sections=SECTIONS,
        header_text="Delivery slot",
        footer_text="Times are local",
    )


@example("Send Reply to List Message")
async def _reply_list(phone: PhoneNumberClient) -> object:
    return await phone.send_interactive_list(
        to=TO,
        body_text="When should the courier come?",
        button_text="Pick a slot",
        sections=SECTIONS,
        header_text="Delivery slot",
        footer_text="Times are local",
        reply_to_message_id=PREV,
    )


@example("Send Reply Button")
async def _buttons(phone: PhoneNumberClient) -> object:
    return await phone.send_interactive_buttons(
        to=TO,
        body_text="Do you still want order K-2041?",
        buttons=[
            {"id": "keep-order", "title": "Keep my order"},
            {"id": "cancel-order", "title": "Cancel it"},
        ],
    )


@example("Send Catalog Message")
async def _catalog(phone: PhoneNumberClient) -> object:
    return await phone.send_interactive_catalog(
        to=TO_PLUS,
        body_text="Browse our kettles and add what you like to your cart.",
        thumbnail_product_retailer_id="kettle-blue-17",
        footer_text="Free delivery over £30",
    )


@example("Send Single Product Message")
async def _product(phone: PhoneNumberClient) -> object:
    return await phone.send_interactive_product(
        to=TO,
        catalog_id="781234567890123",
        product_retailer_id="kettle-blue-17",
        body_text="The kettle you asked about",
        footer_text="In stock",
    )


@example("Send Multi-Product Message")
async def _products(phone: PhoneNumberClient) -> object:
    return await phone.send_interactive_products(
        to=TO,
        catalog_id="781234567890123",
        header_text="Winter collection",
        body_text="Our winter picks",
        footer_text="Prices include VAT",
        sections=[
            {"title": "Kettles", "product_retailer_ids": ["kettle-blue-17", "kettle-red-17"]},
            {"title": "Mugs", "product_retailer_ids": ["mug-set-04", "mug-set-06"]},
        ],
    )


@example("Send Draft Flow by ID")
async def _draft_flow_id(phone: PhoneNumberClient) -> object:
    return await flow(phone, by_name=False, draft=True)


@example("Send Draft Flow by Name")
async def _draft_flow_name(phone: PhoneNumberClient) -> object:
    return await flow(phone, by_name=True, draft=True)


@example("Send Published Flow by ID")
async def _flow_id(phone: PhoneNumberClient) -> object:
    return await flow(phone, by_name=False, draft=False)


@example("Send Published Flow by Name")
async def _flow_name(phone: PhoneNumberClient) -> object:
    return await flow(phone, by_name=True, draft=False)


@example("Send Order Details Message")
async def _order_details(phone: PhoneNumberClient) -> object:
    def amount(value: int) -> dict[str, int]:
        return {"value": value, "offset": 100}

    return await phone.send_order_details(
        to=TO,
        body_text="Here is your bill for order K-2041.",
        footer_text="Pay within 24 hours",
        header={"type": "image", "link": f"{CDN}/kettle-blue.jpg"},
        reference_id="K-2041",
        goods_type="physical-goods",
        currency="INR",
        total_amount=amount(239000),
        payment_type="upi",
        payment_configuration="kettles-upi",
        order={
            "status": "pending",
            "items": [
                {
                    "retailer_id": "kettle-blue-17",
                    "name": "Blue kettle",
                    "amount": amount(250000),
                    "sale_amount": amount(200000),
                    "quantity": 1,
                }
            ],
            "subtotal": amount(200000),
            "tax": {**amount(36000), "description": "GST"},
            "shipping": {**amount(5000), "description": "Courier"},
            "discount": {
                **amount(2000),
                "description": "Loyalty discount",
                "discount_program_name": "kettle-club",
            },
        },
    )


@example("Send Order Status Message")
async def _order_status(phone: PhoneNumberClient) -> object:
    return await phone.send_order_status(
        to=TO,
        body_text="Your order K-2041 is on its way.",
        reference_id="K-2041",
        status="processing",
        description="Packed and handed to the courier",
    )


# --- templates ----------------------------------------------------------------------------


@example("Send Test Message")
async def _hello(phone: PhoneNumberClient) -> object:
    return await phone.send_template(to=TO, name="hello_world", language_code="en_US")


@example("Send Message Template Text")
async def _template_text(phone: PhoneNumberClient) -> object:
    return await phone.send_template(
        to=TO, name="order_confirmation_text", language_code="en_GB", components=[order_body()]
    )


@example("Send Sample Text Message")
async def _sample_text(phone: PhoneNumberClient) -> object:
    return await phone.send_template(
        to=TO, name="order_update_text", language_code="en_GB", components=[order_body()]
    )


@example("Send Sample Shipping Confirmation Template")
async def _shipping(phone: PhoneNumberClient) -> object:
    return await phone.send_template(
        to=TO, name="sample_shipping_confirmation", language_code="en_GB", components=[order_body()]
    )


@example("Send Message Template Media")
async def _template_media(phone: PhoneNumberClient) -> object:
    return await phone.send_template(
        to=TO,
        name="order_confirmation_media",
        language_code="en_GB",
        components=[offer_header(), order_body()],
    )


@example("Send Message Template Interactive")
async def _template_interactive(phone: PhoneNumberClient) -> object:
    return await phone.send_template(
        to=TO,
        name="order_confirmation",
        language_code="en_GB",
        components=[
            offer_header(),
            order_body(),
            build_template_quick_reply_button(index=0, payload="confirm-K2041"),
            build_template_quick_reply_button(index=1, payload="change-K2041"),
        ],
    )


@example("Send Catalog Template Message")
async def _template_catalog(phone: PhoneNumberClient) -> object:
    return await phone.send_template(
        to=TO_PLUS,
        name="kettle_catalog_offer",
        language_code="en_GB",
        components=[
            build_template_body([template_text_parameter(n) for n in ("20", "30", "2")]),
            build_template_catalog_button(index=0, thumbnail_product_retailer_id="kettle-blue-17"),
        ],
    )


@example("Send Flow Template Message")
async def _template_flow(phone: PhoneNumberClient) -> object:
    return await phone.send_template(
        to=TO,
        name="delivery_form",
        language_code="en_GB",
        components=[
            build_template_flow_button(
                index=0, flow_token="flow-token-k2041", flow_action_data={"order_ref": "K-2041"}
            )
        ],
    )


@example("Send Sample Issue Resolution Template")
async def _issue_resolution(phone: PhoneNumberClient) -> object:
    return await phone.send_template(
        to=TO,
        name="sample_issue_resolution",
        language_code="en_GB",
        language_policy="deterministic",
        components=[
            build_template_body([template_text_parameter("Amara")]),
            build_template_quick_reply_button(index=0, text="Yes"),
            build_template_quick_reply_button(index=1, text="No"),
        ],
    )


# --- the comparison -----------------------------------------------------------------------

_MESSAGE_KEYS = frozenset(
    {"text", "image", "audio", "video", "document", "sticker", "location", "contacts"}
    | {"interactive", "template", "reaction"}
)


def _indexes_as_numbers(payload: dict[str, Any]) -> dict[str, Any]:
    template = payload.get("template")
    if isinstance(template, dict):
        for component in template.get("components", ()):
            if component.get("type") == "button":
                component["index"] = int(component["index"])
    return payload


def completed(expected: dict[str, Any]) -> dict[str, Any]:
    """The example with the defaults it leaves to the platform written out."""
    payload: dict[str, Any] = json.loads(json.dumps(expected))
    if "status" not in payload:  # a read receipt names no recipient and has no type
        payload.setdefault("recipient_type", "individual")
        [kind] = _MESSAGE_KEYS & payload.keys()
        payload.setdefault("type", kind)
    return _indexes_as_numbers(payload)


def test_every_published_send_example_has_a_builder() -> None:
    assert len(EXAMPLES) == 50
    assert set(BUILDERS) == set(EXAMPLES)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
async def test_every_published_send_example_is_built_to_the_same_wire_json(name: str) -> None:
    sent: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        return httpx.Response(200, json=ANSWER)

    client = GraphClient(access_token="meta-examples", transport=httpx.MockTransport(handler))
    phone = PhoneNumberClient(client, phone_number_id="209876543210987")
    await BUILDERS[name](phone)
    [body] = sent
    assert _indexes_as_numbers(body) == completed(EXAMPLES[name])
