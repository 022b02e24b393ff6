"""PostgreSQL group commit: batch isolation, durability, cancellation, set-based equivalence."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import timedelta
from typing import Any

import anyio
import psycopg
import pytest
import trio
import trio.testing
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from svc.store import (
    Claimed,
    MessageRecord,
    Pending,
    PersistenceError,
    PostgresStore,
    UpdatesRecorded,
    WebhookEventResult,
    _broadcasts,
)
from svc.store import _validate as check
from svc.store._kinds import DEFER, Kind
from svc.store.postgres import _writes
from svc.store.postgres._engine import PgSession as _PgSession
from svc.store.postgres._engine import _Operation

from ._reference import record_webhook_delivery
from ._strategies import (
    CLAIMS,
    COMPLETES,
    DELIVERY_ITEMS,
    MESSAGES,
    SEED,
    SINGLE,
    STATUS_EVENTS,
    TIMES,
    delivery,
    dump,
)
from .conftest import T0, Backend, _backend

pytestmark = pytest.mark.postgres

ADVISORY_NAMESPACE = 0x5C5C


async def _open(pg: Backend) -> PostgresStore:
    store = pg.open()
    assert isinstance(store, PostgresStore)
    await store.migrate()
    return store


def message(i: int, *, wa: str | None = None, status: str = "sent") -> MessageRecord:
    at = T0 + timedelta(milliseconds=i)
    return MessageRecord(
        row_id=f"r{i:04d}",
        wa_message_id=wa or f"wamid.{i}",
        direction="outbound",
        to_phone="15551234567",
        type="text",
        status=status,
        graph_message_id=wa or f"wamid.{i}",
        created_at=at,
        updated_at=at,
    )


class _Blocker:
    """An outside session holding one message id's advisory lock, so a batch on it waits."""

    def __init__(self, url: str, wa_message_id: str) -> None:
        self.conn = psycopg.connect(url, autocommit=True)
        self.conn.execute(
            "SELECT pg_advisory_lock(%s, hashtext(%s))", (ADVISORY_NAMESPACE, wa_message_id)
        )

    def waiters(self) -> int:
        # pg_locks is cluster-wide: count this database's waiters only (another database's
        # suite on the same server would otherwise end the wait before this batch waits).
        row = self.conn.execute(
            "SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
            " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
        ).fetchone()
        assert row is not None
        return int(row[0])

    def release(self) -> None:
        self.conn.execute("SELECT pg_advisory_unlock_all()")
        self.conn.close()


async def _until_a_batch_waits(blocker: _Blocker) -> None:
    """Poll (no sleeping) until a batch's statement waits on the blocker's lock."""
    for _ in range(2000):
        if await trio.to_thread.run_sync(blocker.waiters):
            return
    raise AssertionError("no batch ever waited on the advisory lock")


async def _queue_behind_a_blocked_batch(
    store: PostgresStore, url: str, nursery: trio.Nursery
) -> _Blocker:
    """Occupy the store's one batch slot with a call that waits on an outside lock."""
    blocker = _Blocker(url, "wamid.blocked")
    nursery.start_soon(
        lambda: store.append_message_status(
            wa_message_id="wamid.blocked", status="read", timestamp=T0
        )
    )
    await _until_a_batch_waits(blocker)
    return blocker


@pytest.mark.slow
async def test_one_failing_call_fails_alone_in_a_shared_batch(pg: Backend) -> None:
    store = await _open(pg)
    assert pg.url is not None
    claims: dict[int, object] = {}
    failure: list[PersistenceError] = []

    async def claim(i: int) -> None:
        claims[i] = await store.claim_service_request(
            idempotency_key=f"k{i}", request_hash="h", created_at=T0
        )

    async def broken() -> None:
        # A claim whose set-based form breaks the statement (bad time) and whose
        # single-call form fails too: the batch must fall back and fail only it.
        with pytest.raises(PersistenceError) as info:
            await store._write(
                Kind.CLAIM, ("k-broken", "h", "soon"), code="claim_failed", key="k-broken"
            )
        failure.append(info.value)

    async with trio.open_nursery() as nursery:
        blocker = await _queue_behind_a_blocked_batch(store, pg.url, nursery)
        for i in range(10):
            nursery.start_soon(claim, i)
        nursery.start_soon(broken)
        for i in range(10, 20):
            nursery.start_soon(claim, i)
        await trio.testing.wait_all_tasks_blocked()
        assert store._engine.queued == 21  # all queued together behind the blocked batch
        await trio.to_thread.run_sync(blocker.release)
    assert [exc.code for exc in failure] == ["claim_failed"]
    assert claims == {i: Claimed() for i in range(20)}
    assert pg.count("SELECT COUNT(*) FROM svc_service_requests") == 20
    assert pg.count("SELECT COUNT(*) FROM svc_message_status_events") == 1


