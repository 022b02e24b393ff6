"""The service's reads of the message projection: a page of rows, one row, a user's window."""

from __future__ import annotations

from datetime import datetime

from svc.store import PersistenceStore, format_timestamp
from svc.store import conversation_window as window_of

from ._errors import conversation_window_unavailable, malformed_cursor, not_found
from ._numbers import ServedNumber
from ._projection import belongs_to_number, record_json
from ._replies import Reply, json_bytes
from ._service import Service

__all__ = ["conversation_window", "get_message", "list_messages"]


def _reading(
    service: Service, number: ServedNumber | None
) -> tuple[PersistenceStore, ServedNumber]:
    """What every read needs: the store (503 without one) and the business number the read
    is about (None: the default number)."""
    return service.require_store(), number if number is not None else service.numbers.default


async def list_messages(
    service: Service,
    *,
    limit: int,
    cursor: str | None,
    user: str | None = None,
    number: ServedNumber | None = None,
) -> Reply:
    """A page of one business number's projection, newest first; ``user`` keeps one user's.

    Rows stored without a number (before the column existed) are the default number's.
    """
    store, scope = _reading(service, number)
    page = await service.store_call(
        store.list_messages(
            limit=limit,
            before_row_id=cursor,
            user=user,
            business_phone_number_id=scope.phone_number_id,
            include_unassigned=scope.default,
        )
    )
    if not page.cursor_found:
        raise malformed_cursor()
    body = {"items": [record_json(r) for r in page.items], "nextCursor": page.next_cursor}
    return Reply(200, json_bytes(body))


async def get_message(
    service: Service, message_id: str, number: ServedNumber | None = None
) -> Reply:
    """One projected message of a business number (default: the default number)."""
    store, scope = _reading(service, number)
    record = await service.store_call(store.get_message(wa_message_id=message_id))
    if record is None or not belongs_to_number(record, scope):
        raise not_found("No message with this id.")
    return Reply(200, json_bytes(record_json(record)))


async def conversation_window(
    service: Service, user: str, number: ServedNumber | None = None
) -> Reply:
    """The 24-hour window of ``user`` with one business number (default: the default).

    ``user`` is a phone, BSUID or parent BSUID, as the store keeps it; only
    inbound rows to that number open it.
    """
    store, scope = _reading(service, number)
    last = await service.store_call(
        store.get_latest_inbound_message_at(
            user=user,
            business_phone_number_id=scope.phone_number_id,
            include_unassigned=scope.default,
        )
    )
    try:
        window = window_of(now=service.now(), last_inbound_at=last)
    except Exception as exc:  # noqa: BLE001 - the spec's own 503 for a window failure
        service.recent_errors.add(exc)
        raise conversation_window_unavailable() from None
    body = {
        "open": window.open,
        "lastInboundAt": _iso(window.last_inbound_at),
        "expiresAt": _iso(window.expires_at),
        "remainingMs": window.remaining_ms,
    }
    return Reply(200, json_bytes(body))


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else format_timestamp(moment)
