"""Users without phone numbers: every send, block, participant removal and call by BSUID.

A phone number / wa_id goes in ``to``; a BSUID or parent BSUID goes in
``recipient`` with no ``to``; group sends keep the group id in ``to``. Each case
is checked on the wire (``httpx.MockTransport``), or shown to make no request.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from svc.graph import (
    AUTHENTICATION_OTP_RULE,
    GraphRequestValidationError,
    PhoneOnlyRecipientError,
    Recipient,
    TemplateCheckError,
    check_message_payload,
    check_template_send,
    is_bsuid,
    is_parent_bsuid,
    is_phone_number,
    is_user_id,
    resolve_recipient,
)

from ._admin_wire import GROUP_ID, PHONE_ID, Upstream, assert_wire
from .test_sends import CASES, TO, Recorder, make_sender

BSUID = "US.13491208655302741918"
PARENT = "US.ENT.11815799212886844830"
PRODUCT = {"messaging_product": "whatsapp"}

INDIVIDUAL_CASES = [case for case in CASES if case[3].get("recipient_type") == "individual"]
GROUP_CASES = [case for case in CASES if case[3].get("recipient_type") == "group"]


def _readdressed(wire: dict[str, Any], user_id: str) -> dict[str, Any]:
    """``wire`` with ``to`` replaced by ``recipient`` at the same place."""
    return {
        ("recipient" if key == "to" else key): (user_id if key == "to" else value)
        for key, value in wire.items()
    }


# --- the resolver and its predicates


@pytest.mark.parametrize(
    ("value", "resolved"),
    [
        ("15551234567", ("to", "15551234567")),
        ("+15551234567", ("to", "+15551234567")),
        (BSUID, ("recipient", BSUID)),
        (PARENT, ("recipient", PARENT)),
        ("BR.abcDEF123", ("recipient", "BR.abcDEF123")),
        ("US." + "a" * 128, ("recipient", "US." + "a" * 128)),
    ],
)
def test_resolve_recipient(value: str, resolved: tuple[str, str]) -> None:
    assert resolve_recipient(value) == resolved


@pytest.mark.parametrize(
    "value",
    [
        "",
        "US.",
        "us.1349",
        "USA.1349",
        "US.1349.12",
        "US.ENT.",
        "US." + "a" * 129,
        "US.13-49",
        "US.1349\n",
        " US.1349",
        "1" * 16,
        "+",
        "15551234567x",
        None,
        15551234567,
    ],
)
def test_resolve_recipient_refuses_anything_else(value: object) -> None:
    with pytest.raises(GraphRequestValidationError) as info:
        resolve_recipient(value, field="to")
    assert info.value.field == "to"


def test_predicates_are_disjoint() -> None:
    assert is_phone_number(TO) and not is_bsuid(TO) and not is_parent_bsuid(TO)
    assert is_bsuid(BSUID) and not is_parent_bsuid(BSUID) and not is_phone_number(BSUID)
    assert is_parent_bsuid(PARENT) and not is_bsuid(PARENT) and not is_phone_number(PARENT)
    assert is_user_id(BSUID) and is_user_id(PARENT) and not is_user_id(TO)
    assert not any(check(None) for check in (is_bsuid, is_parent_bsuid, is_phone_number))


def test_recipient_value() -> None:
    assert Recipient.parse(PARENT) == Recipient(
        field="recipient", value=PARENT, kind="parent_bsuid"
    )
    assert Recipient.parse(BSUID).wire() == {"recipient": BSUID}
    assert Recipient.parse(TO).wire() == {"to": TO}
    assert Recipient.parse(BSUID).is_user_id and not Recipient.parse(TO).is_user_id


# --- every typed send, on the wire


@pytest.mark.parametrize("user_id", [BSUID, PARENT])
@pytest.mark.parametrize(("helper", "args", "kwargs", "wire"), INDIVIDUAL_CASES)
async def test_every_individual_send_goes_to_a_bsuid_as_recipient(
    helper: str, args: tuple[Any, ...], kwargs: dict[str, Any], wire: dict[str, Any], user_id: str
) -> None:
    recorder = Recorder()
    await getattr(make_sender(recorder), helper)(*args, **{**kwargs, "to": user_id})
    [request] = recorder.requests
    sent = json.loads(request.content)
    assert sent == _readdressed(wire, user_id)
    assert "to" not in sent


@pytest.mark.parametrize(("helper", "args", "kwargs", "wire"), INDIVIDUAL_CASES)
async def test_every_individual_send_keeps_a_phone_number_in_to(
    helper: str, args: tuple[Any, ...], kwargs: dict[str, Any], wire: dict[str, Any]
) -> None:
    recorder = Recorder()
    await getattr(make_sender(recorder), helper)(*args, **{**kwargs, "to": "+15551234567"})
    [request] = recorder.requests
    sent = json.loads(request.content)
    assert sent["to"] == "+15551234567"
    assert "recipient" not in sent


@pytest.mark.parametrize("bad", ["US.", "US.1349.12", "alice", "1555 1234"])
@pytest.mark.parametrize(("helper", "args", "kwargs", "wire"), INDIVIDUAL_CASES)
async def test_every_individual_send_refuses_an_invalid_addressee(
    helper: str, args: tuple[Any, ...], kwargs: dict[str, Any], wire: dict[str, Any], bad: str
) -> None:
    recorder = Recorder()
    with pytest.raises(GraphRequestValidationError) as info:
        await getattr(make_sender(recorder), helper)(*args, **{**kwargs, "to": bad})
    assert info.value.field == "to"
    assert recorder.requests == []


@pytest.mark.parametrize(("helper", "args", "kwargs", "wire"), GROUP_CASES)
async def test_group_sends_keep_the_group_id_in_to(
    helper: str, args: tuple[Any, ...], kwargs: dict[str, Any], wire: dict[str, Any]
) -> None:
    recorder = Recorder()
    await getattr(make_sender(recorder), helper)(*args, **kwargs)
    [request] = recorder.requests
    assert json.loads(request.content) == wire
    assert wire["to"] == GROUP_ID and "recipient" not in wire


@pytest.mark.parametrize(
    ("kwargs", "routing"),
    [
        ({"to": BSUID}, {"recipient": BSUID}),
        ({"recipient": PARENT}, {"recipient": PARENT}),
        ({"to": TO, "recipient": BSUID}, {"to": TO}),
        ({"to": PARENT, "recipient": BSUID}, {"recipient": PARENT}),
    ],
)
async def test_marketing_and_call_button_routing(
    kwargs: dict[str, Any], routing: dict[str, str]
) -> None:
    recorder = Recorder()
    sender = make_sender(recorder)
    await sender.send_marketing_template(name="promo", language_code="en", **kwargs)
    await sender.send_voice_call_button(body_text="Call us", **kwargs)
    marketing, button = (json.loads(request.content) for request in recorder.requests)
    for sent in (marketing, button):
        assert {key: sent[key] for key in ("to", "recipient") if key in sent} == routing


async def test_marketing_refuses_a_phone_number_as_recipient() -> None:
    recorder = Recorder()
    with pytest.raises(GraphRequestValidationError) as info:
        await make_sender(recorder).send_marketing_template(
            name="promo", language_code="en", recipient=TO
        )
    assert info.value.field == "recipient"
    assert recorder.requests == []


# --- prebuilt payloads


@pytest.mark.parametrize(
    ("addressing", "expected"),
    [
        ({"to": BSUID}, {"recipient": BSUID}),
        ({"recipient": PARENT}, {"recipient": PARENT}),
        ({"to": TO}, {"to": TO}),
        ({"to": TO, "recipient": BSUID}, {"to": TO}),
    ],
)
async def test_send_message_addresses_a_prebuilt_payload(
    addressing: dict[str, str], expected: dict[str, str]
) -> None:
    recorder = Recorder()
    payload = {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        **addressing,
        "type": "text",
        "text": {"body": "hi"},
    }
    await make_sender(recorder).send_message(payload)
    [request] = recorder.requests
    assert json.loads(request.content) == {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        **expected,
        "type": "text",
        "text": {"body": "hi"},
    }


@pytest.mark.parametrize("addressing", [{"to": "US.x.y"}, {"recipient": TO}, {"recipient": "a b"}])
def test_prebuilt_payload_with_an_invalid_addressee_is_refused(addressing: dict[str, str]) -> None:
    with pytest.raises(GraphRequestValidationError):
        check_message_payload({"recipient_type": "individual", **addressing, "type": "text"})


# --- authentication templates are phone-only

AUTH_DEFINITION: dict[str, Any] = {
    "name": "login_code",
    "language": "en_US",
    "status": "APPROVED",
    "category": "AUTHENTICATION",
    "components": [
        {"type": "BODY", "text": "{{1}} is your verification code."},
        {"type": "BUTTONS", "buttons": [{"type": "OTP", "otp_type": "ONE_TAP"}]},
    ],
}
AUTH_COMPONENTS = [
    {"type": "body", "parameters": [{"type": "text", "text": "123456"}]},
    {
        "type": "button",
        "sub_type": "url",
        "index": "0",
        "parameters": [{"type": "text", "text": "123456"}],
    },
]


@pytest.mark.parametrize("otp_type", ["ONE_TAP", "ZERO_TAP", "COPY_CODE"])
@pytest.mark.parametrize("user_id", [BSUID, PARENT])
async def test_otp_template_to_a_bsuid_is_refused_before_sending(
    otp_type: str, user_id: str
) -> None:
    definition = {
        **AUTH_DEFINITION,
        "components": [
            AUTH_DEFINITION["components"][0],
            {"type": "BUTTONS", "buttons": [{"type": "OTP", "otp_type": otp_type}]},
        ],
    }
    recorder = Recorder()
    with pytest.raises(PhoneOnlyRecipientError) as info:
        await make_sender(recorder).send_template(
            to=user_id,
            name="login_code",
            language_code="en_US",
            components=AUTH_COMPONENTS,
            definition=definition,
        )
    assert info.value.rule == AUTHENTICATION_OTP_RULE
    assert info.value.field == "to"
    assert AUTHENTICATION_OTP_RULE in str(info.value)
    assert isinstance(info.value, GraphRequestValidationError)
    assert not isinstance(info.value, TemplateCheckError)
    assert recorder.requests == []


async def test_otp_template_to_a_phone_number_is_sent() -> None:
    recorder = Recorder()
    await make_sender(recorder).send_template(
        to=TO,
        name="login_code",
        language_code="en_US",
        components=AUTH_COMPONENTS,
        definition=AUTH_DEFINITION,
    )
    [request] = recorder.requests
    sent = json.loads(request.content)
    assert sent["to"] == TO and "recipient" not in sent
    assert sent["template"]["components"] == AUTH_COMPONENTS


async def test_a_template_without_otp_buttons_goes_to_a_bsuid() -> None:
    definition = {
        "name": "order_update",
        "language": "en_US",
        "status": "APPROVED",
        "category": "UTILITY",
        "components": [{"type": "BODY", "text": "Order {{1}} shipped."}],
    }
    components = [{"type": "body", "parameters": [{"type": "text", "text": "A-1"}]}]
    recorder = Recorder()
    await make_sender(recorder).send_template(
        to=BSUID,
        name="order_update",
        language_code="en_US",
        components=components,
        definition=definition,
    )
    [request] = recorder.requests
    sent = json.loads(request.content)
    assert sent["recipient"] == BSUID and "to" not in sent


def test_check_template_send_names_the_rule_only_when_given_a_bsuid() -> None:
    check_template_send(AUTH_DEFINITION, "en_US", AUTH_COMPONENTS)
    check_template_send(AUTH_DEFINITION, "en_US", AUTH_COMPONENTS, to=TO)
    with pytest.raises(PhoneOnlyRecipientError) as info:
        check_template_send(AUTH_DEFINITION, "en_US", AUTH_COMPONENTS, to=PARENT)
    assert info.value.rule == AUTHENTICATION_OTP_RULE


async def test_otp_buttons_in_send_components_are_phone_only_without_a_definition() -> None:
    components = [{"type": "buttons", "buttons": [{"type": "otp", "otp_type": "copy_code"}]}]
    recorder = Recorder()
    sender = make_sender(recorder)
    with pytest.raises(PhoneOnlyRecipientError):
        await sender.send_template(
            to=BSUID, name="login_code", language_code="en_US", components=components
        )
    with pytest.raises(PhoneOnlyRecipientError):
        await sender.send_message(
            {
                "recipient_type": "individual",
                "recipient": BSUID,
                "type": "template",
                "template": {"name": "login_code", "components": components},
            }
        )
    assert recorder.requests == []


# --- block users, group participants, calls


async def test_block_and_unblock_users_by_phone_and_bsuid() -> None:
    up = Upstream({"block_users": {"added_users": []}}, {"block_users": {"removed_users": []}})
    phone = up.phone()
    await phone.block_users(users=["+16505551234", BSUID, PARENT])
    await phone.unblock_users(users=[BSUID])
    entries = [{"user": "+16505551234"}, {"recipient": BSUID}, {"recipient": PARENT}]
    assert_wire(
        up.requests[0],
        "POST",
        f"/{PHONE_ID}/block_users",
        body={**PRODUCT, "block_users": entries},
    )
    assert_wire(
        up.requests[1],
        "DELETE",
        f"/{PHONE_ID}/block_users",
        body={**PRODUCT, "block_users": [{"recipient": BSUID}]},
    )


async def test_remove_group_participants_by_wa_id_and_bsuid() -> None:
    up = Upstream({"success": True})
    await up.group().remove_participants(wa_ids=["16505551234", BSUID])
    assert_wire(
        up.only,
        "DELETE",
        f"/{GROUP_ID}/participants",
        body={**PRODUCT, "participants": [{"wa_id": "16505551234"}, {"recipient": BSUID}]},
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda up: up.phone().block_users(users=["US.bad.id"]),
        lambda up: up.phone().unblock_users(users=["alice"]),
        lambda up: up.group().remove_participants(wa_ids=["US."]),
        lambda up: up.phone().connect_call(to="us.123", sdp="v=0\r\n"),
    ],
)
async def test_user_lists_refuse_invalid_ids_before_sending(call: Any) -> None:
    up = Upstream()
    with pytest.raises(GraphRequestValidationError):
        await call(up)
    assert up.requests == []


async def test_call_permission_request_to_a_bsuid() -> None:
    recorder = Recorder()
    await make_sender(recorder).send_call_permission_request(to=BSUID, body_text="May we call?")
    [request] = recorder.requests
    assert json.loads(request.content) == {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "recipient": BSUID,
        "type": "interactive",
        "interactive": {
            "type": "call_permission_request",
            "body": {"text": "May we call?"},
            "action": {"name": "call_permission_request"},
        },
    }


async def test_connect_call_to_a_bsuid() -> None:
    up = Upstream({"messaging_product": "whatsapp", "calls": [{"id": "wacid.1"}]})
    await up.phone().connect_call(to=BSUID, sdp="v=0\r\n")
    sent = json.loads(up.only.content)
    assert sent["recipient"] == BSUID and "to" not in sent
    assert sent["action"] == "connect"
