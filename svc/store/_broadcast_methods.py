"""The broadcast methods both adapters share: validation and time conversion over ``_call``
(and ``_write`` for the group-committed pause of a template's broadcasts).

A mixin of ``StoreBase`` so the broadcast surface stays in one module next
to its operations (``_broadcasts``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Final, Literal

from . import _broadcasts as ops
from . import _validate as check
from ._broadcasts import (
    BroadcastCreateResult,
    BroadcastRecipientInput,
    BroadcastSend,
    BroadcastStatus,
)
from ._contract import BroadcastStore
from ._errors import PersistenceValidationError
from ._kinds import Kind
from ._methods import StoreCalls
from ._time import _EPOCH, to_ms

MAX_BROADCAST_RECIPIENTS: Final = 5000
"""Recipients one broadcast may hold (one request); larger lists are split by the caller."""
MAX_BROADCAST_PAYLOAD: Final = 65_536
"""Characters of one recipient's stored wire payload (JSON)."""
MAX_BROADCAST_CLAIM: Final = 1000
MAX_BROADCAST_LEASE_MS: Final = 3_600_000


def to_us(value: datetime, *, field: str) -> int:
    """Epoch microseconds of an aware datetime (pacing slots are finer than milliseconds)."""
    to_ms(value, field=field)  # the same refusal of naive datetimes
    delta = value - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _recipient(index: int, item: object) -> tuple[str, str]:
    """The checked recipient ``recipients[index]``; a refusal names it by index."""
    if not isinstance(item, BroadcastRecipientInput):
        raise PersistenceValidationError(
            "invalid_record", "recipients must be BroadcastRecipientInput values."
        )
    where = f"recipients[{index}]"
    who = check.user(item.recipient, f"{where}.recipient")
    payload = check.text(item.payload_json, f"{where}.payload_json", max_len=MAX_BROADCAST_PAYLOAD)
    return who, payload


class BroadcastMethods(StoreCalls, BroadcastStore):
    """Create, read, pause and resume broadcasts; claim, complete and retry their sends.

    Each method is documented once, at its declaration in ``BroadcastStore``.
    """

    __slots__ = ()

    async def create_broadcast(
        self,
        *,
        id: str,
        request_key: str,
        request_hash: str,
        phone_number_id: str,
        recipients: Sequence[BroadcastRecipientInput],
        created_at: datetime,
        template_name: str | None = None,
        template_language: str | None = None,
    ) -> BroadcastCreateResult:
        broadcast_id = check.text(id, "id")
        key = check.text(request_key, "request_key")
        digest = check.text(request_hash, "request_hash")
        number = check.text(phone_number_id, "phone_number_id", max_len=check.PHONE_MAX)
        name = check.optional_text(template_name, "template_name", max_len=512)
        language = check.optional_text(template_language, "template_language", max_len=32)
        items = tuple(
            _recipient(i, r) for i, r in enumerate(check.records(recipients, "recipients"))
        )
        if not 1 <= len(items) <= MAX_BROADCAST_RECIPIENTS:
            raise PersistenceValidationError(
                "invalid_record", f"A broadcast has 1..{MAX_BROADCAST_RECIPIENTS} recipients."
            )
        at = to_ms(created_at, field="created_at")
        return await self._call(
            "outbox_failed",
            ops.create_broadcast,
            broadcast_id,
            key,
            digest,
            number,
            (name, language),
            items,
            at,
            write=True,
        )

    async def get_broadcast(self, *, id: str) -> BroadcastStatus | None:
        broadcast_id = check.text(id, "id")
        return await self._call(
            "query_failed", ops.get_broadcast, broadcast_id, write=False
        )

    async def set_broadcast_paused(self, *, id: str, paused: bool, now: datetime) -> bool:
        broadcast_id = check.text(id, "id")
        at = to_ms(now, field="now")
        flag = bool(paused)
        return await self._call(
            "outbox_failed",
            ops.set_broadcast_paused, broadcast_id, flag, at,
            write=True,
        )

    async def pause_broadcasts_for_template(
        self, *, name: str, language: str | None = None, now: datetime
    ) -> int:
        template = check.text(name, "name", max_len=512)
        code = check.optional_text(language, "language", max_len=32)
        at = to_ms(now, field="now")
        paused: int = await self._write(
            Kind.PAUSE, (template, code, at), code="outbox_failed", key=template
        )
        return paused

    async def expire_broadcast_leases(self, *, now: datetime) -> int:
        at = to_ms(now, field="now")
        return await self._call(
            "outbox_failed", ops.expire_broadcast_leases, at, write=True
        )

    async def claim_broadcast_sends(
        self,
        *,
        phone_number_id: str,
        now: datetime,
        rate_per_second: float,
        horizon_ms: int,
        limit: int,
        lease_ms: int,
    ) -> list[BroadcastSend]:
        number = check.text(phone_number_id, "phone_number_id", max_len=check.PHONE_MAX)
        if (
            isinstance(rate_per_second, bool)
            or not isinstance(rate_per_second, int | float)
            or not 0 < rate_per_second <= 100_000
        ):
            raise PersistenceValidationError("invalid_options", "rate_per_second is out of range.")
        interval = max(1, round(1_000_000 / rate_per_second))
        horizon = check.integer(horizon_ms, "horizon_ms", low=1, high=60_000) * 1000
        count = check.integer(limit, "limit", low=1, high=MAX_BROADCAST_CLAIM)
        lease = check.integer(lease_ms, "lease_ms", low=1, high=MAX_BROADCAST_LEASE_MS)
        at = to_us(now, field="now")
        return await self._call(
            "outbox_failed",
            ops.claim_broadcast_sends, number, at, interval, horizon, count, lease,
            write=True,
        )

    async def complete_broadcast_send(
        self,
        *,
        broadcast_id: str,
        seq: int,
        lease_id: str,
        outcome: Literal["sent", "failed"],
        now: datetime,
        error_code: str | None = None,
        wa_message_id: str | None = None,
    ) -> bool:
        bid = check.text(broadcast_id, "broadcast_id")
        index = check.integer(seq, "seq", low=0, high=MAX_BROADCAST_RECIPIENTS)
        lease = check.text(lease_id, "lease_id")
        if outcome not in ("sent", "failed"):
            raise PersistenceValidationError("invalid_record", "outcome must be sent or failed.")
        code = check.optional_text(error_code, "error_code", max_len=64)
        message_id = check.optional_text(wa_message_id, "wa_message_id")
        at = to_ms(now, field="now")
        return await self._call(
            "outbox_failed",
            ops.complete_broadcast_send,
            bid,
            index,
            lease,
            outcome,
            code,
            message_id,
            at,
            write=True,
        )

    async def retry_broadcast_send(
        self,
        *,
        broadcast_id: str,
        seq: int,
        lease_id: str,
        next_attempt_at: datetime,
        now: datetime,
    ) -> bool:
        bid = check.text(broadcast_id, "broadcast_id")
        index = check.integer(seq, "seq", low=0, high=MAX_BROADCAST_RECIPIENTS)
        lease = check.text(lease_id, "lease_id")
        due = to_ms(next_attempt_at, field="next_attempt_at")
        at = to_ms(now, field="now")
        return await self._call(
            "outbox_failed",
            ops.retry_broadcast_send, bid, index, lease, due, at,
            write=True,
        )

    async def delay_broadcast_pacing(self, *, phone_number_id: str, until: datetime) -> None:
        number = check.text(phone_number_id, "phone_number_id", max_len=check.PHONE_MAX)
        at = to_us(until, field="until")
        await self._call(
            "outbox_failed", ops.delay_broadcast_pacing, number, at, write=True
        )
