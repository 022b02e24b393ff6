"""Broadcast bodies: validate every recipient's message up front and build its wire payload.

A broadcast body is ``{"message": <a composer body without "to">, "recipients":
[{"to", "components"?}, ...], "phoneNumberId"?}``. Each recipient's message is
the composer body with its ``to`` (and, for a template, its own components),
checked by the same models and graph builders as ``POST {prefix}/messages``, so
a broadcast is accepted only when every one of its sends would be.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field

from svc.graph import GraphClient, GraphRequestValidationError, resolve_recipient
from svc.store import MAX_BROADCAST_RECIPIENTS, BroadcastRecipientInput, BroadcastStatus

from ._bodies import is_group_body, parse_body, parse_message_body, to_payload
from ._errors import HttpError, malformed_body
from ._numbers import NumberRouter, ServedNumber
from ._upstream import refusal_message

__all__ = [
    "MAX_BROADCAST_RECIPIENTS",
    "BroadcastAnswer",
    "BroadcastBody",
    "BroadcastOut",
    "BroadcastPlan",
    "broadcast_json",
    "plan_broadcast",
]

REFUSED_TYPES: Final = frozenset({"read", "pin", "reaction", "removeReaction"})
"""Composer types that answer one message or chat, never a list of recipients."""


class BroadcastRecipient(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    to: str = Field(description="A phone number / wa_id, a BSUID or a parent BSUID.")
    components: list[dict[str, Any]] | None = Field(
        default=None, description="This recipient's template components (template messages)."
    )


class BroadcastBody(BaseModel):
    """POST ``{prefix}/broadcasts``: one message, many recipients, an optional business number."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    message: dict[str, Any] = Field(
        description="A composer body of POST {prefix}/messages without `to`."
    )
    recipients: list[BroadcastRecipient] = Field(min_length=1, max_length=MAX_BROADCAST_RECIPIENTS)
    phoneNumberId: str | None = None


class BroadcastAnswer(BaseModel):
    """202: the broadcast was stored and will be sent by the paced sender."""

    broadcastId: str


class BroadcastOut(BaseModel):
    """A broadcast's state and counts (``queued`` includes sends in flight)."""

    id: str
    state: str
    counts: dict[str, int]
    failedByCode: dict[str, int]


@dataclass(frozen=True, slots=True, kw_only=True)
class BroadcastPlan:
    """A validated broadcast: its recipients with their payloads, and the template it uses."""

    recipients: tuple[BroadcastRecipientInput, ...]
    template_name: str | None
    template_language: str | None
    number: ServedNumber

    @property
    def phone_number_id(self) -> str:
        return self.number.phone_number_id


def _refuse(index: int, message: str) -> HttpError:
    return malformed_body(f"recipients[{index}]: {message}")


def plan_broadcast(data: object, numbers: NumberRouter) -> BroadcastPlan:
    """Validate a broadcast body and every recipient's message; 400 ``malformed_body`` if not.

    ``phoneNumberId`` is chosen like every send's: absent, the default number; one the
    service does not serve is refused.
    """
    body = parse_body(BroadcastBody, data)
    message = body.message
    kind = message.get("type")
    if "to" in message or "messaging_product" in message:
        raise malformed_body("The message must be a composer body without 'to'.")
    if kind in REFUSED_TYPES:
        raise malformed_body(f"A broadcast cannot send '{kind}' messages.")
    template = (message.get("name"), message.get("languageCode")) if kind == "template" else None
    recipients: list[BroadcastRecipientInput] = []
    for index, recipient in enumerate(body.recipients):
        one = {**message, "to": recipient.to}
        if recipient.components is not None:
            if kind != "template":
                raise _refuse(index, "components are for template messages.")
            one["components"] = recipient.components
        try:
            parsed = parse_message_body(one)
        except HttpError as exc:
            raise _refuse(index, exc.message) from None
        if is_group_body(parsed):
            raise malformed_body("A broadcast cannot send to groups.")
        try:
            payload = to_payload(parsed)
            GraphClient.encode_json(payload)  # refused now, not by the paced send
            field, who = resolve_recipient(recipient.to)
        except GraphRequestValidationError as exc:
            raise _refuse(index, refusal_message(exc)) from None
        if field == "to":
            who = who.removeprefix("+")  # one user, with or without the '+': sent once
        recipients.append(
            BroadcastRecipientInput(
                recipient=who, payload_json=json.dumps(payload, separators=(",", ":"))
            )
        )
    name, language = template if template is not None else (None, None)
    return BroadcastPlan(
        recipients=tuple(recipients),
        template_name=name if isinstance(name, str) else None,
        template_language=language if isinstance(language, str) else None,
        number=numbers.choose(body.phoneNumberId, source="body"),
    )


def broadcast_json(status: BroadcastStatus) -> dict[str, object]:
    """The API form of a broadcast's status."""
    return {
        "id": status.id,
        "state": status.state.value,
        "counts": {
            "queued": status.queued,
            "sent": status.sent,
            "failed": status.failed,
            "skipped": status.skipped,
        },
        "failedByCode": dict(status.failed_by_code),
    }
