"""Each action of the page makes the delivery the platform would post, read back by svc.webhook."""

from __future__ import annotations

import json
from typing import Any

import pytest

from svc.dev import DevActionError, DevUser
from svc.webhook import (
    MessageUpdate,
    StatusUpdate,
    action_message,
    message_delivery,
    receive_delivery,
    status_delivery,
)
from tests._support.signing import sign

SECRET = "dev-app-secret"
METADATA = {"display_phone_number": "15550783881", "phone_number_id": "106540352242922"}
PHONE_USER = DevUser(name="Kerry", phone="16505551234")
BSUID_USER = DevUser(name="Sheena", bsuid="US.13491208655302741918", username="sheena")


def _updates(body: dict[str, Any]) -> list[Any]:
    raw = json.dumps(body).encode()
    return list(receive_delivery(raw, sign(body=raw, secret=SECRET), SECRET).updates)


def _message(user: DevUser, action: dict[str, Any]) -> MessageUpdate:
    message = action_message(action, METADATA["display_phone_number"])
    body = message_delivery(
        user, message, message_id="wamid.DEV.1", now=1_750_000_000, metadata=METADATA,
        waba_id="102290129340398",
    )
    [update] = _updates(body)
    assert isinstance(update, MessageUpdate)
    assert update.message_id == "wamid.DEV.1"
    return update


@pytest.mark.parametrize("user", [PHONE_USER, BSUID_USER], ids=["phone", "bsuid"])
def test_a_text_names_its_user_by_phone_or_by_bsuid_and_username(user: DevUser) -> None:
    update = _message(user, {"kind": "text", "text": "Hello *bot*"})
    assert update.text == "Hello *bot*"
    assert update.user is not None
    assert update.user.key == user.key
    if user.phone is None:
        assert update.from_ is None
        assert update.user.username == "@sheena"


def test_taps_quotes_and_answers_read_as_the_platform_s() -> None:
    button = _message(
        PHONE_USER, {"kind": "button_reply", "id": "tea", "title": "Tea", "context": "wamid.X1"}
    ).content
    listed = _message(
        PHONE_USER,
        {"kind": "list_reply", "id": "slot-0930", "title": "09:30", "description": "Tuesday"},
    ).content
    quick = _message(PHONE_USER, {"kind": "quick_reply", "payload": "STOP", "text": "Stop"}).content
    flow = _message(
        PHONE_USER, {"kind": "flow", "response_json": '{"flow_token": "t-1", "rating": 5}'}
    ).content
    assert (button.type, button.reply_type, button.reply_id, button.title) == (
        "interactive", "button_reply", "tea", "Tea",
    )
    assert (listed.reply_type, listed.reply_id, listed.description) == (
        "list_reply", "slot-0930", "Tuesday",
    )
    assert (quick.type, quick.payload, quick.text) == ("button", "STOP", "Stop")
    assert flow.flow_token == "t-1"
    assert flow.flow_response == {"flow_token": "t-1", "rating": 5}
    quoted = _message(PHONE_USER, {"kind": "text", "text": "this", "context": "wamid.X1"})
    assert quoted.raw["context"] == {"from": "15550783881", "id": "wamid.X1"}


def test_reaction_location_contact_and_image() -> None:
    reaction = _message(PHONE_USER, {"kind": "reaction", "message_id": "wamid.X1", "emoji": "👍"})
    location = _message(
        PHONE_USER, {"kind": "location", "latitude": 37.48, "longitude": -122.14, "name": "Office"}
    )
    contact = _message(
        PHONE_USER, {"kind": "contact", "name": "Barbara J", "phone": "+1 940 555 1234"}
    )
    image = _message(PHONE_USER, {"kind": "image", "caption": "A photo"})
    assert (reaction.content.message_id, reaction.content.emoji) == ("wamid.X1", "👍")
    assert (location.content.latitude, location.content.name) == (37.48, "Office")
    assert contact.raw["contacts"][0]["phones"][0]["wa_id"] == "19405551234"
    assert image.type == "image"
    assert image.content.caption == "A photo"


@pytest.mark.parametrize(
    "action",
    [
        {"kind": "text", "text": ""},
        {"kind": "text", "text": "x" * 4097},
        {"kind": "shout", "text": "hi"},
        {"kind": "location", "latitude": 91, "longitude": 0},
        {"kind": "flow", "response_json": "[1]"},
        {"kind": "reaction", "message_id": "no spaces allowed", "emoji": "👍"},
    ],
)
def test_a_malformed_action_is_refused(action: dict[str, Any]) -> None:
    with pytest.raises(DevActionError):
        action_message(action, "15550783881")


@pytest.mark.parametrize(
    "value",
    [None, {"name": "x"}, {"phone": "+1555"}, {"bsuid": "13491208655302741918"},
     {"bsuid": "US.1", "username": "no spaces"}],
)
def test_a_malformed_user_is_refused(value: object) -> None:
    with pytest.raises(DevActionError):
        DevUser.from_json(value)


@pytest.mark.parametrize("user", [PHONE_USER, BSUID_USER], ids=["phone", "bsuid"])
def test_statuses_name_the_recipient_as_the_platform_does(user: DevUser) -> None:
    body = status_delivery(
        user, message_id="wamid.OUT1", status="read", now=1_750_000_000, metadata=METADATA,
        waba_id="102290129340398",
    )
    [update] = _updates(body)
    assert isinstance(update, StatusUpdate)
    assert (update.message_id, update.status) == ("wamid.OUT1", "read")
    assert update.user is not None and update.user.key == user.key