async def test_an_exception_not_the_drivers_fails_only_its_call(
    pg: Backend, caplog: pytest.LogCaptureFixture
) -> None:
    """An exception that is not the driver's, raised by a set-based form in the batch's last
    phase, fails only its own call, as on SQLite: the phase reruns call by call, the claims
    of the earlier phase commit, and the connection goes back to the pool idle (the pool has
    nothing to roll back)."""
    store = await _open(pg)
    assert pg.url is not None
    outcomes: list[str] = []

    async def call(kind: Kind, args: Any, key: str) -> None:
        try:
            outcomes.append(
                type(await store._write(kind, args, code="claim_failed", key=key)).__name__
            )
        except PersistenceError as exc:
            outcomes.append(exc.code)
        except TypeError:
            outcomes.append("TypeError")

    with caplog.at_level(logging.DEBUG, logger="psycopg.pool"):
        async with trio.open_nursery() as nursery:
            blocker = await _queue_behind_a_blocked_batch(store, pg.url, nursery)
            for i in range(3):
                nursery.start_soon(call, Kind.CLAIM, (f"k{i}", "h", 1), f"k{i}")
            # A pause whose arguments are no row: its set-based form raises TypeError.
            nursery.start_soon(call, Kind.PAUSE, 5, "t")
            await trio.testing.wait_all_tasks_blocked()
            assert store._engine.queued == 4
            await trio.to_thread.run_sync(blocker.release)
    assert sorted(outcomes) == ["Claimed", "Claimed", "Claimed", "TypeError"]
    assert pg.count("SELECT COUNT(*) FROM svc_service_requests") == 3
    assert not [r for r in caplog.records if "rolling back" in r.getMessage()]
    assert (
        await store.claim_service_request(idempotency_key="k9", request_hash="h", created_at=T0)
        == Claimed()
    )
    await store.close()


@pytest.mark.slow
async def test_32_concurrent_writes_are_32_rows_visible_from_a_fresh_connection(
    pg: Backend,
) -> None:
    store = await _open(pg)
    returned: dict[int, MessageRecord] = {}
    recorded: list[object] = []

    async def write(i: int) -> None:
        returned[i] = await store.record_message(message(i))
        recorded.append(
            await store.record_webhook_event(event_key=f"e{i}", event_hash="h", received_at=T0)
        )

    async with trio.open_nursery() as nursery:
        for i in range(32):
            nursery.start_soon(write, i)
    assert returned == {i: message(i) for i in range(32)}
    assert recorded == [WebhookEventResult.RECORDED] * 32
    # Every acknowledged write is committed: a new connection sees all of them.
    rows = pg.raw_sql("SELECT row_id, wa_message_id, status FROM svc_messages ORDER BY row_id")
    assert rows == [(f"r{i:04d}", f"wamid.{i}", "sent") for i in range(32)]
    assert pg.count("SELECT COUNT(*) FROM svc_webhook_events") == 32


@pytest.mark.slow
async def test_fifty_claims_in_one_batch_give_exactly_one_claimed(pg: Backend) -> None:
    store = await _open(pg)
    assert pg.url is not None
    results: list[object] = []

    async def claim(digest: str) -> None:
        results.append(
            await store.claim_service_request(
                idempotency_key="same", request_hash=digest, created_at=T0
            )
        )

    async with trio.open_nursery() as nursery:
        blocker = await _queue_behind_a_blocked_batch(store, pg.url, nursery)
        for _ in range(50):
            nursery.start_soon(claim, "h")
        await trio.testing.wait_all_tasks_blocked()
        assert store._engine.queued == 50
        await trio.to_thread.run_sync(blocker.release)
    assert results.count(Claimed()) == 1 and results.count(Pending()) == 49


