"""An in-memory outbox with the store's outbox semantics, for driving the worker loop
under trio's autojump clock (real stores wait on threads, which autojump would race)."""

from __future__ import annotations

import dataclasses
import uuid
from datetime import datetime, timedelta

from svc.store import OUTBOX_LEASE_MS, OutboxItem, OutboxStatus, PersistenceError


class FakeOutboxStore:
    backend = "fake"

    def __init__(self) -> None:
        self.items: dict[str, OutboxItem] = {}
        self.fail_claims = False

    def enqueue(self, *ids: str, at: datetime) -> None:
        for item_id in ids:
            self.items[item_id] = OutboxItem(
                id=item_id,
                payload_hash="p",
                status=OutboxStatus.PENDING,
                attempts=0,
                lease_id=None,
                lease_expires_at=None,
                next_attempt_at=at,
                created_at=at,
                updated_at=at,
            )

    async def claim_outbox_items(self, *, now: datetime, limit: int) -> list[OutboxItem]:
        if self.fail_claims:
            raise PersistenceError("outbox_failed", "fake outbox failure")
        claimed = []
        for item in sorted(self.items.values(), key=lambda i: (i.next_attempt_at, i.id)):
            if len(claimed) == limit:
                break
            if item.status is OutboxStatus.PENDING and item.next_attempt_at <= now:
                leased = dataclasses.replace(
                    item,
                    status=OutboxStatus.PROCESSING,
                    lease_id=uuid.uuid4().hex,
                    lease_expires_at=now + timedelta(milliseconds=OUTBOX_LEASE_MS),
                    attempts=item.attempts + 1,
                )
                self.items[item.id] = leased
                claimed.append(leased)
        return claimed

    async def mark_outbox_item_succeeded(self, *, id: str, lease_id: str, now: datetime) -> bool:
        item = self.items[id]
        if item.lease_id != lease_id or item.status is not OutboxStatus.PROCESSING:
            return False
        self.items[id] = dataclasses.replace(item, status=OutboxStatus.SUCCEEDED)
        return True

    async def mark_outbox_item_failed(
        self,
        *,
        id: str,
        lease_id: str,
        now: datetime,
        retry_delay_ms: int,
        error: str | None = None,
    ) -> bool:
        item = self.items[id]
        if item.lease_id != lease_id or item.status is not OutboxStatus.PROCESSING:
            return False
        self.items[id] = dataclasses.replace(
            item,
            status=OutboxStatus.PENDING,
            lease_id=None,
            next_attempt_at=now + timedelta(milliseconds=retry_delay_ms),
            last_error=error,
        )
        return True

    async def mark_outbox_item_dead(
        self, *, id: str, lease_id: str, now: datetime, error: str | None = None
    ) -> bool:
        item = self.items[id]
        if item.lease_id != lease_id or item.status is not OutboxStatus.PROCESSING:
            return False
        self.items[id] = dataclasses.replace(
            item, status=OutboxStatus.DEAD, lease_id=None, last_error=error
        )
        return True

    async def count_outbox_items(self, *, status: OutboxStatus | str) -> int:
        return sum(1 for i in self.items.values() if i.status == status)

    async def count_outbox_pending(self) -> int:
        return sum(1 for i in self.items.values() if i.status is OutboxStatus.PENDING)
