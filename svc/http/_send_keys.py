"""A keyed send's idempotency key: its claim, and the writes that settle it.

A send with an ``Idempotency-Key`` claims the key before it calls the platform. The claim
answers at once with a replay, a pending or a conflicting key; otherwise the send holds a
``SendKey``, which its outcome settles: the answer stored (replayed to a retry), the key
released (a transient refusal: a retry goes through), or left pending (the outcome is
unknown: the platform may have sent it). ``Service._write_together`` starts several writes
as one group-commit batch and counts a None answer as not stored.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

from svc import crypto
from svc.store import PersistenceStore

from ._errors import HttpError

__all__ = [
    "CONTEXT_SEND_HASH",
    "SendKey",
    "complete_request",
    "release_request",
    "replayed_refusal",
]

CONTEXT_SEND_HASH = crypto.sha256_hex(b"svc handler context send")
"""The request hash every context send claims its key with: the key alone decides."""


@dataclass(frozen=True, slots=True)
class SendKey:
    """A claimed key (scoped to its operation and number) and the request hash it holds."""

    key: str
    request_hash: str


def replayed_refusal(status: int, response_json: str) -> HttpError:
    """The stored definitive refusal of a context send, raised again as it was first raised."""
    code, message = "graph_request_failed", "Graph request failed."
    try:
        error = json.loads(response_json)["error"]
        code, message = str(error["code"]), str(error["message"])
    except (ValueError, TypeError, KeyError):
        pass
    return HttpError(status, code, message)


async def complete_request(
    store: PersistenceStore,
    claimed: SendKey,
    *,
    response_json: str,
    completed_at: datetime,
    response_status: int | None = None,
) -> bool | None:
    """Store a claimed key's answer; None when the store did not take it (key no longer pending)."""
    stored = await store.complete_service_request(
        idempotency_key=claimed.key,
        request_hash=claimed.request_hash,
        response_json=response_json,
        created_at=completed_at,
        response_status=response_status,
    )
    return True if stored else None


async def release_request(store: PersistenceStore, claimed: SendKey) -> bool | None:
    """Free a claimed key whose send never started; None when the store did not (not pending)."""
    released = await store.release_service_request(
        idempotency_key=claimed.key, request_hash=claimed.request_hash
    )
    return True if released else None
