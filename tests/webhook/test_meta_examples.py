"""The platform's published webhook examples, each as the project's own fixture, come through whole.

Meta's description of the API (``business-messaging-api_v23.0.yaml``) holds 16
webhook payload examples. ``fixtures/meta_examples/`` mirrors each one: the
same keys at the same places with the same JSON types (a ``wa_id`` sent as a
number stays a number, a price sent as an integer stays one), with the
project's own ids and texts. Every fixture is signed, received by
``receive_delivery`` and checked field by field: every field a handler reads.
``test_every_published_example_has_a_fixture_and_a_check`` fails when a fixture
has no check or a check no fixture, so none is skipped silently.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from svc.webhook import (
    ButtonContent,
    ContactPhone,
    ContactsContent,
    GroupLifecycleUpdate,
    GroupParticipant,
    GroupParticipantsUpdate,
    GroupSettingChange,
    GroupSettingsUpdate,
    InteractiveContent,
    LocationContent,
    MediaContent,
    MessageContext,
    MessageUpdate,
    OrderContent,
    OrderItem,
    PlatformError,
    ReactionContent,
    Referral,
    SharedContact,
    SystemUpdate,
    TextContent,
    UnsupportedContent,
    Update,
    UserIdentity,
    receive_delivery,
)

from .._support.signing import sign
from .conftest import read_all

EXAMPLES = Path(__file__).parent / "fixtures" / "meta_examples"
SECRET = "meta-examples-app-secret"
WABA = "310987654321098"
PNID = "209876543210987"
DISPLAY = "15557650123"
USER = "447911123456"
NAME = "Amara Okafor"
GROUP = "Y2FwaV9ncm91cDo0NDc5MTExMjM0NTY6MTIwMzYzOTk4ODc3NjY1NTQ0ZD"
WAMID = "wamid.HBgMNDQ3OTExMTIzNDU2FQIAEhgg"

# Meta's example name -> the fixture that mirrors it.
PUBLISHED: dict[str, str] = {
    "Text Message": "text_message",
    "Text Message with Context (Product Inquiry)": "text_message_with_context",
    "Text Message from Click to WhatsApp Ad": "text_message_from_ad",
    "Reaction Message": "reaction_message",
    "Image Message": "image_message",
    "Location Message": "location_message",
    "Contact Sharing Message": "contact_sharing_message",
    "Unsupported Message": "unsupported_message",
    "Button Message": "button_message",
    "Interactive List Reply Message": "interactive_list_reply_message",
    "Interactive Button Reply Message": "interactive_button_reply_message",
    "Order Message": "order_message",
    "System Message": "system_message",
    "Group Create Message": "group_create",
    "Group Settings Update": "group_settings_update",
    "Group Remove Participants": "group_remove_participants",
}


def receive(name: str) -> Update:
    """The fixture's one update, received whole: signed, parsed, normalized, nothing skipped."""
    body = (EXAMPLES / f"{name}.json").read_bytes()
    delivery = receive_delivery(body, sign(body=body, secret=SECRET), SECRET, received_at=1)
    assert delivery.result.skipped == ()
    [update] = delivery.updates
    assert (update.waba_id, update.phone_number_id, update.display_phone_number) == (
        WABA,
        PNID,
        DISPLAY,
    )
    read_all(update)  # every property reads without error
    return update


def message(name: str, *, mid: str, at: int, mtype: str) -> MessageUpdate:
    """The fixture's message update, with what every inbound message has."""
    update = receive(name)
    assert type(update) is MessageUpdate
    assert (update.kind, update.field, update.message_id, update.type) == (
        "message",
        "messages",
        WAMID + mid,
        mtype,
    )
    assert (update.from_, update.timestamp, update.timestamp_missing) == (USER, at, False)
    assert (update.is_echo, update.to, update.group_id) == (False, None, None)
    assert update.profile_name == NAME
    assert update.user == UserIdentity(wa_id=USER, name=NAME)
    return update


# --- messages ----------------------------------------------------------------------------


def check_text_message() -> None:
    update = message(
        "text_message", mid="QTFCMkMzRDRFNUY2QTdCOEM5RDBFMUYyAA==", at=1762511400, mtype="text"
    )
    assert update.content == TextContent(body="Do you have the blue kettle in stock?")
    assert update.text == "Do you have the blue kettle in stock?"
    assert (update.context, update.referral) == (None, None)


def check_text_message_with_context() -> None:
    update = message(
        "text_message_with_context",
        mid="QzFEMkUzRjRBNUI2QzdEOEU5RjBBMUIyAA==",
        at=1762511460,
        mtype="text",
    )
    assert update.text == "Is this one still available?"
    assert update.context == MessageContext(
        message_id=WAMID + "QjFDMkQzRTRGNUE2QjdDOEQ5RTBGMUEyAA==",
        from_=DISPLAY,
        referred_product_id="kettle-blue-17",
        referred_catalog_id="781234567890123",
    )


