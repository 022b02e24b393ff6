"""The store's inbox as the runtime's queue: sealed rows shared by every worker and instance.

At ingest ``rows`` seals each handled update (``update_to_json``, encrypted by the
keyring's writing key, bound to its update key) into an ``InboxRow`` the store commits
with the delivery; a user's row also names the user's identifiers and own queue keys, so
the store places it in its person's queue (docs/handlers.md, "One queue per person"; the
queue key, the user and its keys come from one read of the update: ``queue_place``).
A claim reads its queue's sealed state with it; ``open`` and ``load_state`` open them (a
key no longer held makes a ``key_unavailable`` dead letter; an unreadable state starts
empty, logged once); a success seals the state under the current key, bound to its queue.
A state a fold of two queues moved is opened with the key it was sealed for
(``UserStateRecord.queue_key``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Final

from svc.crypto import InboxKeyring, InvalidCiphertextError, KeyUnavailableError
from svc.store import (
    DeadLetter,
    InboxItem,
    InboxRow,
    InboxStatistics,
    PersistenceStore,
    UserStateWrite,
)
from svc.webhook import Update, UserState, queue_place, update_from_json, update_to_json

from ._queue import Claim, Entry, StateChange

__all__ = ["StoreQueue", "state_aad"]

_PAGE: Final = 100
_OPENED_MAX: Final = 10_000


def state_aad(queue: str) -> bytes:
    """The associated data a user's state is sealed with: it opens only as that queue's."""
    return b"state:" + queue.encode("ascii")


def _lease_ms(lease: float) -> int:
    return max(1, round(lease * 1000))


def _claim(item: InboxItem) -> Claim:
    assert item.lease_id is not None
    return Claim(
        id=item.id,
        update_key=item.update_key,
        queue=item.queue_key,
        kind=item.kind,
        attempt=item.attempts,
        recorded_at=item.created_at,
        lease_id=item.lease_id,
        payload=item,
    )


class StoreQueue:
    """The ``RunQueue`` over a ``PersistenceStore``'s inbox, sealed by ``keyring``."""

    keeps_dead_letters = True

    def __init__(
        self,
        *,
        store: PersistenceStore,
        keyring: InboxKeyring,
        state_ttl: timedelta,
        dead_horizon: timedelta,
        logger: logging.Logger,
    ) -> None:
        self.store: Final = store
        self._keyring = keyring
        self._ttl = state_ttl
        self._horizon = dead_horizon
        self._logger = logger
        self._opened: dict[int, Update | None] = {}

    def rows(self, updates: Sequence[tuple[Update, str]]) -> list[InboxRow]:
        """The sealed inbox rows of ``(update, update key)`` pairs, in order, each key once;
        a user's row carries the user's BSUID and phone and the user's own queue keys, which
        the store resolves to the person's queue (``svc.webhook.queue_user``)."""
        rows: list[InboxRow] = []
        seen: set[str] = set()
        encrypt = self._keyring.encrypt
        for update, key in updates:
            if key in seen:
                continue
            seen.add(key)
            queue, user, aliases = queue_place(update)
            rows.append(
                InboxRow(
                    update_key=key,
                    queue_key=queue,
                    phone_number_id=update.phone_number_id,
                    kind=update.kind,
                    sealed=encrypt(update_to_json(update), key.encode("ascii")),
                    user_id=None if user is None else user.user_id,
                    wa_id=None if user is None else user.wa_id,
                    aliases=aliases,
                )
            )
        return rows

    async def claim(self, *, now: datetime, limit: int, lease: float) -> Sequence[Claim]:
        items = await self.store.claim_inbox_items(now=now, limit=limit, lease_ms=_lease_ms(lease))
        return [_claim(item) for item in items]

    async def renew(self, claim: Claim, *, until: datetime) -> bool:
        return await self.store.extend_inbox_lease(
            id=claim.id, lease_id=claim.lease_id, until=until
        )

    def open(self, claim: Claim) -> Update:
        item = claim.payload
        assert isinstance(item, InboxItem)
        try:
            data = self._keyring.decrypt(item.sealed, item.update_key.encode("ascii"))
        except KeyUnavailableError:
            raise DeadLetter("key_unavailable") from None
        except InvalidCiphertextError:
            raise DeadLetter("sealed_invalid") from None
        try:
            return update_from_json(data)
        except ValueError:
            raise DeadLetter("update_unreadable") from None

    def load_state(self, claim: Claim, *, now: datetime) -> UserState:
        item = claim.payload
        assert isinstance(item, InboxItem)
        record = item.state
        if record is None or record.expires_at <= now:
            return UserState()
        try:
            # The key it was sealed for: the claim's queue, or one a fold moved it from.
            sealed_for = state_aad(record.queue_key)
            return UserState.from_json(self._keyring.decrypt(record.sealed, sealed_for))
        except KeyUnavailableError:
            reason = "key_unavailable"
        except (InvalidCiphertextError, ValueError):
            reason = "state_invalid"
        self._logger.warning(
            "handler state unreadable reason=%s; the run starts from an empty state", reason
        )
        return UserState()

    async def later(self, claim: Claim) -> Sequence[Entry]:
        found: list[Entry] = []
        after = claim.id
        while True:
            rows = await self.store.list_inbox_queue(
                queue_key=claim.queue, after_id=after, limit=_PAGE
            )
            for row in rows:
                update = self._open_later(row)
                if update is not None:
                    found.append(
                        Entry(
                            id=row.id,
                            update_key=row.update_key,
                            kind=row.kind,
                            recorded_at=row.created_at,
                            update=update,
                        )
                    )
            if len(rows) < _PAGE:
                return found
            after = rows[-1].id

    def _open_later(self, row: InboxItem) -> Update | None:
        if row.id not in self._opened:
            if len(self._opened) >= _OPENED_MAX:
                self._opened.clear()
            try:
                data = self._keyring.decrypt(row.sealed, row.update_key.encode("ascii"))
                self._opened[row.id] = update_from_json(data)
            except (KeyUnavailableError, InvalidCiphertextError, ValueError):
                self._opened[row.id] = None
        return self._opened[row.id]

    async def note_taken(self, claim: Claim, ids: Sequence[int]) -> None:
        try:
            await self.store.mark_inbox_items_taken(id=claim.id, lease_id=claim.lease_id, taken=ids)
        except Exception as exc:  # noqa: BLE001 -- only what a listing shows; the run goes on
            self._logger.warning("inbox consumed mark failed error=%s", type(exc).__name__[:80])

    async def complete(
        self,
        claim: Claim,
        *,
        consumed: Sequence[int],
        state: StateChange | None,
        now: datetime,
    ) -> bool:
        return await self.store.mark_inbox_item_succeeded(
            id=claim.id,
            lease_id=claim.lease_id,
            consumed=consumed,
            state=self._completion(claim, consumed, state, now),
            now=now,
        )

    async def complete_and_continue(
        self,
        claim: Claim,
        *,
        consumed: Sequence[int],
        state: StateChange | None,
        now: datetime,
        lease: float,
        others_first: bool,
    ) -> tuple[bool, Claim | None]:
        kept, item = await self.store.mark_inbox_item_succeeded_and_claim(
            id=claim.id,
            lease_id=claim.lease_id,
            consumed=consumed,
            state=self._completion(claim, consumed, state, now),
            now=now,
            lease_ms=_lease_ms(lease),
            others_first=others_first,
        )
        return kept, None if item is None else _claim(item)

    def _completion(
        self, claim: Claim, consumed: Sequence[int], state: StateChange | None, now: datetime
    ) -> UserStateWrite | None:
        """The sealed state write of a success (None: leave it); forgets its opened items."""
        for item_id in (claim.id, *consumed):
            self._opened.pop(item_id, None)
        if state is None:
            return None
        if state.document is None:
            return UserStateWrite(sealed=None)
        sealed = self._keyring.encrypt(state.document, state_aad(claim.queue))
        return UserStateWrite(sealed=sealed, expires_at=now + self._ttl)

    async def fail(self, claim: Claim, *, now: datetime, delay: float, error: str) -> bool:
        return await self.store.mark_inbox_item_failed(
            id=claim.id,
            lease_id=claim.lease_id,
            now=now,
            retry_delay_ms=max(0, round(delay * 1000)),
            error=error,
        )

    async def bury(self, claim: Claim, *, now: datetime, error: str) -> bool:
        return await self.store.mark_inbox_item_dead(
            id=claim.id, lease_id=claim.lease_id, now=now, error=error
        )

    async def tidy(self, *, now: datetime) -> None:
        await self.store.delete_dead_inbox_items(older_than=now - self._horizon)
        await self.store.delete_expired_user_states(now=now)

    async def statistics(self) -> InboxStatistics:
        return await self.store.inbox_statistics()
