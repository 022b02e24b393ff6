"""Calling helpers: every call action on the wire, call permissions, and rejections."""

from __future__ import annotations

from typing import Any

import pytest

from svc.graph import CallPermissions, CallResult, GraphRequestValidationError

from ._admin_wire import PHONE_ID, Upstream, assert_wire

PRODUCT = {"messaging_product": "whatsapp"}
SDP = "v=0\r\no=- 7669997803033704573 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n"
CALL_ID = "wacid.HBgLMTY1MDU1NTEyMzQVAgARGCAyQjQ0RTE0RkJBNzM3MEE4NUMA"


async def test_connect_call_returns_call_id() -> None:
    answer = {"messaging_product": "whatsapp", "calls": [{"id": CALL_ID}]}
    up = Upstream(answer)
    result = await up.phone().connect_call(
        to="16505551234", sdp=SDP, biz_opaque_callback_data="tracking-42"
    )
    assert_wire(
        up.only,
        "POST",
        f"/{PHONE_ID}/calls",
        body={
            **PRODUCT,
            "to": "16505551234",
            "action": "connect",
            "session": {"sdp_type": "offer", "sdp": SDP},
            "biz_opaque_callback_data": "tracking-42",
        },
    )
    assert result == CallResult(success=None, call_id=CALL_ID, raw=answer)


@pytest.mark.parametrize(
    ("method", "action", "with_sdp"),
    [
        ("pre_accept_call", "pre_accept", True),
        ("accept_call", "accept", True),
        ("reject_call", "reject", False),
        ("terminate_call", "terminate", False),
    ],
)
async def test_call_actions(method: str, action: str, with_sdp: bool) -> None:
    up = Upstream({"messaging_product": "whatsapp", "success": True})
    kwargs: dict[str, Any] = {"call_id": CALL_ID}
    if with_sdp:
        kwargs["sdp"] = SDP
    result = await getattr(up.phone(), method)(**kwargs)
    body: dict[str, Any] = {**PRODUCT, "call_id": CALL_ID, "action": action}
    if with_sdp:
        body["session"] = {"sdp_type": "answer", "sdp": SDP}
    assert_wire(up.only, "POST", f"/{PHONE_ID}/calls", body=body)
    assert (result.success, result.call_id) == (True, None)


async def test_call_permissions_by_user_wa_id() -> None:
    answer = {
        "messaging_product": "whatsapp",
        "permission": {"status": "temporary", "expiration_time": 1745343479},
        "actions": [
            {
                "action_name": "send_call_permission_request",
                "can_perform_action": True,
                "limits": [
                    {"time_period": "PT24H", "max_allowed": 1, "current_usage": 0},
                    {"time_period": "P7D", "max_allowed": 2, "current_usage": 1},
                ],
            },
            {
                "action_name": "start_call",
                "can_perform_action": False,
                "limits": [
                    {
                        "time_period": "PT24H",
                        "max_allowed": 5,
                        "current_usage": 5,
                        "limit_expiration_time": 1745622600,
                    }
                ],
            },
        ],
    }
    up = Upstream(answer)
    perms = await up.phone().get_call_permissions(user_wa_id="16505551234")
    assert_wire(
        up.only, "GET", f"/{PHONE_ID}/call_permissions", query={"user_wa_id": "16505551234"}
    )
    assert isinstance(perms, CallPermissions)
    assert (perms.status, perms.expiration_time) == ("temporary", 1745343479)
    start = perms.actions[1]
    assert (start.action_name, start.can_perform_action) == ("start_call", False)
    assert start.limits[0].limit_expiration_time == 1745622600
    assert [limit.time_period for limit in perms.actions[0].limits] == ["PT24H", "P7D"]


async def test_call_permissions_by_recipient() -> None:
    up = Upstream({"permission": {"status": "no_permission"}, "actions": []})
    perms = await up.phone().get_call_permissions(recipient="US.13491208655302741918")
    assert_wire(
        up.only,
        "GET",
        f"/{PHONE_ID}/call_permissions",
        query={"recipient": "US.13491208655302741918"},
    )
    assert perms.status == "no_permission"


@pytest.mark.parametrize(
    ("call", "kwargs"),
    [
        ("get_call_permissions", {}),
        ("get_call_permissions", {"user_wa_id": "16505551234", "recipient": "US.1"}),
        ("get_call_permissions", {"user_wa_id": "not a number"}),
        ("connect_call", {"to": "16505551234", "sdp": ""}),
        ("connect_call", {"to": "https://evil.example", "sdp": SDP}),
        ("connect_call", {"to": "16505551234", "sdp": "v=0\x00"}),
        ("connect_call", {"to": "16505551234", "sdp": SDP, "biz_opaque_callback_data": "a\nb"}),
        ("accept_call", {"call_id": "has space", "sdp": SDP}),
        ("pre_accept_call", {"call_id": CALL_ID, "sdp": "x" * 65537}),
        ("reject_call", {"call_id": ""}),
        ("terminate_call", {"call_id": 42}),
    ],
)
async def test_rejections_send_nothing(call: str, kwargs: dict[str, Any]) -> None:
    up = Upstream()
    with pytest.raises(GraphRequestValidationError):
        await getattr(up.phone(), call)(**kwargs)
    assert up.requests == []


async def test_unknown_keyword_rejected() -> None:
    up = Upstream()
    with pytest.raises(TypeError):
        await up.phone().reject_call(call_id=CALL_ID, reason="busy")  # type: ignore[call-arg]
    assert up.requests == []
