"""One queue per person: a user's inbox rows and state follow the identity map, whichever
identifier each delivery named them by (every adapter)."""

from __future__ import annotations

from datetime import datetime, timedelta

from svc.store import InboxRow, UserIdentityRecord, UserStateWrite

from .conftest import T0, AnyStore

NUMBER = "106540352242922"
PHONE = "16505551234"
BSUID = "US.13491208655302741918"
OTHER_PHONE = "16505559999"
LEASE = 60_000


def own_key(value: str) -> str:
    """The key a row brings (the update's own queue, as ``svc.webhook.queue_key`` makes it)."""
    return f"own:{value}"


def row(
    key: str, *, user_id: str | None = None, wa_id: str | None = None, own: str | None = None
) -> InboxRow:
    aliases = tuple(own_key(v) for v in (user_id, wa_id) if v is not None)
    return InboxRow(
        update_key=key,
        queue_key=own or own_key(user_id or wa_id or "group"),
        phone_number_id=NUMBER,
        kind="message",
        sealed=b"\x00" + key.encode(),
        user_id=user_id,
        wa_id=wa_id,
        aliases=aliases,
    )


def seen(user_id: str | None, wa_id: str | None, at: datetime) -> UserIdentityRecord:
    return UserIdentityRecord(
        user_id=user_id, parent_user_id=None, wa_id=wa_id, username=None, last_seen_at=at
    )


async def deliver(
    store: AnyStore,
    name: str,
    rows: list[InboxRow],
    at: datetime,
    identities: tuple[UserIdentityRecord, ...] | None = None,
) -> None:
    """A delivery of ``rows``, with the sightings of their users (unless given)."""
    if identities is None:
        identities = tuple(
            seen(r.user_id, r.wa_id, at) for r in rows if r.user_id is not None or r.wa_id
        )
    keys = [r.update_key for r in rows]
    await store.record_webhook_updates(
        event_key=name,
        event_hash="h",
        received_at=at,
        update_keys=keys,
        identities=identities,
        inbox=rows,
    )


async def queues(store: AnyStore) -> dict[str, str]:
    """Each row's queue key, by update key."""
    found = await store._call(
        "query_failed",
        lambda s: s.fetchall("SELECT update_key, queue_key FROM svc_inbox ORDER BY id"),
        write=False,
    )
    return {str(k): str(q) for k, q in found}


async def run_heads(store: AnyStore, at: datetime) -> list[list[str]]:
    """Claim and complete the heads until none is left: the keys claimed together, each round."""
    rounds: list[list[str]] = []
    for step in range(20):
        now = at + timedelta(seconds=step)
        claimed = await store.claim_inbox_items(now=now, limit=10, lease_ms=LEASE)
        if not claimed:
            return rounds
        rounds.append([item.update_key for item in claimed])
        for item in claimed:
            assert item.lease_id is not None
            assert await store.mark_inbox_item_succeeded(id=item.id, lease_id=item.lease_id)
    raise AssertionError("the inbox never drained")


async def write_state(store: AnyStore, key: str, sealed: bytes, at: datetime) -> str:
    """Run the row ``key`` (it must be its queue's head) and write its queue's state at ``at``;
    the queue key."""
    claimed = await store.claim_inbox_items(now=at, limit=10, lease_ms=LEASE)
    (item,) = [item for item in claimed if item.update_key == key]
    assert item.lease_id is not None
    done = await store.mark_inbox_item_succeeded(
        id=item.id,
        lease_id=item.lease_id,
        state=UserStateWrite(sealed=sealed, expires_at=at + timedelta(days=30)),
        now=at,
    )
    assert done
    for other in claimed:  # leave the other heads as they were (their lease runs out)
        assert other.lease_id is not None
        if other.update_key != key:
            await store.mark_inbox_item_failed(
                id=other.id, lease_id=other.lease_id, now=at, retry_delay_ms=0
            )
    return item.queue_key


async def test_a_phone_then_phone_and_bsuid_share_one_queue(store: AnyStore) -> None:
    await deliver(store, "d1", [row("p1", wa_id=PHONE)], T0)
    await deliver(store, "d2", [row("b1", user_id=BSUID, wa_id=PHONE)], T0 + timedelta(seconds=1))
    found = await queues(store)
    assert found["p1"] == found["b1"]
    assert found["p1"] not in (own_key(PHONE), own_key(BSUID))  # the person's, not the row's
    # One head at a time, in recorded order.
    assert await run_heads(store, T0 + timedelta(seconds=2)) == [["p1"], ["b1"]]


async def test_queues_of_one_person_fold_when_a_sighting_links_them(store: AnyStore) -> None:
    t = [T0 + timedelta(seconds=i) for i in range(10)]
    await deliver(store, "d1", [row("p1", wa_id=PHONE), row("p2", wa_id=PHONE)], t[0])
    await deliver(store, "d2", [row("b1", user_id=BSUID), row("b2", user_id=BSUID)], t[1])
    before = await queues(store)
    assert before["p1"] == before["p2"] != before["b1"] == before["b2"]  # unknown as one yet
    bsuid_queue = await write_state(store, "b1", b"state of the bsuid queue", t[2])
    phone_queue = await write_state(store, "p1", b"state of the phone queue", t[3])  # last
    await deliver(store, "d3", [row("l1", user_id=BSUID, wa_id=PHONE)], t[4])
    after = await queues(store)
    assert after == {"p2": bsuid_queue, "b2": bsuid_queue, "l1": bsuid_queue}
    # The phone queue's state was written last: it survives, under the person's queue,
    # naming the key it was sealed under; nothing is left under the old key.
    state = await store.get_user_state(queue_key=bsuid_queue, now=t[5])
    assert state is not None
    assert state.sealed == b"state of the phone queue"
    assert state.queue_key == phone_queue
    assert await store.get_user_state(queue_key=phone_queue, now=t[5]) is None
    # The rows run one at a time, in recorded order, across both identifiers.
    assert await run_heads(store, t[5]) == [["p2"], ["b2"], ["l1"]]
    # A later phone-only update joins the person too.
    await deliver(store, "d4", [row("p3", wa_id=PHONE)], t[6])
    assert (await queues(store))["p3"] == bsuid_queue


