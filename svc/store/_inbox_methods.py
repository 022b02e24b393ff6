"""The inbox methods both adapters share: validation and time conversion over ``_call``.

A mixin of ``StoreBase`` so the inbox surface stays in one module next to its operations
(``_inbox_ops``). The rows themselves go in with their delivery
(``record_webhook_updates(inbox=...)``); these claim, settle, list and prune them. Claims
and completions, a worker's hot writes, go through the group commit (``_write``, a
``Kind.INBOX`` job): they share the webhook writes' transactions.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Final

from . import _inbox_ops as ops
from . import _validate as check
from ._errors import PersistenceValidationError
from ._inbox_ops import InboxWrite
from ._kinds import Kind
from ._leases import MAX_ERROR_LEN, MAX_RETRY_DELAY_MS
from ._methods import StoreCalls
from ._records import InboxItem, InboxStatistics, InboxStatus, UserStateRecord, UserStateWrite
from ._time import to_ms, utc_now

MAX_INBOX_CLAIM: Final = 1000
MAX_USER_STATE_BYTES: Final = 65_536
"""The largest sealed state a completion writes (the state itself is capped smaller by its
caller; this bounds the row)."""
MAX_CONSUMED: Final = 10_000
"""The most later rows one completion consumes."""
_MAX_ID: Final = 2**63 - 1


def _id(value: object) -> int:
    return check.integer(value, "id", low=1, high=_MAX_ID)


def _consumed(value: object, head: int) -> tuple[int, ...]:
    """Distinct item ids, each after ``head`` (the store checks they are of its queue)."""
    ids = tuple(dict.fromkeys(_id(v) for v in check.records(value, "consumed")))
    if len(ids) > MAX_CONSUMED:
        raise _options(f"consumed holds at most {MAX_CONSUMED} ids.")
    if any(i <= head for i in ids):
        raise _options("consumed must name later items of the head's queue.")
    return ids


def _state(value: object, now: datetime | None) -> tuple[ops.StateArgs, int]:
    """A checked state write and the completion's time, both in ms."""
    if type(value) is not UserStateWrite:
        raise PersistenceValidationError("invalid_record", "state must be a UserStateWrite.")
    if now is None:
        raise _options("now is required with a state.")
    at = to_ms(now, field="now")
    if value.sealed is None:
        return None, at
    sealed = value.sealed
    if type(sealed) is not bytes or not 0 < len(sealed) <= MAX_USER_STATE_BYTES:
        raise PersistenceValidationError(
            "invalid_record", f"sealed must be 1..{MAX_USER_STATE_BYTES} bytes or None."
        )
    if value.expires_at is None:
        raise PersistenceValidationError("invalid_record", "expires_at is required with sealed.")
    return (sealed, to_ms(value.expires_at, field="expires_at")), at


def _completion(
    id: object, lease_id: object, consumed: object, state: object, now: datetime | None
) -> tuple[int, str, tuple[int, ...], tuple[ops.StateArgs, int] | None]:
    """A completion's head id, lease, consumed ids and state write (with its time), checked."""
    item_id = _id(id)
    lease = check.text(lease_id, "lease_id")
    ids = _consumed(consumed, item_id)
    return item_id, lease, ids, None if state is None else _state(state, now)


def _options(message: str) -> PersistenceValidationError:
    return PersistenceValidationError("invalid_options", message)