@pytest.mark.slow
async def test_cancelling_waiters_loses_and_duplicates_nothing_else(pg: Backend) -> None:
    store = await _open(pg)
    assert pg.url is not None
    returned: dict[int, MessageRecord] = {}
    queued_scope = trio.CancelScope()
    running_scope = trio.CancelScope()
    blocker = _Blocker(pg.url, "wamid.held")

    async def write(i: int) -> None:
        returned[i] = await store.record_message(message(i))

    async def cancelled_write(scope: trio.CancelScope, i: int, wa: str) -> None:
        with scope:
            await store.record_message(message(i, wa=wa))
            raise AssertionError("a cancelled write returned")

    async with trio.open_nursery() as nursery:
        # Batch 1: its lock statement waits on the outside lock (running on the server).
        nursery.start_soon(cancelled_write, running_scope, 100, "wamid.held")
        await _until_a_batch_waits(blocker)
        for i in range(10):
            nursery.start_soon(write, i)
        nursery.start_soon(cancelled_write, queued_scope, 101, "wamid.queued")
        for i in range(10, 20):
            nursery.start_soon(write, i)
        await trio.testing.wait_all_tasks_blocked()
        queued_scope.cancel()  # still in the queue: withdrawn
        await trio.testing.wait_all_tasks_blocked()
        assert store._engine.queued == 20
        running_scope.cancel()  # its statement is cancelled server-side
    blocker.release()
    assert queued_scope.cancelled_caught and running_scope.cancelled_caught
    assert returned == {i: message(i) for i in range(20)}
    rows = pg.raw_sql("SELECT row_id FROM svc_messages ORDER BY row_id")
    assert rows == [(f"r{i:04d}",) for i in range(20)]
    assert (await store.health()).ok


@pytest.mark.slow
async def test_cancelling_the_draining_caller_hands_the_queue_on(pg: Backend) -> None:
    store = await _open(pg)
    assert pg.url is not None
    blocker = _Blocker(pg.url, "wamid.held")
    returned: dict[int, MessageRecord] = {}
    scope = trio.CancelScope()
    started = trio.Event()

    async def drainer() -> None:
        with scope:
            started.set()
            await store.append_message_status(
                wa_message_id="wamid.held", status="read", timestamp=T0
            )

    async def write(i: int) -> None:
        returned[i] = await store.record_message(message(i))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(drainer)
        await started.wait()
        await _until_a_batch_waits(blocker)
        for i in range(5):
            nursery.start_soon(write, i)
        await trio.testing.wait_all_tasks_blocked()
        scope.cancel()
    blocker.release()
    assert scope.cancelled_caught
    assert returned == {i: message(i) for i in range(5)}
    assert pg.count("SELECT COUNT(*) FROM svc_message_status_events") == 0


async def test_a_key_repeated_in_a_batch_is_new_for_its_first_delivery_only(
    pg: Backend,
) -> None:
    """Deliveries queued together share one statement: a key recorded before is a duplicate
    everywhere, and a key two of them bring is new for the first one only (a phase runs its
    jobs in event-key order)."""
    store = await _open(pg)
    assert pg.url is not None
    at = T0 + timedelta(seconds=1)
    answers: dict[str, UpdatesRecorded] = {}

    async def deliver(name: str, keys: tuple[str, ...]) -> None:
        answers[name] = await store.record_webhook_updates(
            event_key=f"ev-{name}", event_hash="h", received_at=at, update_keys=keys
        )

    await deliver("d0", ("u0",))
    async with trio.open_nursery() as nursery:
        blocker = await _queue_behind_a_blocked_batch(store, pg.url, nursery)
        # Queued in this order behind the blocked batch, so they share the next one.
        for name, keys in (("c-again", ("u3", "u5")), ("a-copy", ("u0", "u4")), ("b-d3", ("u3",))):
            nursery.start_soon(deliver, name, keys)
            await trio.testing.wait_all_tasks_blocked()
        kinds = [job.kind.value for job in store._engine.writers.thread._queue]
        assert kinds == ["delivery"] * 3
        blocker.release()
    recorded = WebhookEventResult.RECORDED
    assert answers["a-copy"] == UpdatesRecorded(event=recorded, new=("u4",))
    assert answers["b-d3"] == UpdatesRecorded(event=recorded, new=("u3",))
    assert answers["c-again"] == UpdatesRecorded(event=recorded, new=("u5",))
    await store.close()