async def test_the_surviving_queue_keeps_its_state_when_it_was_written_last(
    store: AnyStore,
) -> None:
    t = [T0 + timedelta(seconds=i) for i in range(6)]
    await deliver(store, "d1", [row("p1", wa_id=PHONE)], t[0])
    await deliver(store, "d2", [row("b1", user_id=BSUID)], t[1])
    await write_state(store, "p1", b"phone", t[2])
    bsuid_queue = await write_state(store, "b1", b"bsuid", t[3])  # last
    await deliver(store, "d3", [row("l1", user_id=BSUID, wa_id=PHONE)], t[4])
    state = await store.get_user_state(queue_key=bsuid_queue, now=t[5])
    assert state is not None
    assert (state.sealed, state.queue_key) == (b"bsuid", bsuid_queue)


async def test_a_run_in_flight_still_finds_its_queue_after_a_fold(store: AnyStore) -> None:
    t = [T0 + timedelta(seconds=i) for i in range(6)]
    await deliver(store, "d1", [row("p1", wa_id=PHONE)], t[0])
    await deliver(store, "d2", [row("b1", user_id=BSUID)], t[1])
    (head,) = [
        item
        for item in await store.claim_inbox_items(now=t[2], limit=10, lease_ms=LEASE)
        if item.update_key == "p1"
    ]
    await deliver(store, "d3", [row("l1", user_id=BSUID, wa_id=PHONE)], t[3])
    # The run holds the phone queue's key: its waits read the person's queue.
    later = await store.list_inbox_queue(queue_key=head.queue_key, after_id=head.id)
    assert [item.update_key for item in later] == ["b1", "l1"]
    # Its completion writes the state under the person's queue, with the key it sealed under.
    assert head.lease_id is not None
    assert await store.mark_inbox_item_succeeded(
        id=head.id,
        lease_id=head.lease_id,
        state=UserStateWrite(sealed=b"s", expires_at=t[5] + timedelta(days=1)),
        now=t[4],
    )
    person = (await queues(store))["l1"]
    state = await store.get_user_state(queue_key=person, now=t[5])
    assert state is not None and state.queue_key == head.queue_key


async def test_another_user_keeps_another_queue(store: AnyStore) -> None:
    await deliver(store, "d1", [row("a1", user_id=BSUID, wa_id=PHONE)], T0)
    await deliver(store, "d2", [row("o1", wa_id=OTHER_PHONE)], T0)
    await deliver(store, "d3", [row("a2", wa_id=PHONE), row("o2", wa_id=OTHER_PHONE)], T0)
    found = await queues(store)
    assert found["a1"] == found["a2"] != found["o1"] == found["o2"]
    assert await run_heads(store, T0) == [["a1", "o1"], ["a2", "o2"]]


async def test_group_and_number_updates_keep_their_keys(store: AnyStore) -> None:
    group = row("g1", own="group-queue")  # a group message: no user queue
    account = row("n1", own="number-queue")
    await deliver(store, "d1", [group, account], T0, identities=(seen(BSUID, PHONE, T0),))
    assert await queues(store) == {"g1": "group-queue", "n1": "number-queue"}


async def test_without_a_sighting_a_row_keeps_its_own_key_until_the_map_knows_the_user(
    store: AnyStore,
) -> None:
    # The projection was left out (no sighting) and the map does not know the user.
    await deliver(store, "d1", [row("p1", wa_id=PHONE)], T0, identities=())
    assert await queues(store) == {"p1": own_key(PHONE)}
    # Once a delivery names the user with a sighting, the row's own queue folds into the
    # person's, ahead of the new row.
    await deliver(store, "d2", [row("b1", user_id=BSUID, wa_id=PHONE)], T0)
    found = await queues(store)
    assert found["p1"] == found["b1"] != own_key(PHONE)
    assert await run_heads(store, T0) == [["p1"], ["b1"]]
    # And a row without a sighting of a user the map knows goes to the person's queue.
    await deliver(store, "d3", [row("b2", user_id=BSUID)], T0, identities=())
    await deliver(store, "d4", [row("p2", wa_id=PHONE)], T0, identities=())
    found = await queues(store)
    assert found["b2"] == found["p2"]


async def test_a_new_bsuid_joins_the_same_queue(store: AnyStore) -> None:
    new_bsuid = "US.99999999999999999999"
    await deliver(store, "d1", [row("b1", user_id=BSUID, wa_id=PHONE)], T0)
    # The new BSUID was seen first on its own (its row, its queue), then the change links it.
    await deliver(store, "d2", [row("n1", user_id=new_bsuid)], T0 + timedelta(seconds=1))
    await store.record_identity_change(user=BSUID, new_user_id=new_bsuid, at=T0)
    found = await queues(store)
    assert found["b1"] == found["n1"]
    assert await run_heads(store, T0 + timedelta(seconds=2)) == [["b1"], ["n1"]]
    # The change in place (no row of the new BSUID yet) keeps the queue too.
    newer = "US.88888888888888888888"
    await deliver(store, "d3", [row("n2", user_id=new_bsuid)], T0)
    await store.record_identity_change(user=new_bsuid, new_user_id=newer, at=T0)
    await deliver(store, "d4", [row("n3", user_id=newer)], T0)
    found = await queues(store)
    assert found["n2"] == found["n3"]