def check_text_message_from_ad() -> None:
    update = message(
        "text_message_from_ad",
        mid="RDFFMkYzQTRCNUM2RDdFOEY5QTBCMUMyAA==",
        at=1762511520,
        mtype="text",
    )
    assert update.text == "Can I get more details on the offer?"
    assert update.referral == Referral(
        source_url="https://fb.me/8kettleAd",
        source_id="120230000000000417",
        source_type="ad",
        headline="Ask us about kettles",
        body="Winter kettles, now 20% off",
        media_type="image",
        image_url="https://scontent.example.net/v/t45.kettle.jpg",
        ctwa_clid="ARAkettleClickId0123456789abcdefABCDEF",
        welcome_message="Hello! Which kettle caught your eye?",
    )


def check_reaction_message() -> None:
    update = message(
        "reaction_message",
        mid="RTFGMkEzQjRDNUQ2RTdGOEE5QjBDMUQyAA==",
        at=1762511580,
        mtype="reaction",
    )
    assert update.content == ReactionContent(
        message_id=WAMID + "RjFBMkIzQzRENUU2RjdBOEI5QzBEMUUyAA==", emoji="\U0001f44d"
    )
    assert update.text is None


def check_image_message() -> None:
    update = message(
        "image_message", mid="QTJCM0M0RDVFNkY3QThCOUMwRDFFMkYzAA==", at=1762511640, mtype="image"
    )
    assert update.content == MediaContent(
        type="image",
        media_id="1287654321098765",
        mime_type="image/jpeg",
        sha256="3nQ0Yc8yL9fKx2Vb1mWq7Tz5Hs4Pd6Ga0Ur8Je2Ko1M=",
        caption="The dent on arrival",
    )


def check_location_message() -> None:
    update = message(
        "location_message",
        mid="QjJDM0Q0RTVGNkE3QjhDOUQwRTFGMkEzAA==",
        at=1762511700,
        mtype="location",
    )
    assert update.content == LocationContent(
        latitude=55.97612380981,
        longitude=-3.17289495468,
        name="Harbour Row Depot",
        address="12 Harbour Row, Leith, Edinburgh EH6 6LA",
        url="https://depot.example.org/leith",
    )


def check_contact_sharing_message() -> None:
    update = message(
        "contact_sharing_message",
        mid="QzJEM0U0RjVBNkI3QzhEOUUwRjFBMkIzAA==",
        at=1762511760,
        mtype="contacts",
    )
    assert isinstance(update.content, ContactsContent)
    [card] = update.content.contacts
    assert (card.formatted_name, card.first_name, card.last_name) == (
        "Tomás Ribeiro",
        "Tomás",
        "Ribeiro",
    )
    assert card.organization == "Ribeiro Lda"
    assert card.phones == (
        ContactPhone(phone="+351 912 345 678", wa_id="351912345678", type="MOBILE"),
    )
    assert card == SharedContact(
        formatted_name="Tomás Ribeiro",
        first_name="Tomás",
        last_name="Ribeiro",
        phones=card.phones,
        organization="Ribeiro Lda",
        org=card.org,
    )
    assert update.answers_contact_request is False


def check_unsupported_message() -> None:
    update = message(
        "unsupported_message",
        mid="RDJFM0Y0QTVCNkM3RDhFOUYwQTFCMkMzAA==",
        at=1762511820,
        mtype="unsupported",
    )
    assert update.content == UnsupportedContent(
        type="unsupported",
        reason="unsupported",
        errors=(
            PlatformError(
                code=131051,
                title="Message type unknown",
                message="Message type unknown",
                details="Message type is currently not supported.",
            ),
        ),
    )


def check_button_message() -> None:
    update = message(
        "button_message", mid="RjJBM0I0QzVENkU3RjhBOUIwQzFEMkUzAA==", at=1762511880, mtype="button"
    )
    assert update.content == ButtonContent(payload="stop-promotions", text="Stop promotions")
    assert update.context == MessageContext(
        message_id=WAMID + "RTJGM0E0QjVDNkQ3RThGOUEwQjFDMkQzAA==", from_=DISPLAY
    )


def check_interactive_list_reply_message() -> None:
    update = message(
        "interactive_list_reply_message",
        mid="QjNDNEQ1RTZGN0E4QjlDMEQxRTJGM0E0AA==",
        at=1762511940,
        mtype="interactive",
    )
    assert update.content == InteractiveContent(
        reply_type="list_reply",
        reply_id="courier-next-day",
        title="Next-day courier",
        description="Delivered tomorrow before 6pm",
    )
    assert update.context is not None
    assert update.context.message_id == WAMID + "QTNCNEM1RDZFN0Y4QTlCMEMxRDJFM0Y0AA=="


def check_interactive_button_reply_message() -> None:
    update = message(
        "interactive_button_reply_message",
        mid="RDNFNEY1QTZCN0M4RDlFMEYxQTJCM0M0AA==",
        at=1762512000,
        mtype="interactive",
    )
    assert update.content == InteractiveContent(
        reply_type="button_reply", reply_id="keep-order", title="Keep my order"
    )
    assert update.context is not None
    assert update.context.message_id == WAMID + "QzNENEU1RjZBN0I4QzlEMEUxRjJBM0I0AA=="