# --- the set-based forms equal the single-call operations run in order


SET_BASED: dict[str, Any] = {
    "message": _writes.record_messages,
    "status": _writes.append_statuses,
    "claim": _writes.claim_requests,
    "complete": _writes.complete_requests,
}
BATCH = st.one_of(
    st.tuples(st.just("message"), st.lists(MESSAGES, min_size=1, max_size=6)),
    st.tuples(st.just("status"), st.lists(STATUS_EVENTS, min_size=1, max_size=6)),
    st.tuples(st.just("claim"), st.lists(CLAIMS, min_size=1, max_size=6)),
    st.tuples(st.just("complete"), st.lists(COMPLETES, min_size=1, max_size=6)),
)


@pytest.fixture
def migrated_conn(request: pytest.FixtureRequest, tmp_path: object) -> Iterator[Any]:
    """A sync connection on a freshly migrated schema."""
    url = request.getfixturevalue("postgres_url")
    backend = _backend("postgres", request, tmp_path)  # type: ignore[arg-type]
    store = backend.open()

    async def migrate() -> None:
        try:
            await store.migrate()
        finally:
            await store.close()

    trio.run(migrate)
    with psycopg.connect(url, autocommit=True, options=f"-c search_path={backend.schema}") as conn:
        yield conn


def _run(conn: Any, seed: list[Any], steps: list[tuple[str, Any, bool]]) -> tuple[Any, Any]:
    """Apply ``seed`` call by call, then ``steps``; return results and tables (rolled back)."""
    session = _PgSession(conn, _Operation())
    with conn.transaction(force_rollback=True):
        for kind, args in seed:
            SINGLE[kind](session, args)
        results = []
        for kind, args, set_based in steps:
            if set_based:
                if kind in ("message", "status"):
                    ids = {str(a[0] if kind == "status" else a[1]) for a in args}
                    _writes.lock_message_ids(session, sorted(ids))
                results.append(SET_BASED[kind](session, args))
            else:
                results.append(SINGLE[kind](session, args))
        tables = dump(conn.execute)
    return results, tables


def _seeded_outcomes(
    conn: Any, seed: list[Any], *runs: Callable[[Any], list[object]]
) -> list[tuple[list[object], list[Any]]]:
    """Each run on the seeded tables in a transaction of its own (rolled back): its
    answers and the tables it left."""
    outcomes = []
    for run in runs:
        session = _PgSession(conn, _Operation())
        with conn.transaction(force_rollback=True):
            for kind, args in seed:
                SINGLE[kind](session, args)
            answers = run(session)
            outcomes.append((answers, dump(conn.execute)))
    return outcomes


@pytest.mark.slow
@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(seed=SEED, batch=BATCH)
@example(  # two new rows share a message id whose status events were logged before them
    seed=[("status", ("wamid.a", "delivered", 1000)), ("status", ("wamid.a", "read", 2000))],
    batch=(
        "message",
        [
            check.message(message(1, wa="wamid.a")),
            check.message(
                replace(message(2, wa="wamid.a"), direction="inbound", from_phone="15550001111")
            ),
        ],
    ),
)
def test_set_based_forms_equal_single_calls_in_commit_order(
    migrated_conn: Any, seed: list[Any], batch: tuple[str, list[Any]]
) -> None:
    kind, items = batch
    # The engine: the set-based form first, then each deferred call alone, in order.
    [answers], _ = _run(migrated_conn, seed, [(kind, items, True)])
    deferred = [args for args, answer in zip(items, answers, strict=True) if answer is DEFER]
    steps = [(kind, items, True)] + [(kind, args, False) for args in deferred]
    batched, batched_tables = _run(migrated_conn, seed, steps)
    settled = [answer for answer in batched[0] if answer is not DEFER] + batched[1:]
    # The same calls one at a time, in the order the engine settled them.
    order = [args for args, answer in zip(items, answers, strict=True) if answer is not DEFER]
    single, single_tables = _run(migrated_conn, seed, [(kind, a, False) for a in order + deferred])
    assert settled == single
    assert batched_tables == single_tables


