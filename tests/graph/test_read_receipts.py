"""Read receipts and the typing indicator: exact wire JSON, checks before I/O, typed answers."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from svc.graph import (
    DEFAULT_API_VERSION,
    DryRunTransport,
    GraphClient,
    GraphRequestValidationError,
    GraphSerializationError,
    InvalidParameterError,
    PhoneNumberClient,
    ReadReceiptResult,
    SendResult,
    build_read_receipt,
    check_message_payload,
    is_read_receipt_payload,
)

PHONE_ID = "106540352242922"
TOKEN = "test-token-read-receipts"
WAMID = "wamid.HBgLMTU1NTEyMzQ1NjcVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA="
READ = {"messaging_product": "whatsapp", "status": "read", "message_id": WAMID}
TYPING = {**READ, "typing_indicator": {"type": "text"}}


class Recorder:
    def __init__(self, answer: Any, status: int = 200) -> None:
        self.requests: list[httpx.Request] = []
        self.answer = answer
        self.status = status

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return httpx.Response(self.status, json=self.answer)


def phone(recorder: Recorder) -> PhoneNumberClient:
    client = GraphClient(access_token=TOKEN, transport=httpx.MockTransport(recorder))
    return PhoneNumberClient(client, phone_number_id=PHONE_ID)


def test_build_read_receipt_exact_wire_form() -> None:
    assert build_read_receipt(message_id=WAMID) == READ
    assert build_read_receipt(message_id=WAMID, typing_indicator=False) == READ
    assert build_read_receipt(message_id=WAMID, typing_indicator=True) == TYPING
    assert list(build_read_receipt(message_id=WAMID, typing_indicator=True)) == [
        "messaging_product",
        "status",
        "message_id",
        "typing_indicator",
    ]


@pytest.mark.parametrize(("typing", "wire"), [(False, READ), (True, TYPING)])
async def test_mark_as_read_posts_exactly_the_receipt(typing: bool, wire: dict[str, Any]) -> None:
    recorder = Recorder({"success": True})
    result = await phone(recorder).mark_as_read(message_id=WAMID, typing_indicator=typing)
    [request] = recorder.requests
    assert request.method == "POST"
    assert request.url.path == f"/{DEFAULT_API_VERSION}/{PHONE_ID}/messages"
    assert request.headers["content-type"] == "application/json"
    assert json.loads(request.content) == wire
    assert result == ReadReceiptResult(success=True, raw={"success": True})


@pytest.mark.parametrize("payload", [READ, TYPING])
async def test_send_message_accepts_a_receipt_and_answers_a_read_receipt_result(
    payload: dict[str, Any],
) -> None:
    recorder = Recorder({"success": True})
    result = await phone(recorder).send_message(payload)
    [request] = recorder.requests
    assert json.loads(request.content) == payload
    assert isinstance(result, ReadReceiptResult)
    assert not isinstance(result, SendResult)
    assert result.success is True
    assert result.raw == {"success": True}


async def test_send_message_fills_in_messaging_product() -> None:
    recorder = Recorder({"success": True})
    await phone(recorder).send_message({"status": "read", "message_id": WAMID})
    assert json.loads(recorder.requests[0].content) == READ


def test_check_message_payload_returns_the_canonical_receipt() -> None:
    assert check_message_payload(dict(TYPING)) == TYPING
    assert is_read_receipt_payload(READ)
    assert not is_read_receipt_payload({"to": "1555", "type": "text", "text": {"body": "x"}})


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"message_id": ""}, "message_id"),
        ({"message_id": "   "}, "message_id"),
        ({"message_id": "x" * 257}, "message_id"),
        ({"message_id": "wamid.\x00"}, "message_id"),
        ({"message_id": "wamid.\x85"}, "message_id"),
        ({"message_id": 12}, "message_id"),
        ({"message_id": WAMID, "typing_indicator": 1}, "typing_indicator"),
        ({"message_id": WAMID, "typing_indicator": "true"}, "typing_indicator"),
    ],
)
async def test_mark_as_read_rejects_before_the_transport(
    kwargs: dict[str, Any], field: str
) -> None:
    recorder = Recorder({"success": True})
    with pytest.raises(GraphRequestValidationError) as caught:
        await phone(recorder).mark_as_read(**kwargs)
    assert caught.value.field == field
    assert recorder.requests == []


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({**READ, "status": "delivered"}, "status"),
        ({**READ, "to": "15551234567"}, "payload.to"),
        ({**READ, "typing_indicator": {"type": "audio"}}, "typing_indicator"),
        ({**READ, "typing_indicator": True}, "typing_indicator"),
        ({**READ, "messaging_product": "sms"}, "messaging_product"),
        ({"messaging_product": "whatsapp", "status": "read"}, "payload.message_id"),
        ({**READ, "message_id": "a\nb"}, "message_id"),
    ],
)
async def test_send_message_rejects_malformed_receipts(payload: dict[str, Any], field: str) -> None:
    recorder = Recorder({"success": True})
    with pytest.raises(GraphRequestValidationError) as caught:
        await phone(recorder).send_message(payload)
    assert caught.value.field == field
    assert recorder.requests == []


@pytest.mark.parametrize(
    "answer", [{}, {"success": "true"}, {"success": 1}, [], {"messages": [{"id": "m"}]}]
)
async def test_answer_without_boolean_success_is_a_serialization_error(answer: Any) -> None:
    with pytest.raises(GraphSerializationError):
        await phone(Recorder(answer)).mark_as_read(message_id=WAMID)


async def test_success_false_is_reported_not_raised() -> None:
    result = await phone(Recorder({"success": False})).mark_as_read(message_id=WAMID)
    assert result.success is False


async def test_upstream_error_is_typed() -> None:
    recorder = Recorder({"error": {"code": 100, "message": "bad id"}}, status=400)
    with pytest.raises(InvalidParameterError) as caught:
        await phone(recorder).mark_as_read(message_id=WAMID)
    assert caught.value.status == 400


async def test_dry_run_answers_a_receipt_with_success() -> None:
    transport = DryRunTransport()
    client = GraphClient(access_token=TOKEN, transport=transport)
    result = await PhoneNumberClient(client, phone_number_id=PHONE_ID).mark_as_read(
        message_id=WAMID, typing_indicator=True
    )
    assert result.success is True
    assert result.raw == {"success": True, "dryRun": True}
    assert json.loads(transport.requests[0].content) == TYPING
