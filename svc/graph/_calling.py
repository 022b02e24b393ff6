"""Calling API helpers: call actions on ``POST /{phone_number_id}/calls`` and call permissions.

Operator constraints (spec): calling needs a daily messaging limit of 2,000,
is restricted in several countries and needs app review; the platform
enforces them and answers with the calling error classes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

from svc._text import has_ascii_control, has_sdp_control

from ._admin_checks import (
    MESSAGING_PRODUCT,
    PhoneScoped,
    check_id,
    check_wa_id,
)
from ._callback_data import MAX_BIZ_OPAQUE_CALLBACK_DATA
from ._endpoint import Param, route
from ._errors import GraphRequestValidationError
from ._parse import ApiRecord, Raw, as_object, object_list, opt_object, opt_str, read_record
from ._recipient import Recipient
from ._validate import check_match

__all__ = [
    "CALL_ACTIONS",
    "MAX_SDP_LENGTH",
    "CallPermissionAction",
    "CallPermissionLimit",
    "CallPermissions",
    "CallResult",
    "Calling",
]

CALL_ACTIONS: Final = ("connect", "pre_accept", "accept", "reject", "terminate")
MAX_SDP_LENGTH: Final = 65536

_CALL_ID = re.compile(r"[A-Za-z0-9_.:=+/-]{1,512}")

CALLS = route("POST", "/{phone_number_id}/calls")
CALL_PERMISSIONS = route(
    "GET",
    "/{phone_number_id}/call_permissions",
    user_wa_id=Param(in_="query"),
    recipient=Param(in_="query"),
)


# --- results ------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class CallResult:
    """A call action: ``call_id`` is set when the platform answers with ``calls[0].id``."""

    success: bool | None
    call_id: str | None
    raw: Raw

    @classmethod
    def from_api(cls, raw: Any) -> CallResult:
        obj = as_object(raw, what="call")
        calls = object_list(obj.get("calls"))
        call_id = opt_str(calls[0], "id") if calls else None
        return read_record(cls, obj, what="call", call_id=call_id)


@dataclass(frozen=True, slots=True, kw_only=True)
class CallPermissionLimit(ApiRecord):
    _what = "call permission limit"

    time_period: str | None
    max_allowed: int | None
    current_usage: int | None
    limit_expiration_time: int | None
    raw: Raw


@dataclass(frozen=True, slots=True, kw_only=True)
class CallPermissionAction:
    action_name: str
    can_perform_action: bool | None
    limits: tuple[CallPermissionLimit, ...]
    raw: Raw


@dataclass(frozen=True, slots=True, kw_only=True)
class CallPermissions:
    """``GET /{phone_number_id}/call_permissions``: the user's permission and allowed actions."""

    status: str | None
    expiration_time: int | None
    actions: tuple[CallPermissionAction, ...]
    raw: Raw

    @classmethod
    def from_api(cls, raw: Any) -> CallPermissions:
        obj = as_object(raw, what="call permissions")
        permission = opt_object(obj, "permission") or {}
        actions = tuple(
            read_record(CallPermissionAction, action, what="call permissions", action_name=name)
            for action in object_list(obj.get("actions"))
            if (name := opt_str(action, "action_name")) is not None
        )
        return read_record(cls, permission, what="call permissions", actions=actions, raw=obj)


# --- helpers ------------------------------------------------------------------


def _call_id(value: object) -> str:
    return check_match(
        value, _CALL_ID,
        "call_id", "call_id must be the platform's call id (no whitespace, at most 512)",
    )


def _session(sdp: object, sdp_type: str) -> dict[str, str]:
    """``{"sdp_type", "sdp"}``: an RFC 8866 description (CR, LF and tab allowed)."""
    if not isinstance(sdp, str) or not sdp.strip():
        raise GraphRequestValidationError("sdp must be a non-empty string", field="sdp")
    if len(sdp) > MAX_SDP_LENGTH or has_sdp_control(sdp):
        raise GraphRequestValidationError(
            f"sdp must be at most {MAX_SDP_LENGTH} characters without control characters",
            field="sdp",
        )
    return {"sdp_type": sdp_type, "sdp": sdp}


def _callback_data(value: object) -> str | None:
    if value is None:
        return None
    if (
        not isinstance(value, str)
        or not value
        or len(value) > MAX_BIZ_OPAQUE_CALLBACK_DATA
        or has_ascii_control(value)
    ):
        raise GraphRequestValidationError(
            f"biz_opaque_callback_data must be 1..{MAX_BIZ_OPAQUE_CALLBACK_DATA} "
            "printable characters",
            field="biz_opaque_callback_data",
        )
    return value


class Calling(PhoneScoped):
    """Call control for one business phone number (``PhoneNumberClient``)."""

    async def _call_action(self, body: dict[str, object]) -> CallResult:
        return CallResult.from_api(await self._on_scope(CALLS, body={**MESSAGING_PRODUCT, **body}))

    async def connect_call(
        self, *, to: str, sdp: str, biz_opaque_callback_data: str | None = None
    ) -> CallResult:
        """Start a business-initiated call: action ``connect`` with an SDP offer.

        ``to`` is a phone number / wa_id, or a (parent) BSUID sent as ``recipient``.
        ``call_id`` of the result is the new call's id (``calls[0].id``).
        """
        body: dict[str, object] = {
            **Recipient.parse(to, field="to").wire(),
            "action": "connect",
            "session": _session(sdp, "offer"),
        }
        if (data := _callback_data(biz_opaque_callback_data)) is not None:
            body["biz_opaque_callback_data"] = data
        return await self._call_action(body)

    async def pre_accept_call(self, *, call_id: str, sdp: str) -> CallResult:
        """Action ``pre_accept`` on an incoming call, with the SDP answer."""
        session = _session(sdp, "answer")
        return await self._call_action(
            {"call_id": _call_id(call_id), "action": "pre_accept", "session": session}
        )

    async def accept_call(
        self, *, call_id: str, sdp: str, biz_opaque_callback_data: str | None = None
    ) -> CallResult:
        """Action ``accept`` on an incoming call, with the SDP answer."""
        body: dict[str, object] = {
            "call_id": _call_id(call_id),
            "action": "accept",
            "session": _session(sdp, "answer"),
        }
        if (data := _callback_data(biz_opaque_callback_data)) is not None:
            body["biz_opaque_callback_data"] = data
        return await self._call_action(body)

    async def reject_call(self, *, call_id: str) -> CallResult:
        """Action ``reject`` on an incoming call."""
        return await self._call_action({"call_id": _call_id(call_id), "action": "reject"})

    async def terminate_call(self, *, call_id: str) -> CallResult:
        """Action ``terminate``: end an active call."""
        return await self._call_action({"call_id": _call_id(call_id), "action": "terminate"})

    async def get_call_permissions(
        self, *, user_wa_id: str | None = None, recipient: str | None = None
    ) -> CallPermissions:
        """``GET /{phone_number_id}/call_permissions`` for exactly one of ``user_wa_id`` or
        ``recipient`` (a business-scoped user id)."""
        if (user_wa_id is None) == (recipient is None):
            raise GraphRequestValidationError(
                "pass exactly one of user_wa_id or recipient", field="user_wa_id"
            )
        params = {
            "user_wa_id": (
                None if user_wa_id is None else check_wa_id(user_wa_id, field="user_wa_id")
            ),
            "recipient": None if recipient is None else check_id(recipient, field="recipient"),
        }
        return CallPermissions.from_api(await self._on_scope(CALL_PERMISSIONS, params))
