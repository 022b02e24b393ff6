"""The keyed send's settling writes, each answering None when the store did not take it.

``Service._write_together`` starts several writes as one group-commit batch and counts a
None answer as not stored; these two turn the store's ``False`` (the key was no longer
pending) into that None.
"""

from __future__ import annotations

from datetime import datetime

from svc.store import PersistenceStore

__all__ = ["complete_request", "release_request"]


async def complete_request(
    store: PersistenceStore,
    *,
    idempotency_key: str,
    request_hash: str,
    response_json: str,
    completed_at: datetime,
    response_status: int | None = None,
) -> bool | None:
    """Store a claimed key's answer; None when the store did not take it (key no longer pending)."""
    stored = await store.complete_service_request(
        idempotency_key=idempotency_key,
        request_hash=request_hash,
        response_json=response_json,
        created_at=completed_at,
        response_status=response_status,
    )
    return True if stored else None


async def release_request(
    store: PersistenceStore, *, idempotency_key: str, request_hash: str
) -> bool | None:
    """Free a claimed key whose send never started; None when the store did not (not pending)."""
    released = await store.release_service_request(
        idempotency_key=idempotency_key, request_hash=request_hash
    )
    return True if released else None
