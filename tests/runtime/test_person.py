"""One queue per person through the runtime: the store queue's rows name the user for the
store to place them, a state a fold moved opens with the key it was sealed for, and the
memory queue links a phone and a BSUID named together (docs/handlers.md, "One queue per
person")."""

from __future__ import annotations

from typing import Any

import trio
import trio.testing

from svc.store import UserIdentityRecord
from svc.webhook import Update, normalize, queue_key, user_queue_keys

from .conftest import (
    PHONE_ID,
    Context,
    HeldStore,
    make_runtime,
    memory_queue,
    now,
    store_queue,
)

PHONE = "16505551234"
BSUID = "US.13491208655302741918"


def text(message_id: str, *, phone: str | None = PHONE, bsuid: str | None = None) -> Update:
    """A text message of the user named by ``phone`` and/or ``bsuid``."""
    sender: dict[str, str] = {}
    if phone is not None:
        sender["from"] = phone
    if bsuid is not None:
        sender["from_user_id"] = bsuid
    value: dict[str, Any] = {
        "messaging_product": "whatsapp",
        "metadata": {"display_phone_number": "15550783881", "phone_number_id": PHONE_ID},
        "messages": [
            {
                "id": message_id,
                "timestamp": "1749416383",
                "type": "text",
                "text": {"body": message_id},
                **sender,
            }
        ],
    }
    payload = {
        "object": "whatsapp_business_account",
        "entry": [{"id": "102290129340398", "changes": [{"field": "messages", "value": value}]}],
    }
    (update,) = normalize(payload).updates
    return update


async def record(runtime: Any, name: str, update: Update) -> None:
    """Record ``update`` as the HTTP layer does, with its user's identity sighting."""
    user = update.user  # type: ignore[attr-defined]
    sighting = UserIdentityRecord(
        user_id=user.user_id,
        parent_user_id=None,
        wa_id=user.wa_id,
        username=None,
        last_seen_at=now(),
    )
    queue = runtime.queue
    await queue.store.record_webhook_updates(
        event_key=name,
        event_hash="h",
        received_at=now(),
        update_keys=[name],
        identities=[sighting],
        inbox=queue.rows([(update, name)]),
    )
    runtime.accepted([(update, name)], {name})


def test_store_rows_name_the_user_for_the_store_to_place() -> None:
    update = text("wamid.R1", bsuid=BSUID)
    (row,) = store_queue(object()).rows([(update, "r1")])
    assert (row.user_id, row.wa_id) == (BSUID, PHONE)
    assert row.queue_key == queue_key(update)
    assert row.aliases == user_queue_keys(update) and len(row.aliases) == 2


async def test_a_state_a_fold_moved_opens_with_the_key_it_was_sealed_for(
    store: HeldStore, autojump_clock: trio.testing.MockClock
) -> None:
    """A BSUID-only user and a phone-only user, each with a state; a delivery naming both
    folds the phone's queue into the BSUID's, the phone's state (written last) surviving
    under the BSUID's key: the next run reads it, not an empty state."""
    seen: dict[str, Any] = {}

    async def handler(ctx: Context) -> None:
        seen[ctx.key] = ctx.state.get("n")
        ctx.state["n"] = {"b1": 100, "p1": 1}.get(ctx.key, 0)

    runtime = make_runtime(store_queue(store), handler)
    await record(runtime, "b1", text("wamid.B1", phone=None, bsuid=BSUID))
    await runtime.run_until_idle()
    await trio.sleep(1)
    await record(runtime, "p1", text("wamid.P1"))
    await runtime.run_until_idle()
    await record(runtime, "j1", text("wamid.J1", bsuid=BSUID))
    await runtime.run_until_idle()

    assert seen == {"b1": None, "p1": None, "j1": 1}
    assert await store.list_inbox_items() == []


async def test_memory_links_a_phone_and_a_bsuid_named_together(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Without a store: once one update names both, the phone's and the BSUID's updates run
    in one queue, one at a time in recorded order, with one state; what waited under the
    other key joins in recorded order."""
    log: list[str] = []
    release = trio.Event()

    async def handler(ctx: Context) -> None:
        log.append(f"start {ctx.key} n={ctx.state.get('n', 0)}")
        if ctx.key == "p1":
            await release.wait()
        ctx.state["n"] = ctx.state.get("n", 0) + 1
        log.append(f"end {ctx.key}")

    queue = memory_queue()
    runtime = make_runtime(queue, handler, concurrency=4)
    updates = {
        "p1": text("wamid.P1"),
        "b1": text("wamid.B1", phone=None, bsuid=BSUID),
        "p2": text("wamid.P2"),
        "j1": text("wamid.J1", bsuid=BSUID),
        "b2": text("wamid.B2", phone=None, bsuid=BSUID),
    }
    async with trio.open_nursery() as nursery:
        await nursery.start(runtime.run)
        assert runtime.accept([(updates["p1"], "p1")]) == ["p1"]
        await trio.sleep(1)  # p1 runs, held; b1 (its own queue yet) runs beside it
        assert runtime.accept([(updates["b1"], "b1")]) == ["b1"]
        await trio.sleep(1)
        assert runtime.accept([(updates[k], k) for k in ("p2", "j1", "b2")]) == ["p2", "j1", "b2"]
        await trio.sleep(1)
        assert log == ["start p1 n=0", "start b1 n=0", "end b1"]  # p2, j1, b2 wait for p1
        release.set()
        await runtime.wait_idle()
        await runtime.stop()

    assert log[3:] == [
        "end p1",
        "start p2 n=1",
        "end p2",
        "start j1 n=2",
        "end j1",
        "start b2 n=3",
        "end b2",
    ]
    assert queue.size == 0



async def test_memory_keeps_two_bsuids_on_one_phone_apart() -> None:
    """A number reassigned with a new BSUID: the phone's later updates follow the new
    BSUID, while the first user's queue keeps its own updates."""
    queue = memory_queue()
    first, second = "US.1000000000000000001", "US.2000000000000000002"
    updates = [
        text("wamid.A1", bsuid=first),
        text("wamid.A2", phone=None, bsuid=first),
        text("wamid.B1", bsuid=second),
        text("wamid.P1"),
    ]
    queue.accept([(update, f"k{i}") for i, update in enumerate(updates)], now=now())
    heads = await queue.claim(now=now(), limit=10, lease=5.0)
    assert [claim.update_key for claim in heads] == ["k0", "k2"]
    assert [[entry.update_key for entry in await queue.later(c)] for c in heads] == [
        ["k1"],
        ["k3"],
    ]
