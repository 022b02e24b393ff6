"""Threads Meta's business agent holds (``standby``) and their changes of holder (handovers).

The fixtures follow the payloads providers observed from the platform: the
standby lists in ``value.standby`` (an echo carrying its sent ``message``), a
handover with the business number in ``recipient`` and no ``metadata``.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

import pytest

from svc.webhook import (
    THROUGHPUT_UPGRADE,
    AccountUpdate,
    BusinessCapabilities,
    DefaultFacade,
    MessageUpdate,
    MessagingHandoverUpdate,
    PhoneNumberQualityChange,
    PricingInfo,
    StandbyUpdate,
    TextContent,
    UserIdentity,
    normalize,
    safe_detail,
    update_key,
)

from .conftest import load, read_all

PNID = "106540352242922"
USER = "16505551234"
BSUID = "US.13491208655302741918"
ECHO_ID = "wamid.HBgLMTY1MDU1NTEyMzQVAgARGBRTVEFOREJZMDAwMDAwMDAwMDAyAA=="


def standby() -> list[StandbyUpdate]:
    result = normalize(load("business_agent_standby.json"))
    assert result.skipped == ()
    updates = list(result.updates)
    assert all(type(u) is StandbyUpdate for u in updates)
    return updates  # type: ignore[return-value]


def test_a_standby_thread_reads_as_messages_echoes_and_statuses() -> None:
    message, echo, status = standby()
    assert [u.item for u in (message, echo, status)] == ["message", "echo", "status"]
    assert all(u.kind == "standby" and u.phone_number_id == PNID for u in (message, echo, status))

    assert (message.type, message.from_, message.to, message.is_echo) == ("text", USER, None, False)
    assert message.content == TextContent(body="Can the agent change my delivery address?")
    assert message.text == "Can the agent change my delivery address?"
    assert message.profile_name == "Sheena Nelson"
    assert message.user == UserIdentity(wa_id=USER, user_id=BSUID, name="Sheena Nelson")
    assert (message.status, message.timestamp) == (None, 1762600010)

    assert (echo.message_id, echo.type, echo.to, echo.is_echo) == (ECHO_ID, "text", USER, True)
    assert echo.text == "Of course. What is the new address?"
    assert (echo.user, echo.profile_name) == (UserIdentity(wa_id=USER), None)

    assert (status.message_id, status.status, status.type, status.content) == (
        ECHO_ID,
        "delivered",
        None,
        None,
    )
    assert status.text is None and status.to is None
    assert status.user == UserIdentity(wa_id=USER, user_id=BSUID)
    assert status.pricing == PricingInfo(
        billable=False, pricing_model="PMP", category="service", type="free_customer_service"
    )
    for update in (message, echo, status):
        read_all(update)


def test_lists_sent_directly_in_the_value_are_read_as_well() -> None:
    data = load("business_agent_standby.json")
    for change in data["entry"][0]["changes"]:
        change["value"].update(change["value"].pop("standby"))
    flat = normalize(data)
    assert flat.skipped == ()
    assert [u.item for u in flat.updates] == ["message", "echo", "status"]  # type: ignore[union-attr]
    assert [update_key(u) for u in flat.updates] == [update_key(u) for u in standby()]


def test_a_malformed_standby_item_is_skipped_where_it_is() -> None:
    data = load("business_agent_standby.json")
    inner = data["entry"][0]["changes"][0]["value"]["standby"]
    inner["messages"].append({"from": USER, "type": "text"})  # no message id
    inner["messages"].append(copy.deepcopy(inner["messages"][0]))  # the same message again
    inner["message_echoes"] = [{"id": "wamid.echo-without-message"}]
    result = normalize(data)
    assert [(s.reason, s.location, s.kind) for s in result.skipped] == [
        ("malformed_message", "entry[0].changes[0].value.standby.messages[1]", "standby"),
        ("duplicate_item", "entry[0].changes[0].value.standby.messages[2]", "standby"),
        ("malformed_message", "entry[0].changes[0].value.standby.message_echoes[0]", "standby"),
    ]


def test_each_standby_item_has_its_own_stable_key() -> None:
    keys = [update_key(u) for u in standby()]
    assert len(set(keys)) == 3
    data = load("business_agent_standby.json")
    data["entry"][0]["changes"][2]["value"]["standby"]["statuses"][0]["status"] = "read"
    assert [update_key(u) for u in normalize(data).updates][2] != keys[2]


def test_handovers_name_the_business_number_the_user_and_the_roles() -> None:
    result = normalize(load("business_agent_handovers.json"))
    assert result.skipped == ()
    passed, taken = result.updates
    assert type(passed) is MessagingHandoverUpdate and type(taken) is MessagingHandoverUpdate
    assert (passed.kind, passed.field, passed.phone_number_id) == (
        "messagingHandover",
        "messaging_handovers",
        PNID,
    )
    assert passed.display_phone_number == "15550783881"
    assert (passed.event, passed.previous_owner_role, passed.new_owner_role) == (
        "control_passed",
        "ai_agent",
        "escalation",
    )
    assert (passed.previous_owner_app_id, passed.previous_owner_app_role) == (
        "1402957617431125",
        "meta_business_agent",
    )
    assert (passed.metadata, passed.timestamp) == ("ticket-5521", 1762600100)
    assert passed.summary == "The user wants to change the delivery address of order 7."
    assert passed.user == UserIdentity(wa_id=USER)  # "+16505551234" read without its "+"
    assert (taken.event, taken.new_owner_app_id, taken.metadata) == (
        "control_taken",
        "2207631144552101",
        "agent-desk",
    )
    assert taken.user == UserIdentity(wa_id=USER, user_id=BSUID)
    assert taken.summary is None
    assert passed.value is passed.raw
    for update in (passed, taken):
        read_all(update)


async def test_a_message_handler_never_sees_a_thread_the_agent_holds() -> None:
    seen: dict[str, list[Any]] = {"message": [], "standby": [], "messagingHandover": []}
    facade = DefaultFacade()
    for kind, got in seen.items():
        facade.on(kind, got.append)  # type: ignore[arg-type]
    updates = [*standby(), *normalize(load("business_agent_handovers.json")).updates]
    for update in updates:
        await facade.dispatch(update)
    assert seen["message"] == []
    assert [u.item for u in seen["standby"]] == ["message", "echo", "status"]
    assert [u.event for u in seen["messagingHandover"]] == ["control_passed", "control_taken"]
    assert all(facade.handles(u) for u in updates)
    # A facade with handlers for messages only has nothing to run for them.
    only_messages = DefaultFacade()
    only_messages.on(MessageUpdate, lambda update: None)
    assert not any(only_messages.handles(u) for u in updates)


class _Sender:
    def __init__(self) -> None:
        self.sent: list[str] = []

    async def send_text(self, *, to: str, text: str, **_: Any) -> None:
        self.sent.append(text)


async def test_the_echo_reply_does_not_answer_a_thread_the_agent_holds() -> None:
    sender = _Sender()
    facade = DefaultFacade(echo_reply=True, echo_client=sender)
    for update in standby():
        assert not facade.handles(update)
        await facade.dispatch(update)
    assert sender.sent == []


def test_the_event_log_label_holds_no_data(caplog: pytest.LogCaptureFixture) -> None:
    updates = [*standby(), *normalize(load("business_agent_handovers.json")).updates]
    assert [safe_detail(u) for u in updates] == [
        "message:text",
        "echo:text",
        "status:delivered",
        "control_passed",
        "control_taken",
    ]
    rendered = " ".join(repr(u) for u in updates)
    for secret in (USER, BSUID, PNID, "delivery address", "ticket-5521", "Sheena"):
        assert secret not in rendered
    with caplog.at_level(logging.INFO):
        logging.getLogger("x").info("%s", rendered)
    assert "StandbyUpdate(kind='standby', field='standby', item='echo')" in rendered


# --- throughput upgrades and account limits -------------------------------------------------


def test_a_throughput_upgrade_is_a_typed_account_event() -> None:
    envelope = {
        "object": "whatsapp_business_account",
        "entry": [
            {
                "id": "102290129340398",
                "time": 1762600300,
                "changes": [
                    {
                        "field": "phone_number_quality_update",
                        "value": {
                            "display_phone_number": "15550783881",
                            "event": THROUGHPUT_UPGRADE,
                            "max_daily_conversations_per_business": "TIER_UNLIMITED",
                        },
                    }
                ],
            }
        ],
    }
    [update] = normalize(envelope).updates
    assert isinstance(update, AccountUpdate)
    assert (update.event, update.timestamp, safe_detail(update)) == (
        THROUGHPUT_UPGRADE,
        1762600300,
        "phone_number_quality_update:THROUGHPUT_UPGRADE",
    )
    assert update.details == PhoneNumberQualityChange(
        event=THROUGHPUT_UPGRADE,
        display_phone_number="15550783881",
        max_daily_conversations_per_business="TIER_UNLIMITED",
    )
    assert isinstance(update.details, PhoneNumberQualityChange)
    assert update.details.throughput_upgraded


def test_quality_and_capability_changes_are_typed() -> None:
    updates = normalize(load("account_multi_entry.json")).updates
    details = {u.field: u.details for u in updates if isinstance(u, AccountUpdate)}
    flagged = details["phone_number_quality_update"]
    assert flagged == PhoneNumberQualityChange(
        event="FLAGGED", display_phone_number="15550783881", current_limit="TIER_10K"
    )
    assert isinstance(flagged, PhoneNumberQualityChange) and not flagged.throughput_upgraded
    assert details["business_capability_update"] == BusinessCapabilities(
        max_daily_conversation_per_phone=1000, max_phone_numbers_per_business=2
    )
    value = {"max_daily_conversations_per_business": -1, "max_phone_numbers_per_waba": "25"}
    envelope = {"entry": [{"changes": [{"field": "business_capability_update", "value": value}]}]}
    [update] = normalize(envelope).updates
    assert isinstance(update, AccountUpdate)
    assert update.details == BusinessCapabilities(
        max_daily_conversations_per_business=-1, max_phone_numbers_per_waba=25
    )


@pytest.mark.parametrize("text", ["--5", "²", "-", "1٣", " 5", "5 ", "1234567890123456", ""])
def test_a_capability_limit_text_that_is_no_decimal_reads_as_none(text: str) -> None:
    value = {"max_phone_numbers_per_waba": text, "max_phone_numbers_per_business": "-1"}
    envelope = {"entry": [{"changes": [{"field": "business_capability_update", "value": value}]}]}
    [update] = normalize(envelope).updates
    assert isinstance(update, AccountUpdate)
    assert update.details == BusinessCapabilities(max_phone_numbers_per_business=-1)