def check_order_message() -> None:
    update = message(
        "order_message", mid="RTNGNEE1QjZDN0Q4RTlGMEExQjJDM0Q0AA==", at=1762512060, mtype="order"
    )
    assert update.content == OrderContent(
        catalog_id="781234567890123",
        text="",
        items=(
            OrderItem(
                product_retailer_id="kettle-blue-17", quantity=2, item_price=45.0, currency="GBP"
            ),
            OrderItem(
                product_retailer_id="mug-set-04", quantity=1, item_price=18.0, currency="GBP"
            ),
        ),
    )


def check_system_message() -> None:
    update = receive("system_message")
    assert type(update) is SystemUpdate
    assert (update.kind, update.message_id, update.from_, update.timestamp) == (
        "system",
        WAMID + "RjNBNEI1QzZEN0U4RjlBMEIxQzJEM0U0AA==",
        USER,
        1762512120,
    )
    assert update.system_type == "user_changed_number"
    assert update.body == "User Amara Okafor changed from 447911123456 to 447922654321"
    assert update.new_wa_id == "447922654321"
    assert update.user == UserIdentity(wa_id=USER)
    assert update.new_user == UserIdentity(wa_id="447922654321")


# --- groups ------------------------------------------------------------------------------

# Meta's group examples send each participant's ``input`` and ``wa_id`` as JSON numbers.
PARTICIPANTS = tuple(
    GroupParticipant(wa_id=number, user=UserIdentity(wa_id=number), input=number)
    for number in ("447911123456", "447922654321")
)


def check_group_create() -> None:
    update = receive("group_create")
    assert type(update) is GroupLifecycleUpdate
    assert (update.kind, update.field, update.event_type, update.group_id) == (
        "groupLifecycle",
        "group_lifecycle_update",
        "group_create",
        GROUP,
    )
    assert (update.request_id, update.timestamp) == ("9C3E51A07D2B46F18E0A4C6D2B7F9E15", 1762512180)
    assert (update.subject, update.description) == (
        "Leith kettle club",
        "Orders and delivery updates for the Leith depot",
    )
    assert update.added_participants == PARTICIPANTS
    assert update.errors == ()


def check_group_settings_update() -> None:
    update = receive("group_settings_update")
    assert type(update) is GroupSettingsUpdate
    assert (update.kind, update.event_type, update.group_id, update.request_id) == (
        "groupSettings",
        "group_settings_update",
        GROUP,
        "2B7F9E159C3E51A07D2B46F18E0A4C6D",
    )
    assert update.profile_picture == GroupSettingChange(value="Kq4Tz5Hs4Pd6Ga0Ur8Je2Ko1M3nQ0Y")
    assert (update.subject, update.description) == (None, None)


def check_group_remove_participants() -> None:
    update = receive("group_remove_participants")
    assert type(update) is GroupParticipantsUpdate
    # Meta's example labels this participants change ``group_create``; it is read as sent.
    assert (update.kind, update.field, update.event_type, update.group_id) == (
        "groupParticipants",
        "group_participants_update",
        "group_create",
        GROUP,
    )
    assert update.removed_participants == PARTICIPANTS
    for participant in update.removed_participants:
        assert type(participant.wa_id) is str and participant.wa_id.isdigit()
        assert type(participant.input) is str
    assert (update.added_participants, update.failed_participants) == ((), ())
    assert update.request_id == "7D2B46F18E0A4C6D2B7F9E159C3E51A0"


CHECKS: dict[str, Callable[[], None]] = {
    name[len("check_") :]: check
    for name, check in sorted(globals().items())
    if name.startswith("check_") and callable(check)
}


def test_every_published_example_has_a_fixture_and_a_check() -> None:
    fixtures = {path.stem for path in EXAMPLES.glob("*.json")}
    assert len(PUBLISHED) == 16
    assert fixtures == set(PUBLISHED.values()) == set(CHECKS)


@pytest.mark.parametrize("name", sorted(PUBLISHED.values()))
def test_every_published_example_comes_through_whole(name: str) -> None:
    CHECKS[name]()


def test_group_ids_sent_as_numbers_read_as_digits_wherever_an_id_is_read() -> None:
    data: dict[str, Any] = json.loads((EXAMPLES / "group_remove_participants.json").read_text())
    item = data["entry"][0]["changes"][0]["value"]["groups"][0]
    item["removed_participants"] = [447911123456, "447922654321", 4.5, True, None]
    item["wa_id"] = 447933000111
    body = json.dumps(data).encode()
    [update] = receive_delivery(body, sign(body=body, secret=SECRET), SECRET).updates
    assert isinstance(update, GroupParticipantsUpdate)
    assert [p.wa_id for p in update.removed_participants] == ["447911123456", "447922654321"]
    assert update.wa_id == "447933000111"
    assert update.user == UserIdentity(wa_id="447933000111")