class InboxMethods(StoreCalls):
    """Claim the heads of the inbox's queues, settle them under their lease (consuming later
    items and writing the user's state with a success), list, retry, drop and count items,
    read users' states, and delete old dead letters and expired states.

    Each method is documented once, at its declaration in ``PersistenceStore``.
    """

    __slots__ = ()

    async def _inbox_write(self, write: InboxWrite, *args: object, key: str = "") -> Any:
        """A claim (``key`` "claim": after the completions of its batch) or a completion."""
        return await self._write(Kind.INBOX, (write, args), code="outbox_failed", key=key)

    async def claim_inbox_items(
        self, *, now: datetime, limit: int, lease_ms: int
    ) -> list[InboxItem]:
        at = to_ms(now, field="now")
        count = check.integer(limit, "limit", low=1, high=MAX_INBOX_CLAIM)
        lease = check.integer(lease_ms, "lease_ms", low=1, high=MAX_RETRY_DELAY_MS)
        claimed: list[ops.ClaimedRow] = await self._inbox_write(
            InboxWrite.CLAIM, at, count, lease, key="claim"
        )
        return [ops.claimed_item(row) for row in claimed]

    async def mark_inbox_item_succeeded(
        self,
        *,
        id: int,
        lease_id: str,
        consumed: Sequence[int] = (),
        state: UserStateWrite | None = None,
        now: datetime | None = None,
    ) -> bool:
        item_id, lease, ids, write = _completion(id, lease_id, consumed, state, now)
        at = None if now is None else to_ms(now, field="now")
        done: bool = await self._inbox_write(InboxWrite.SUCCEEDED, item_id, lease, ids, write, at)
        return done

    async def mark_inbox_item_succeeded_and_claim(
        self,
        *,
        id: int,
        lease_id: str,
        consumed: Sequence[int] = (),
        state: UserStateWrite | None = None,
        now: datetime,
        lease_ms: int,
        others_first: bool = False,
    ) -> tuple[bool, InboxItem | None]:
        item_id, lease, ids, write = _completion(id, lease_id, consumed, state, now)
        at = to_ms(now, field="now")
        span = check.integer(lease_ms, "lease_ms", low=1, high=MAX_RETRY_DELAY_MS)
        if type(others_first) is not bool:
            raise _options("others_first must be a bool.")
        done: tuple[bool, ops.ClaimedRow | None] = await self._inbox_write(
            InboxWrite.SUCCEEDED_AND_CLAIM, item_id, lease, ids, write, at, span, others_first
        )
        kept, row = done
        return kept, None if row is None else ops.claimed_item(row)

    async def mark_inbox_items_taken(self, *, id: int, lease_id: str, taken: Sequence[int]) -> int:
        item_id = _id(id)
        lease = check.text(lease_id, "lease_id")
        ids = _consumed(taken, item_id)
        return await self._call(
            "outbox_failed",
            ops.mark_inbox_items_taken, item_id, lease, ids,
            write=True,
        )

    async def extend_inbox_lease(self, *, id: int, lease_id: str, until: datetime) -> bool:
        item_id = _id(id)
        lease = check.text(lease_id, "lease_id")
        at = to_ms(until, field="until")
        return await self._call(
            "outbox_failed",
            ops.extend_inbox_lease, item_id, lease, at,
            write=True,
        )

    async def list_inbox_queue(
        self, *, queue_key: str, after_id: int, limit: int = 100
    ) -> list[InboxItem]:
        queue = check.text(queue_key, "queue_key")
        after = check.integer(after_id, "after_id", low=0, high=_MAX_ID)
        count = check.integer(limit, "limit", low=1, high=MAX_INBOX_CLAIM)
        return await self._call(
            "query_failed",
            ops.list_inbox_queue, queue, after, count,
            write=False,
        )

    async def get_user_state(self, *, queue_key: str, now: datetime) -> UserStateRecord | None:
        queue = check.text(queue_key, "queue_key")
        at = to_ms(now, field="now")
        return await self._call(
            "query_failed", ops.get_user_state, queue, at, write=False
        )

    async def delete_expired_user_states(self, *, now: datetime, batch_size: int = 500) -> int:
        at = to_ms(now, field="now")
        size = check.batch_size(batch_size)
        return await self._delete_in_batches(size, ops.delete_expired_user_states, at, size)

    async def mark_inbox_item_failed(
        self,
        *,
        id: int,
        lease_id: str,
        now: datetime,
        retry_delay_ms: int,
        error: str | None = None,
    ) -> bool:
        item_id = _id(id)
        lease = check.text(lease_id, "lease_id")
        at = to_ms(now, field="now")
        delay = check.integer(retry_delay_ms, "retry_delay_ms", low=0, high=MAX_RETRY_DELAY_MS)
        reason = check.optional_text(error, "error", max_len=MAX_ERROR_LEN)
        done: bool = await self._inbox_write(InboxWrite.FAILED, item_id, lease, at, delay, reason)
        return done

    async def mark_inbox_item_dead(
        self, *, id: int, lease_id: str, now: datetime, error: str | None = None
    ) -> bool:
        item_id = _id(id)
        lease = check.text(lease_id, "lease_id")
        at = to_ms(now, field="now")
        reason = check.optional_text(error, "error", max_len=MAX_ERROR_LEN)
        done: bool = await self._inbox_write(InboxWrite.DEAD, item_id, lease, at, reason)
        return done

    async def list_inbox_items(
        self, *, status: InboxStatus | str | None = None, limit: int = 100
    ) -> list[InboxItem]:
        state = None if status is None else check.status(status, InboxStatus, "inbox")
        count = check.integer(limit, "limit", low=1, high=MAX_INBOX_CLAIM)
        return await self._call(
            "query_failed", ops.list_inbox_items, state, count, write=False
        )

    async def retry_inbox_item(self, *, id: int, now: datetime) -> InboxItem | None:
        item_id = _id(id)
        at = to_ms(now, field="now")
        return await self._call(
            "outbox_failed", ops.retry_inbox_item, item_id, at, write=True
        )

    async def drop_inbox_item(self, *, id: int, now: datetime | None = None) -> bool:
        item_id = _id(id)
        at = to_ms(now if now is not None else utc_now(), field="now")
        found = await self._call(
            "outbox_failed", ops.drop_inbox_item, item_id, at, write=True
        )
        return found is not None

    async def get_inbox_item(self, *, id: int) -> InboxItem | None:
        item_id = _id(id)
        return await self._call(
            "query_failed", ops.get_inbox_item, item_id, write=False
        )

    async def inbox_statistics(self) -> InboxStatistics:
        return await self._call("query_failed", ops.inbox_statistics, write=False)

    async def delete_dead_inbox_items(self, *, older_than: datetime, batch_size: int = 500) -> int:
        cutoff = to_ms(older_than, field="older_than")
        size = check.batch_size(batch_size)
        return await self._delete_in_batches(size, ops.delete_dead_inbox_items, cutoff, size)
