"""``mark_inbox_item_succeeded_and_claim``: a completion and the claim of its queue's next due
head in one transaction, on every adapter (with the state the completion wrote), another
queue's first due head with ``others_first``, and nothing after a completion it refused."""

from __future__ import annotations

from svc.store import InboxItem, UserStateWrite

from .conftest import T0, AnyStore
from .test_inbox import ms, record

LEASE = 60_000


async def succeed(
    store: AnyStore, item: InboxItem, *, at: int = 0, others_first: bool = False, **kw: object
) -> tuple[bool, InboxItem | None]:
    return await store.mark_inbox_item_succeeded_and_claim(
        id=item.id,
        lease_id=item.lease_id or "",
        now=T0 + ms(at),
        lease_ms=LEASE,
        others_first=others_first,
        **kw,  # type: ignore[arg-type]
    )


async def test_a_queue_drains_with_one_call_a_run_in_order_with_its_state(
    store: AnyStore,
) -> None:
    await record(store, *((f"a{n}", "a") for n in range(1, 6)))
    (item,) = await store.claim_inbox_items(now=T0, limit=10, lease_ms=LEASE)
    ran = [item.update_key]
    for n in range(1, 6):
        document = f"state {n}".encode()
        kept, following = await succeed(
            store,
            item,
            at=n,
            state=UserStateWrite(sealed=document, expires_at=T0 + ms(10**6)),
        )
        assert kept
        if following is None:
            break
        # Running under a fresh lease, one attempt, with the state its predecessor wrote.
        assert following.status == "running" and following.attempts == 1
        assert following.lease_expires_at == T0 + ms(n + LEASE)
        assert following.state is not None and following.state.sealed == document
        ran.append(following.update_key)
        item = following
    assert ran == ["a1", "a2", "a3", "a4", "a5"]
    assert await store.list_inbox_items() == []


async def test_it_takes_its_own_queues_next_head_or_another_queues_first(
    store: AnyStore,
) -> None:
    """The completed queue's next head, though another queue's was recorded earlier (that one
    is left to a claim); with ``others_first``, the first due head of another queue in id
    order, else its own."""
    await record(store, ("a1", "a"), ("b1", "b"), ("a2", "a"), ("a3", "a"), ("c1", "c"))
    (a1,) = await store.claim_inbox_items(now=T0, limit=1, lease_ms=LEASE)
    kept, a2 = await succeed(store, a1)
    assert kept and a2 is not None and a2.update_key == "a2"  # b1, recorded before, waits
    kept, b1 = await succeed(store, a2, others_first=True)
    assert kept and b1 is not None and b1.update_key == "b1"  # a3 waits: b's head first
    assert await succeed(store, b1) == (True, None)  # b is empty: c1 is left to a claim
    a3, c1 = await store.claim_inbox_items(now=T0, limit=5, lease_ms=LEASE)
    assert [a3.update_key, c1.update_key] == ["a3", "c1"]
    assert await succeed(store, a3, others_first=True) == (True, None)  # c1 runs already
    assert await store.list_inbox_items() == [await store.get_inbox_item(id=c1.id)]


async def test_a_head_not_due_or_held_is_not_taken(store: AnyStore) -> None:
    await record(store, ("a1", "a"), ("a2", "a"), ("b1", "b"))
    a1, b1 = await store.claim_inbox_items(now=T0, limit=2, lease_ms=LEASE)
    assert await store.mark_inbox_item_failed(
        id=b1.id, lease_id=b1.lease_id or "", now=T0, retry_delay_ms=500
    )
    kept, a2 = await succeed(store, a1, others_first=True)  # b1 retries later: a's own
    assert kept and a2 is not None and a2.update_key == "a2"
    assert await succeed(store, a2, at=499) == (True, None)
    (b1,) = await store.claim_inbox_items(now=T0 + ms(500), limit=5, lease_ms=LEASE)
    assert b1.update_key == "b1" and b1.attempts == 2


async def test_a_refused_completion_claims_nothing(store: AnyStore) -> None:
    await record(store, ("a1", "a"), ("b1", "b"), ("c1", "c"))
    (a1,) = await store.claim_inbox_items(now=T0, limit=1, lease_ms=LEASE)
    stale = await store.mark_inbox_item_succeeded_and_claim(
        id=a1.id, lease_id="not-the-lease", now=T0, lease_ms=LEASE
    )
    assert stale == (False, None)
    # Dropped while it runs: its completion is refused and only deletes it.
    assert await store.drop_inbox_item(id=a1.id, now=T0)
    assert await succeed(store, a1) == (False, None)
    items = {i.update_key: i.status for i in await store.list_inbox_items()}
    assert items == {"b1": "pending", "c1": "pending"}
