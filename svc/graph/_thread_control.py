"""Thread control: pass, take or release a conversation the number shares with another responder.

With Meta's business agent (Meta Business AI) on a number, or conversation
routing between apps, one responder holds each user's thread at a time; the
others receive it on the ``standby`` webhook field. ``POST
/{phone_number_id}/thread_control`` moves it: ``pass`` hands a thread you
hold to the escalation partner (or, with ``target_role="ai_agent"``, to
Meta's agent), ``take`` takes it from its holder (the escalation partner
only; sending a service message takes it too), ``release`` gives it back to
entry-point routing. ``metadata`` reaches the receiving app in its
``messaging_handovers`` webhook; a release names no new owner and sends none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from ._admin_checks import PhoneScoped, check_choice
from ._endpoint import route
from ._parse import ApiRecord, Raw
from ._recipient import Recipient
from ._validate import check_label

__all__ = [
    "THREAD_CONTROL_ACTIONS",
    "ThreadControl",
    "ThreadControlResult",
]

THREAD_CONTROL_ACTIONS: Final = ("pass", "take", "release")
THREAD_TARGET_ROLES: Final = ("ai_agent",)
MAX_THREAD_METADATA: Final = 2000

THREAD_CONTROL = route("POST", "/{phone_number_id}/thread_control")


@dataclass(frozen=True, slots=True, kw_only=True)
class ThreadControlResult(ApiRecord):
    """The answer of a thread-control call (``{"messaging_product": "whatsapp", ...}``)."""

    _what = "thread control"

    messaging_product: str | None
    raw: Raw


class ThreadControl(PhoneScoped):
    """Thread-control helpers of ``PhoneNumberClient``; ``to`` is a phone number or a BSUID."""

    async def _thread_control(
        self, action: str, to: str, extra: dict[str, object]
    ) -> ThreadControlResult:
        body: dict[str, object] = {"messaging_product": "whatsapp"}
        body.update(Recipient.parse(to, field="to").wire())
        body["action"] = check_choice(action, field="action", choices=THREAD_CONTROL_ACTIONS)
        body.update(extra)
        return ThreadControlResult.from_api(await self._on_scope(THREAD_CONTROL, body=body))

    async def pass_thread_control(
        self,
        *,
        to: str,
        target_role: Literal["ai_agent"] | None = None,
        metadata: str | None = None,
    ) -> ThreadControlResult:
        """Hand a thread you hold to the escalation partner, or to Meta's agent (``ai_agent``)."""
        extra: dict[str, object] = {}
        if metadata is not None:
            extra["metadata"] = check_label(metadata, "metadata", max_length=MAX_THREAD_METADATA)
        if target_role is not None:
            role = check_choice(target_role, field="target_role", choices=THREAD_TARGET_ROLES)
            extra["control_pass"] = {"target_role": role}
        return await self._thread_control("pass", to, extra)

    async def take_thread_control(
        self, *, to: str, metadata: str | None = None
    ) -> ThreadControlResult:
        """Take a thread from its holder (allowed to the number's escalation partner only)."""
        extra: dict[str, object] = {}
        if metadata is not None:
            extra["metadata"] = check_label(metadata, "metadata", max_length=MAX_THREAD_METADATA)
        return await self._thread_control("take", to, extra)

    async def release_thread_control(self, *, to: str) -> ThreadControlResult:
        """Give a thread you hold back to routing (Meta's agent answers the user's next message)."""
        return await self._thread_control("release", to, {})
