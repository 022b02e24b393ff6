"""The conversation contract on every adapter: a queue's later items, lease extension, and
the wide completion (the head, the later items a run consumed and the user's state, all
or nothing, fenced by the head's lease); the state's expiry and pruning."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

import pytest

from svc.store import (
    MAX_USER_STATE_BYTES,
    InboxItem,
    InboxStatus,
    PersistenceError,
    PersistenceValidationError,
    UserStateRecord,
    UserStateWrite,
)

from .conftest import POSTGRES_KINDS, T0, AnyStore, Backend
from .test_inbox import LEASE, by_key, claim, claimed, ms, record

DAY = timedelta(days=1)


async def head(store: AnyStore, queue: str, at: int = 0) -> InboxItem:
    """The claimed head of ``queue`` (others claimed alongside are left leased)."""
    (item,) = [i for i in await claimed(store, at) if i.queue_key == queue]
    assert item.lease_id is not None
    return item


async def complete(
    store: AnyStore,
    item: InboxItem,
    *,
    consumed: Sequence[int] = (),
    state: UserStateWrite | None = None,
    at: int = 0,
) -> bool:
    assert item.lease_id is not None
    return await store.mark_inbox_item_succeeded(
        id=item.id, lease_id=item.lease_id, consumed=consumed, state=state, now=T0 + ms(at)
    )


async def with_state(store: AnyStore, queue: str, sealed: bytes, *, until: timedelta = DAY) -> None:
    """``queue`` holds ``sealed`` until ``T0 + until`` (one run of its own completed)."""
    await record(store, (f"seed-{queue}-{sealed.hex()}", queue))
    assert await complete(
        store, await head(store, queue), state=UserStateWrite(sealed=sealed, expires_at=T0 + until)
    )


async def test_a_queue_lists_its_later_items_not_dead_in_order(store: AnyStore) -> None:
    await record(store, ("a1", "qa"), ("b1", "qb"), ("a2", "qa"), ("a3", "qa"), ("a4", "qa"))
    ids = {key: item.id for key, item in (await by_key(store)).items()}
    a1 = await head(store, "qa")
    assert await store.mark_inbox_item_dead(id=a1.id, lease_id=a1.lease_id or "", now=T0)
    a2 = await head(store, "qa")
    later = await store.list_inbox_queue(queue_key="qa", after_id=a2.id)
    assert [i.update_key for i in later] == ["a3", "a4"]
    assert later[0].sealed == b"a3" and later[0].status is InboxStatus.PENDING
    everything = await store.list_inbox_queue(queue_key="qa", after_id=0)
    assert [i.update_key for i in everything] == ["a2", "a3", "a4"]  # the dead a1 is not
    limited = await store.list_inbox_queue(queue_key="qa", after_id=0, limit=1)
    assert [i.update_key for i in limited] == ["a2"]
    assert await store.list_inbox_queue(queue_key="qa", after_id=ids["a4"]) == []
    assert await store.list_inbox_queue(queue_key="qz", after_id=0) == []


async def test_an_extended_lease_holds_the_item_and_a_stale_one_extends_nothing(
    store: AnyStore,
) -> None:
    await record(store, ("a1", "qa"), ("a2", "qa"))
    (first,) = await claimed(store, lease=1000)
    assert first.lease_id is not None
    assert await store.extend_inbox_lease(id=first.id, lease_id=first.lease_id, until=T0 + ms(5000))
    assert (await by_key(store))["a1"].lease_expires_at == T0 + ms(5000)
    assert await claim(store, at=4999) == []
    (second,) = await claimed(store, at=5000, lease=1000)
    assert second.id == first.id and second.lease_id != first.lease_id
    assert not await store.extend_inbox_lease(
        id=first.id, lease_id=first.lease_id, until=T0 + ms(60_000)
    )
    assert (await by_key(store))["a1"].lease_expires_at == T0 + ms(6000)
    assert not await store.extend_inbox_lease(id=10**9, lease_id="x", until=T0)


async def test_the_completion_deletes_the_consumed_items_and_writes_the_state(
    store: AnyStore,
) -> None:
    await record(store, ("a1", "qa"), ("a2", "qa"), ("b1", "qb"), ("a3", "qa"), ("a4", "qa"))
    ids = {key: item.id for key, item in (await by_key(store)).items()}
    a1 = await head(store, "qa")
    assert await store.get_user_state(queue_key="qa", now=T0) is None
    write = UserStateWrite(sealed=b"state-1", expires_at=T0 + DAY)
    assert await complete(store, a1, consumed=[ids["a2"], ids["a4"]], state=write, at=7)
    assert sorted(await by_key(store)) == ["a3", "b1"]
    assert await store.get_user_state(queue_key="qa", now=T0) == UserStateRecord(
        queue_key="qa", sealed=b"state-1", expires_at=T0 + DAY, updated_at=T0 + ms(7)
    )
    assert await store.get_user_state(queue_key="qb", now=T0) is None
    assert await claim(store, at=10) == ["a3"]  # b1 is still leased
    # The next run replaces the state; one after it deletes it.
    a3 = (await by_key(store))["a3"]
    again = UserStateWrite(sealed=b"state-2", expires_at=T0 + 2 * DAY)
    assert await complete(store, a3, state=again, at=20)
    stored = await store.get_user_state(queue_key="qa", now=T0)
    assert stored is not None
    assert (stored.sealed, stored.expires_at, stored.updated_at) == (
        b"state-2",
        T0 + 2 * DAY,
        T0 + ms(20),
    )
    await record(store, ("a5", "qa"))
    assert await complete(store, await head(store, "qa", at=30), state=UserStateWrite(sealed=None))
    assert await store.get_user_state(queue_key="qa", now=T0) is None


async def test_a_completion_without_consumed_or_state_leaves_them_alone(store: AnyStore) -> None:
    await with_state(store, "qa", b"kept")
    await record(store, ("a1", "qa"), ("a2", "qa"))
    assert await complete(store, await head(store, "qa"))
    assert sorted(await by_key(store)) == ["a2"]
    kept = await store.get_user_state(queue_key="qa", now=T0)
    assert kept is not None and kept.sealed == b"kept"


async def test_consuming_an_item_of_another_queue_is_refused_and_changes_nothing(
    store: AnyStore,
) -> None:
    await with_state(store, "qa", b"before")
    await record(store, ("a1", "qa"), ("a2", "qa"), ("b1", "qb"))
    ids = {key: item.id for key, item in (await by_key(store)).items()}
    a1 = await head(store, "qa")
    write = UserStateWrite(sealed=b"after", expires_at=T0 + DAY)
    with pytest.raises(PersistenceValidationError) as refused:
        await complete(store, a1, consumed=[ids["a2"], ids["b1"]], state=write)
    assert refused.value.code == "invalid_options"
    left = await by_key(store)
    assert sorted(left) == ["a1", "a2", "b1"]
    assert (left["a1"].status, left["a1"].lease_id) == (InboxStatus.RUNNING, a1.lease_id)
    kept = await store.get_user_state(queue_key="qa", now=T0)
    assert kept is not None and kept.sealed == b"before"
    # An id at or before the head is refused before any I/O; the head then completes.
    with pytest.raises(PersistenceValidationError):
        await complete(store, a1, consumed=[a1.id])
    assert await complete(store, a1, consumed=[ids["a2"], 10**12], state=write)
    assert sorted(await by_key(store)) == ["b1"]


async def test_a_stale_lease_completes_nothing(store: AnyStore) -> None:
    await record(store, ("a1", "qa"), ("a2", "qa"))
    ids = {key: item.id for key, item in (await by_key(store)).items()}
    (first,) = await claimed(store, lease=1000)
    (second,) = await claimed(store, at=1000, lease=1000)
    write = UserStateWrite(sealed=b"stale", expires_at=T0 + DAY)
    assert not await complete(store, first, consumed=[ids["a2"]], state=write)
    left = await by_key(store)
    assert sorted(left) == ["a1", "a2"]
    assert left["a1"].lease_id == second.lease_id
    assert await store.get_user_state(queue_key="qa", now=T0) is None


async def test_a_failure_at_the_state_write_leaves_head_consumed_and_state_untouched(
    persistent_backend: Backend,
) -> None:
    """The state is written last: a database that refuses it (a trigger here) rolls the
    deleted head and consumed items back with it."""
    store = persistent_backend.open()
    await store.migrate()
    await with_state(store, "qa", b"before")
    await record(store, ("a1", "qa"), ("a2", "qa"), ("a3", "qa"))
    ids = {key: item.id for key, item in (await by_key(store)).items()}
    if persistent_backend.kind in POSTGRES_KINDS:
        persistent_backend.raw_sql(
            "CREATE FUNCTION svc_test_refuse() RETURNS trigger LANGUAGE plpgsql AS"
            " $$BEGIN RAISE EXCEPTION 'refused'; END$$"
        )
        persistent_backend.raw_sql(
            "CREATE TRIGGER svc_test_refuse BEFORE INSERT OR UPDATE ON svc_user_state"
            " FOR EACH ROW EXECUTE FUNCTION svc_test_refuse()"
        )
    else:
        for event in ("INSERT", "UPDATE"):
            persistent_backend.raw_sql(
                f"CREATE TRIGGER svc_test_refuse_{event.lower()} BEFORE {event}"
                " ON svc_user_state BEGIN SELECT RAISE(ABORT, 'refused'); END"
            )
    a1 = await head(store, "qa")
    write = UserStateWrite(sealed=b"after", expires_at=T0 + DAY)
    with pytest.raises(PersistenceError):
        await complete(store, a1, consumed=[ids["a2"], ids["a3"]], state=write)
    left = await by_key(store)
    assert sorted(left) == ["a1", "a2", "a3"]
    assert (left["a1"].status, left["a1"].lease_id) == (InboxStatus.RUNNING, a1.lease_id)
    kept = await store.get_user_state(queue_key="qa", now=T0)
    assert kept is not None and kept.sealed == b"before"
    # A delete is no insert: the same completion deleting the state goes through.
    assert await complete(store, a1, consumed=[ids["a2"]], state=UserStateWrite(sealed=None))
    assert sorted(await by_key(store)) == ["a3"]
    assert await store.get_user_state(queue_key="qa", now=T0) is None


async def test_an_expired_state_reads_as_none_and_is_pruned(store: AnyStore) -> None:
    await with_state(store, "qa", b"short", until=ms(1000))
    await with_state(store, "qb", b"shorter", until=ms(500))
    await with_state(store, "qc", b"long", until=DAY)
    assert await store.get_user_state(queue_key="qa", now=T0 + ms(999)) is not None
    assert await store.get_user_state(queue_key="qa", now=T0 + ms(1000)) is None
    assert await store.delete_expired_user_states(now=T0 + ms(499)) == 0
    assert await store.delete_expired_user_states(now=T0 + ms(1000), batch_size=1) == 2
    assert await store.get_user_state(queue_key="qa", now=T0) is None
    assert await store.get_user_state(queue_key="qb", now=T0) is None
    assert await store.get_user_state(queue_key="qc", now=T0) is not None
    # A new write brings an expired queue's state back.
    await with_state(store, "qa", b"again", until=DAY)
    renewed = await store.get_user_state(queue_key="qa", now=T0 + ms(5000))
    assert renewed is not None and renewed.sealed == b"again"


async def test_a_claimed_item_carries_its_queues_current_unexpired_state(
    store: AnyStore,
) -> None:
    await with_state(store, "qa", b"first", until=ms(1000))
    await with_state(store, "qb", b"other", until=ms(500))
    await record(store, ("a1", "qa"), ("a2", "qa"), ("b1", "qb"), ("c1", "qc"))
    heads = {i.update_key: i for i in await claimed(store, at=499)}
    assert sorted(heads) == ["a1", "b1", "c1"]
    assert heads["a1"].state == UserStateRecord(
        queue_key="qa", sealed=b"first", expires_at=T0 + ms(1000), updated_at=T0
    )
    assert heads["b1"].state is not None and heads["b1"].state.sealed == b"other"
    assert heads["c1"].state is None  # no state
    assert "first" not in repr(heads["a1"])
    # The state a run writes is the one its queue's next head is claimed with.
    write = UserStateWrite(sealed=b"second", expires_at=T0 + ms(2000))
    assert await complete(store, heads["a1"], state=write, at=600)
    assert await complete(store, heads["b1"], at=600)
    (a2,) = await claimed(store, at=600)
    assert a2.update_key == "a2" and a2.state is not None and a2.state.sealed == b"second"
    # Expired at the claim: none (qb's state expired at 500; a2's rerun after 2,000).
    await record(store, ("b2", "qb"))
    (b2,) = await claimed(store, at=700)
    assert b2.update_key == "b2" and b2.state is None
    (rerun,) = [i for i in await claimed(store, at=2000 + LEASE) if i.update_key == "a2"]
    assert rerun.state is None
    # Items read otherwise carry no state.
    assert all(i.state is None for i in (await by_key(store)).values())


@pytest.mark.parametrize(
    ("state", "extra"),
    [
        (UserStateWrite(sealed=b"x", expires_at=T0 + DAY), {"now": None}),
        (UserStateWrite(sealed=b"x"), {}),
        (UserStateWrite(sealed=b"", expires_at=T0 + DAY), {}),
        (UserStateWrite(sealed=b"x" * (MAX_USER_STATE_BYTES + 1), expires_at=T0 + DAY), {}),
        (UserStateWrite(sealed=b"x", expires_at=(T0 + DAY).replace(tzinfo=None)), {}),
        ({"sealed": b"x"}, {}),
        (None, {"consumed": [True]}),
        (None, {"consumed": "12"}),
    ],
)
async def test_invalid_completions_are_refused_before_any_change(
    store: AnyStore, state: object, extra: dict[str, object]
) -> None:
    await record(store, ("a1", "qa"))
    a1 = await head(store, "qa")
    call = {"id": a1.id, "lease_id": a1.lease_id, "state": state, "now": T0} | extra
    with pytest.raises(PersistenceValidationError):
        await store.mark_inbox_item_succeeded(**call)  # type: ignore[arg-type]
    assert (await by_key(store))["a1"].status is InboxStatus.RUNNING
    assert await store.get_user_state(queue_key="qa", now=T0) is None


async def test_invalid_queue_reads_are_refused(store: AnyStore) -> None:
    with pytest.raises(PersistenceValidationError):
        await store.list_inbox_queue(queue_key="", after_id=0)
    with pytest.raises(PersistenceValidationError):
        await store.list_inbox_queue(queue_key="qa", after_id=-1)
    with pytest.raises(PersistenceValidationError):
        await store.list_inbox_queue(queue_key="qa", after_id=0, limit=0)
    with pytest.raises(PersistenceValidationError):
        await store.get_user_state(queue_key="qa", now=T0.replace(tzinfo=None))
    with pytest.raises(PersistenceValidationError):
        await store.extend_inbox_lease(id=0, lease_id="x", until=T0)
    with pytest.raises(PersistenceValidationError):
        await store.delete_expired_user_states(now=T0, batch_size=0)


async def test_the_state_is_never_in_a_repr(store: AnyStore) -> None:
    await with_state(store, "qa", b"secret-state")
    stored = await store.get_user_state(queue_key="qa", now=T0)
    assert "secret-state" not in repr(stored)
    assert "secret-state" not in repr(UserStateWrite(sealed=b"secret-state", expires_at=T0))