def test_group_commit_runs_under_asyncio_too(request: pytest.FixtureRequest, tmp_path: Any) -> None:
    request.getfixturevalue("postgres_url")
    backend = _backend("postgres", request, tmp_path)

    async def main() -> list[MessageRecord]:
        store = backend.open()
        try:
            await store.migrate()
            results: list[MessageRecord] = []

            async def write(i: int) -> None:
                results.append(await store.record_message(message(i)))

            async with anyio.create_task_group() as tg:
                for i in range(32):
                    tg.start_soon(write, i)
            return results
        finally:
            await store.close()

    results = anyio.run(main, backend="asyncio")
    assert sorted(results, key=lambda m: m.row_id) == [message(i) for i in range(32)]
    assert backend.count("SELECT COUNT(*) FROM svc_messages") == 32


@pytest.mark.slow
@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(seed=SEED, deliveries=DELIVERY_ITEMS)
@example(  # a user's new number, then a sighting of the old number alone: a new row
    seed=[],
    deliveries=[
        delivery("ev-a", "h", 0, (), (), (("US.1", None, "1555", None, 0),), ("u1",)),
        delivery("ev-b", "h", 1000, (), (), (("US.1", None, "1556", None, 1000),), ("u2",)),
        delivery("ev-c", "h", 2000, (), (), ((None, None, "1555", "ann", 2000),), ("u3",)),
    ],
)
def test_set_based_deliveries_equal_deliveries_one_by_one(
    migrated_conn: Any, seed: list[Any], deliveries: list[Any]
) -> None:
    """A batch of deliveries (messages, then statuses, then events, across all of them)
    leaves the tables and answers of running each delivery call by call, in order.

    Row ids are fresh per message, as in real deliveries: the platform id pair is
    what repeats. (With a row id reused for another message id, the set-based
    insert settles like ``record_messages``: in some serial order, not this one.)
    """

    def batched(session: Any) -> list[object]:
        ids = {i for d in deliveries for i in d.lock_keys()}
        if ids:
            _writes.lock_message_ids(session, sorted(ids))
        answers = _writes.record_deliveries(session, deliveries)
        assert all(a is not DEFER for a in answers)  # no delivery falls back alone
        return answers

    def one_by_one(session: Any) -> list[object]:
        return [record_webhook_delivery(session, d) for d in deliveries]

    outcomes = _seeded_outcomes(migrated_conn, seed, batched, one_by_one)
    assert outcomes[0] == outcomes[1]
    assert all(isinstance(a, UpdatesRecorded) for a in outcomes[0][0])


BROADCAST_ROWS = st.lists(
    st.tuples(
        st.sampled_from([None, "t1", "t2"]),
        st.sampled_from([None, "en", "pt"]),
        st.sampled_from(["queued", "running", "paused", "done"]),
    ),
    max_size=6,
)
PAUSES = st.lists(
    st.tuples(st.sampled_from(["t1", "t2"]), st.sampled_from([None, "en", "pt"]), TIMES),
    min_size=1,
    max_size=5,
)


@pytest.mark.slow
@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(broadcasts=BROADCAST_ROWS, items=PAUSES)
def test_set_based_template_pauses_equal_pauses_one_by_one(
    migrated_conn: Any, broadcasts: list[Any], items: list[Any]
) -> None:
    """Group-committed ``pause_broadcasts_for_template`` calls: the answers and the broadcasts
    of running them one by one, in order (a broadcast two calls match counts for the first)."""

    def batched(session: Any) -> list[object]:
        return _writes.pause_templates(session, items)

    def one_by_one(session: Any) -> list[object]:
        return [_broadcasts.pause_broadcasts_for_template(session, *item) for item in items]

    outcomes = []
    for run in (batched, one_by_one):
        session = _PgSession(migrated_conn, _Operation())
        with migrated_conn.transaction(force_rollback=True):
            for i, (name, language, state) in enumerate(broadcasts):
                migrated_conn.execute(
                    "INSERT INTO svc_broadcasts (id, request_key, request_hash, phone_number_id,"
                    " template_name, template_language, state, total, created_at, updated_at)"
                    " VALUES (%s, %s, 'h', '1', %s, %s, %s, 1, 0, 0)",
                    (f"b{i}", f"k{i}", name, language, state),
                )
            answers = run(session)
            table = migrated_conn.execute(
                "SELECT id, state, updated_at FROM svc_broadcasts ORDER BY id"
            ).fetchall()
            outcomes.append((answers, table))
    assert outcomes[0] == outcomes[1]
