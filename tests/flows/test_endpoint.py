"""Every outcome of ``handle_flow_request``, the answer decrypted as the platform does."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import trio

from svc.flows import (
    FlowClose,
    FlowPrivateKey,
    FlowRequest,
    FlowScreen,
    FlowTokenNoLongerValidError,
    handle_flow_request,
)
from tests._support import sign

from ._platform import APP_SECRET, seal_request
from .conftest import call


class Recorder:
    """A sync handler that remembers what it was given and answers a fixed screen."""

    def __init__(self, answer: Any = None) -> None:
        self.seen: list[FlowRequest] = []
        self.answer = answer if answer is not None else FlowScreen(screen="NEXT", data={"n": 1})

    def __call__(self, request: FlowRequest) -> Any:
        self.seen.append(request)
        return self.answer


def never_called(request: FlowRequest) -> Any:
    raise AssertionError("the handler must not run")


async def test_ping_answers_active_without_the_handler(private_key: FlowPrivateKey) -> None:
    sealed = seal_request({"version": "3.0", "action": "ping"})
    response = await call(sealed, never_called, private_key)
    assert (response.status, response.content_type, response.outcome) == (
        200,
        "text/plain",
        "ping",
    )
    assert sealed.open_response(response.body) == {"data": {"status": "active"}}


@pytest.mark.parametrize("version", ["3.0", None])
async def test_error_notification_is_acknowledged_without_the_handler(
    private_key: FlowPrivateKey, version: str | None
) -> None:
    payload: dict[str, Any] = {
        "action": "data_exchange",
        "flow_token": "tok-1",
        "screen": "DETAILS",
        "data": {"error": "INVALID_SCREEN_TRANSITION", "error_message": "no such screen"},
    }
    if version is not None:
        payload["version"] = version
    sealed = seal_request(payload)
    response = await call(sealed, never_called, private_key)
    expected: dict[str, Any] = {"data": {"acknowledged": True}}
    if version is not None:
        expected["version"] = version
    assert (response.status, response.outcome) == (200, "error_acknowledged")
    assert sealed.open_response(response.body) == expected


@pytest.mark.parametrize("action", ["INIT", "BACK", "data_exchange", "navigate"])
async def test_each_action_reaches_the_handler_typed(
    private_key: FlowPrivateKey, action: str
) -> None:
    handler = Recorder()
    payload = {
        "version": "3.0",
        "action": action,
        "screen": "" if action == "INIT" else "APPOINTMENT",
        "data": {} if action == "INIT" else {"date": "2024-01-01", "slots": [1, 2]},
        "flow_token": "flows-builder-5f2e",
    }
    sealed = seal_request(payload)
    response = await call(sealed, handler, private_key)
    assert (response.status, response.content_type, response.outcome) == (
        200,
        "text/plain",
        "handled",
    )
    assert sealed.open_response(response.body) == {"screen": "NEXT", "data": {"n": 1}}
    [request] = handler.seen
    assert request.action == action and request.version == "3.0"
    assert request.flow_token == "flows-builder-5f2e"
    assert request.screen == (None if action == "INIT" else "APPOINTMENT")
    assert dict(request.data) == payload["data"]
    assert not request.is_ping and not request.has_error


async def test_async_handler_and_plain_mapping_reply(private_key: FlowPrivateKey) -> None:
    async def handler(request: FlowRequest) -> dict[str, Any]:
        await trio.lowlevel.checkpoint()
        return {"screen": "SUMMARY", "data": {"echo": request.data["name"], "emoji": "🙂"}}

    sealed = seal_request({"version": "3.0", "action": "data_exchange", "data": {"name": "Zoë"}})
    response = await call(sealed, handler, private_key)
    assert response.status == 200
    assert sealed.open_response(response.body) == {
        "screen": "SUMMARY",
        "data": {"echo": "Zoë", "emoji": "🙂"},
    }


async def test_close_reply_carries_the_flow_token_in_params(private_key: FlowPrivateKey) -> None:
    handler = Recorder(FlowClose(flow_token="tok-9", params={"order": "A-17"}))
    sealed = seal_request({"version": "3.0", "action": "data_exchange", "flow_token": "tok-9"})
    response = await call(sealed, handler, private_key)
    assert sealed.open_response(response.body) == {
        "screen": "SUCCESS",
        "data": {
            "extension_message_response": {"params": {"order": "A-17", "flow_token": "tok-9"}}
        },
    }


async def test_token_no_longer_valid_is_427_with_plain_error_msg(
    private_key: FlowPrivateKey,
) -> None:
    def handler(request: FlowRequest) -> Any:
        raise FlowTokenNoLongerValidError("This booking has expired — start again.")

    response = await call(seal_request({"version": "3.0", "action": "INIT"}), handler, private_key)
    assert (response.status, response.content_type, response.outcome) == (
        427,
        "application/json",
        "flow_token_no_longer_valid",
    )
    assert json.loads(response.body) == {"error_msg": "This booking has expired — start again."}


@pytest.mark.parametrize(
    "signature",
    [None, "", "sha256=" + "0" * 64, "sha1=abc", "sha256=zz", "auto-other-secret"],
)
async def test_bad_or_missing_signature_is_432_before_decryption(
    private_key: FlowPrivateKey, signature: str | None
) -> None:
    sealed = seal_request({"version": "3.0", "action": "ping"})
    if signature == "auto-other-secret":
        signature = sign(body=sealed.body, secret="another-secret")
    response = await call(sealed, never_called, private_key, signature=signature)
    assert (response.status, response.body, response.outcome) == (
        432,
        b"Request signature authentication failed",
        "invalid_signature",
    )
    # A body signed for different bytes is refused too.
    response = await call(
        sealed.body + b" ",
        never_called,
        private_key,
        signature=sign(body=sealed.body, secret=APP_SECRET),
    )
    assert response.status == 432


async def test_signature_is_checked_before_the_key_is_touched() -> None:
    sealed = seal_request({"version": "3.0", "action": "ping"})
    not_a_key: Any = object()  # any use of it would end in 500, not 432
    response = await call(sealed, never_called, not_a_key, signature=None)
    assert response.status == 432


async def test_undecryptable_requests_are_421_with_a_plain_body(
    private_key: FlowPrivateKey,
) -> None:
    good = seal_request({"version": "3.0", "action": "ping"})
    tampered = dict(good.fields)
    data = bytearray(json.dumps(tampered).encode())
    bodies = [
        b"not json",
        b"[]",
        json.dumps({**good.fields, "initial_vector": "!!"}).encode(),
        json.dumps({**good.fields, "encrypted_aes_key": ""}).encode(),
        json.dumps({k: v for k, v in good.fields.items() if k != "encrypted_flow_data"}).encode(),
        seal_request({"version": "3.0", "action": "ping"}).body.replace(b'"initial', b'"x_initial'),
        bytes(data).replace(good.fields["initial_vector"].encode(), b"AAAAAAAAAAAAAAAAAAAAAA=="),
        seal_request(b"not json").body,
        seal_request(b'["ping"]').body,
        seal_request({"version": "3.0", "action": "complete"}).body,
        seal_request({"version": 3, "action": "ping"}).body,
        seal_request({"version": "3.0", "action": "INIT", "data": [1]}).body,
        seal_request(b'{"action":"ping","version":NaN}').body,
        seal_request(b'{"action":"ping","version":"\xff"}').body,
    ]
    for body in bodies:
        response = await call(body, never_called, private_key)
        assert (response.status, response.content_type, response.body, response.outcome) == (
            421,
            "text/plain; charset=utf-8",
            b"Request decryption failed",
            "decryption_failed",
        ), body[:80]


@pytest.mark.slow  # may generate a second RSA key (random 0.05-0.4 s)
async def test_a_request_for_another_key_is_421(private_key: FlowPrivateKey) -> None:
    from ._platform import platform_key

    sealed = seal_request({"version": "3.0", "action": "ping"}, platform_key(1).public_key())
    response = await call(sealed, never_called, private_key)
    assert response.status == 421


@pytest.mark.parametrize(
    "handler_result",
    [None, ["screen"], {"data": float("nan")}, {"data": object()}, "SCREEN"],
)
async def test_unusable_handler_answers_are_500_fixed(
    private_key: FlowPrivateKey, handler_result: Any
) -> None:
    response = await call(
        seal_request({"version": "3.0", "action": "INIT"}), lambda _: handler_result, private_key
    )
    assert (response.status, response.body, response.outcome) == (
        500,
        b"Internal server error",
        "internal_error",
    )


async def test_handler_exception_is_500_fixed_and_logged_by_class_only(
    private_key: FlowPrivateKey, caplog: pytest.LogCaptureFixture
) -> None:
    def handler(request: FlowRequest) -> Any:
        raise KeyError("customer-email@example.com")

    with caplog.at_level("DEBUG", logger="svc.flows"):
        response = await call(
            seal_request({"version": "3.0", "action": "INIT"}), handler, private_key
        )
    assert (response.status, response.body) == (500, b"Internal server error")
    assert [r.getMessage() for r in caplog.records] == [
        "flow request failed outcome=internal_error error=KeyError"
    ]


async def test_misconfiguration_is_500_not_an_exception(private_key: FlowPrivateKey) -> None:
    body = seal_request({"version": "3.0", "action": "ping"}).body
    for secret in ("", 42):
        response = await handle_flow_request(
            body,
            sign(body=body, secret=APP_SECRET),
            private_key=private_key,
            app_secret=secret,
            handler=never_called,  # type: ignore[arg-type]
        )
        assert response.status == 500
    not_a_key: Any = "-----BEGIN PRIVATE KEY-----"
    response = await call(body, never_called, not_a_key)
    assert response.status == 500


async def test_trio_cancellation_propagates(private_key: FlowPrivateKey) -> None:
    reached: list[str] = []

    async def handler(request: FlowRequest) -> Any:
        await trio.sleep_forever()

    with trio.CancelScope() as scope:
        scope.cancel()
        await call(seal_request({"version": "3.0", "action": "INIT"}), handler, private_key)
        reached.append("after")
    assert scope.cancelled_caught and reached == []


def test_runs_on_asyncio_and_asyncio_cancellation_propagates(
    private_key: FlowPrivateKey,
) -> None:
    async def handler(request: FlowRequest) -> Any:
        await asyncio.sleep(0)
        return FlowScreen(screen="A", data={})

    async def slow(request: FlowRequest) -> Any:
        await asyncio.Event().wait()

    async def main() -> tuple[int, Any, bool]:
        sealed = seal_request({"version": "3.0", "action": "INIT"})
        response = await call(sealed, handler, private_key)
        task = asyncio.ensure_future(call(sealed, slow, private_key))
        await asyncio.sleep(0)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            cancelled = True
        else:
            cancelled = False
        return response.status, sealed.open_response(response.body), cancelled

    assert asyncio.run(main()) == (200, {"screen": "A", "data": {}}, True)


async def test_passphrase_protected_key_serves_the_same_requests() -> None:
    from svc.flows import load_flow_private_key

    from ._platform import PASSPHRASE, platform_key, private_pem

    key = load_flow_private_key(private_pem(platform_key(), PASSPHRASE), PASSPHRASE)
    sealed = seal_request({"version": "3.0", "action": "ping"})
    response = await handle_flow_request(
        sealed.body,
        sign(body=sealed.body, secret=APP_SECRET),
        private_key=key,
        app_secret=APP_SECRET,
        handler=never_called,
    )
    assert sealed.open_response(response.body) == {"data": {"status": "active"}}
