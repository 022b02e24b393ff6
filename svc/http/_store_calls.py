"""The service's store writes as ``StoreCall`` values, so several can start together."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import Protocol, cast

from svc.store import (
    CheckedRows,
    MessageRecord,
    PersistenceStore,
    StatusEvent,
    UpdatesRecorded,
    UserIdentityRecord,
)

from ._projection import IdentityChange

__all__ = [
    "CheckedRowsStore",
    "StoreCall",
    "checked_rows_store",
    "completion_call",
    "identities_call",
    "identity_change_call",
    "record_message_call",
    "release_call",
    "status_call",
    "takes_checked_rows",
]

StoreCall = Callable[[PersistenceStore], Awaitable[object]]


class CheckedRowsStore(Protocol):
    """A store whose ``record_webhook_updates`` takes the projection as ``CheckedRows`` and
    records the updates with no work finished (``finished_keys``)."""

    async def record_webhook_updates(
        self,
        *,
        event_key: str,
        event_hash: str,
        received_at: datetime,
        update_keys: Sequence[str] = (),
        claim_lease_ms: int = 60_000,
        rows: CheckedRows | None = None,
        finished_keys: Sequence[str] = (),
    ) -> UpdatesRecorded: ...


def _takes_keyword(store: PersistenceStore | None, name: str) -> bool:
    """Whether ``store.record_webhook_updates`` takes the keyword-only parameter ``name``."""
    method = getattr(store, "record_webhook_updates", None)
    if store is None or not callable(method):
        return False
    try:
        parameter = inspect.signature(method).parameters.get(name)
    except (TypeError, ValueError):
        return False
    return parameter is not None and parameter.kind is inspect.Parameter.KEYWORD_ONLY


def takes_checked_rows(store: PersistenceStore | None) -> bool:
    """Whether ``store.record_webhook_updates`` takes ``rows`` and ``finished_keys`` (both
    adapters' checked form: one trip for a delivery without work)."""
    return _takes_keyword(store, "rows") and _takes_keyword(store, "finished_keys")


def checked_rows_store(store: PersistenceStore) -> CheckedRowsStore:
    """``store`` as ``CheckedRowsStore`` (the caller asked ``takes_checked_rows`` first)."""
    return cast(CheckedRowsStore, store)


def record_message_call(record: MessageRecord) -> StoreCall:
    async def call(store: PersistenceStore) -> object:
        return await store.record_message(record)

    return call


def identities_call(identities: tuple[UserIdentityRecord, ...]) -> StoreCall:
    async def call(store: PersistenceStore) -> object:
        await store.record_user_identities(identities)
        return True

    return call


def identity_change_call(change: IdentityChange) -> StoreCall:
    async def call(store: PersistenceStore) -> object:
        return await store.record_identity_change(
            user=change.user,
            new_user_id=change.new_user_id,
            new_wa_id=change.new_wa_id,
            at=change.at,
        )

    return call


def completion_call(
    *,
    idempotency_key: str,
    request_hash: str,
    response_json: str,
    completed_at: datetime,
    response_status: int | None = None,
) -> StoreCall:
    """Store a claimed key's answer; None when the store did not take it (key no longer pending)."""

    async def call(store: PersistenceStore) -> object:
        if response_status is None:
            stored = await store.complete_service_request(
                idempotency_key=idempotency_key,
                request_hash=request_hash,
                response_json=response_json,
                created_at=completed_at,
            )
        else:
            stored = await store.complete_service_request(
                idempotency_key=idempotency_key,
                request_hash=request_hash,
                response_json=response_json,
                created_at=completed_at,
                response_status=response_status,
            )
        return True if stored else None

    return call


def release_call(*, idempotency_key: str, request_hash: str) -> StoreCall:
    """Free a claimed key whose send never started; None when the store did not (not pending)."""

    async def call(store: PersistenceStore) -> object:
        released = await store.release_service_request(
            idempotency_key=idempotency_key, request_hash=request_hash
        )
        return True if released else None

    return call


def status_call(event: StatusEvent) -> StoreCall:
    async def call(store: PersistenceStore) -> object:
        return await store.append_message_status(
            wa_message_id=event.wa_message_id, status=event.status, timestamp=event.timestamp
        )

    return call
