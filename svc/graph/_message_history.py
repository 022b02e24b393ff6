"""Message history: the delivery events the platform kept for a number's messages.

Used by numbers onboarded from the WhatsApp Business app (coexistence) and to audit
what the platform recorded for a message id. Both lists page with ``paginate``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from ._admin_checks import (
    FIELDS_PARAM,
    PAGING_PARAMS,
    PhoneScoped,
    listing_query,
    opt_choice,
)
from ._endpoint import Param, route
from ._errors import GraphRequestValidationError
from ._parse import Raw, object_list, opt_int, opt_object, opt_str, read_record
from ._results import Page
from ._validate import MAX_MESSAGE_ID_LENGTH

__all__ = [
    "DELIVERY_STATUSES",
    "MessageHistory",
    "MessageHistoryEntry",
    "MessageHistoryEvent",
]

DELIVERY_STATUSES: Final = ("SENT", "DELIVERED", "READ", "FAILED", "DELETED")

LIST_MESSAGE_HISTORY = route(
    "GET",
    "/{phone_number_id}/message_history",
    message_id=Param(in_="query"),
    **FIELDS_PARAM,
    **PAGING_PARAMS,
)
LIST_MESSAGE_HISTORY_EVENTS = route(
    "GET",
    "/{message_history_id}/events",
    status_filter=Param(in_="query"),
    **FIELDS_PARAM,
    **PAGING_PARAMS,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageHistoryEvent:
    """One delivery event: ``delivery_status`` (``DELIVERY_STATUSES``) and when it happened.

    Read from either shape the platform sends: a flat event (inside a history
    entry) or an ``{"cursor", "node": {...}}`` item of the events edge.
    """

    id: str | None
    delivery_status: str | None
    occurrence_timestamp: int | None
    status_timestamp: int | None
    error_description: str | None
    application_id: str | None
    raw: Raw

    @classmethod
    def from_api(cls, raw: Raw) -> MessageHistoryEvent:
        node = opt_object(raw, "node") or raw
        application = opt_object(node, "application") or {}
        occurred = opt_int(node, "occurrence_timestamp") or opt_int(node, "timestamp")
        return read_record(
            cls,
            node,
            what="message history event",
            occurrence_timestamp=occurred,
            application_id=opt_str(application, "id"),
            raw=raw,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageHistoryEntry:
    """A message's history: its ``id`` (for ``list_message_history_events``) and events."""

    id: str | None
    message_id: str | None
    events: tuple[MessageHistoryEvent, ...]
    raw: Raw

    @classmethod
    def from_api(cls, raw: Raw) -> MessageHistoryEntry:
        events = opt_object(raw, "events") or {}
        items = tuple(map(MessageHistoryEvent.from_api, object_list(events.get("data"))))
        return read_record(cls, raw, what="message history", events=items)


def _message_id(value: object) -> str | None:
    if value is None:
        return None
    if (
        not isinstance(value, str)
        or not value.startswith("wamid.")
        or len(value) > MAX_MESSAGE_ID_LENGTH
        or not value.isascii()
        or any(ch.isspace() or not ch.isprintable() for ch in value)
    ):
        raise GraphRequestValidationError(
            "message_id must be a message id (wamid.…)", field="message_id"
        )
    return value


class MessageHistory(PhoneScoped):
    """Message history of one business phone number (``PhoneNumberClient``)."""

    async def list_message_history(
        self,
        *,
        message_id: str | None = None,
        fields: str | list[str] | None = None,
        limit: int | None = None,
        after: str | None = None,
        before: str | None = None,
    ) -> Page[MessageHistoryEntry]:
        """``GET /{phone_number_id}/message_history``; ``message_id`` narrows to one message."""
        params = {
            "message_id": _message_id(message_id),
            **listing_query(fields, limit, after, before),
        }
        raw = await self._on_scope(LIST_MESSAGE_HISTORY, params)
        return Page.from_api(raw, MessageHistoryEntry.from_api, what="message history")

    async def list_message_history_events(
        self,
        *,
        message_history_id: str,
        status_filter: str | None = None,
        fields: str | list[str] | None = None,
        limit: int | None = None,
        after: str | None = None,
        before: str | None = None,
    ) -> Page[MessageHistoryEvent]:
        """``GET /{message_history_id}/events``; ``status_filter`` keeps one delivery status."""
        params = {
            "message_history_id": message_history_id,
            "status_filter": opt_choice(
                status_filter, field="status_filter", choices=DELIVERY_STATUSES
            ),
            **listing_query(fields, limit, after, before),
        }
        raw = await self._on_node(LIST_MESSAGE_HISTORY_EVENTS, params)
        return Page.from_api(raw, MessageHistoryEvent.from_api, what="message history events")
