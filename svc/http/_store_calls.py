"""The service's store writes as ``StoreCall`` values, so several can start together."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime

from svc.store import MessageRecord, PersistenceStore, StatusEvent

from ._projection import IdentityChange

__all__ = [
    "StoreCall",
    "completion_call",
    "identity_change_call",
    "record_message_call",
    "release_call",
    "status_call",
]

StoreCall = Callable[[PersistenceStore], Awaitable[object]]


def record_message_call(record: MessageRecord) -> StoreCall:
    async def call(store: PersistenceStore) -> object:
        return await store.record_message(record)

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
