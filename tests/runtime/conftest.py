"""Runtime fixtures: a facade and a context of the tests' own, the two queues, and stores
whose calls hold trio's autojump clock still.

Every test runs under trio's ``autojump_clock`` with the runtime's ``now=TrioClock(...)``:
one virtual clock drives deadlines, leases, due times and record times, and nothing sleeps
in real time. A real store runs its calls in threads, during which an autojump clock would
jump as if every task were idle; ``HeldStore`` holds the clock still while one of its calls
is in flight, so time passes only when every task truly waits.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from prometheus_client import CollectorRegistry

from svc import testing
from svc.crypto import InboxKeyring
from svc.runtime import (
    Conversation,
    HandlerOptions,
    HandlerRuntime,
    MemoryQueue,
    RunEnded,
    RuntimeEvent,
    StoreQueue,
    TrioClock,
)
from svc.store import InboxItem, PersistenceError, PersistenceStore, SqliteStore
from svc.webhook import Listener, Update, UserState, normalize
from tests.store.conftest import _backend, _closing_opened
from tests.store.conftest import postgres_run_prefix as postgres_run_prefix

T0 = datetime(2026, 11, 21, 10, 15, 30, tzinfo=UTC)
PHONE_ID = "106540352242922"
SENDERS = {"a": "16505551234", "b": "16505559876", "c": "16505550001", "d": "16505550002"}
"""The user of each test key's first letter: ``a1`` and ``a2`` share a queue, ``b1`` not."""
LOGGER = "tests.runtime"
KEYRING = InboxKeyring([bytes(range(32))])


def now() -> datetime:
    """T0 moved on by trio's clock (which starts at 0): the time of a runtime made at the
    test's start (``make_runtime``), the record time of a delivery."""
    return T0 + timedelta(seconds=trio.current_time())


def message(key: str) -> Update:
    """The text message ``key`` (``a1``: the first of user a) as the webhook layer reads it."""
    payload = {
        "object": "whatsapp_business_account",
        "entry": [
            {
                "id": "102290129340398",
                "changes": [
                    {
                        "field": "messages",
                        "value": {
                            "messaging_product": "whatsapp",
                            "metadata": {
                                "display_phone_number": "15550783881",
                                "phone_number_id": PHONE_ID,
                            },
                            "messages": [
                                {
                                    "from": SENDERS[key[0]],
                                    "id": f"wamid.{key}",
                                    "timestamp": "1749416383",
                                    "type": "text",
                                    "text": {"body": f"text of {key}"},
                                }
                            ],
                        },
                    }
                ],
            }
        ],
    }
    (update,) = normalize(payload).updates
    return update


def key_of(update: Update) -> str:
    """The test key of a message made by ``message``."""
    message_id = getattr(update, "message_id", "")
    assert isinstance(message_id, str)
    return message_id.removeprefix("wamid.")


def reply_to(*keys: str) -> Listener:
    """A listener that takes the first of ``keys`` the queue receives."""
    return Listener("reply", lambda update: key_of(update) in keys)


class Context:
    """The minimal context a handler runs in: its update and key, and the run's
    conversation (its updates, the user's state, waits)."""

    def __init__(self, update: Update, key: str, conversation: Conversation) -> None:
        self.update = update
        self.key = key
        self.conversation = conversation

    @property
    def updates(self) -> Sequence[Update]:
        return self.conversation.updates

    @property
    def state(self) -> UserState:
        return self.conversation.state

    async def wait_for(self, *keys: str, timeout: float = 600.0) -> str:
        """Wait (paused) for the first of ``keys``; its key."""
        return key_of(await self.conversation.listen(reply_to(*keys), timeout))


Handler = Callable[[Context], Awaitable[None]]


class Bot:
    """A facade of the tests' own: handles every update, runs ``handler`` with the context."""

    def __init__(self, handler: Handler) -> None:
        self._handler = handler

    def handles(self, update: Update) -> bool:
        return True

    async def run(self, context: Any) -> None:
        await self._handler(context)

    def coalesce_for(self, update: Update) -> None:
        return None


class Events(list[RuntimeEvent]):
    """What the runtime told its observer, in order."""

    def ended(self) -> list[RunEnded]:
        return [event for event in self if isinstance(event, RunEnded)]

    def outcomes(self) -> list[tuple[str, str]]:
        """``(update key, outcome)`` of each run, in the order they ended."""
        return [(event.update_key, event.outcome) for event in self.ended()]


def memory_queue(
    *, capacity: int = 100, seen_window: int = 100, state_ttl: timedelta = timedelta(days=30)
) -> MemoryQueue:
    return MemoryQueue(capacity=capacity, seen_window=seen_window, state_ttl=state_ttl)


def store_queue(
    store: Any, kind: type[StoreQueue] = StoreQueue, *, state_ttl: timedelta = timedelta(days=30)
) -> StoreQueue:
    """A ``kind`` (``StoreQueue`` or a test's subclass of it) over ``store``."""
    return kind(
        store=store,
        keyring=KEYRING,
        state_ttl=state_ttl,
        dead_horizon=timedelta(days=7),
        logger=logging.getLogger(LOGGER),
    )


def make_runtime(
    queue: MemoryQueue | StoreQueue,
    handler: Handler,
    *,
    events: list[RuntimeEvent] | None = None,
    registry: CollectorRegistry | None = None,
    base: datetime = T0,
    facade: Bot | None = None,
    **options: Any,
) -> HandlerRuntime:
    """A runtime of ``handler`` over ``queue``: retries after 1 s, doubling (jitter at the
    top of its range, so each delay is the full backoff); ``facade`` (default
    ``Bot(handler)``) and ``options`` override. The test must take ``autojump_clock`` itself
    (pytest-trio runs only such a test on it)."""
    assert isinstance(trio.lowlevel.current_clock(), trio.testing.MockClock)
    clock = TrioClock(lambda: base)
    clock()  # anchored here: the runtime's time is ``base`` plus trio's time since
    settings: dict[str, Any] = {"retry_delay": 1.0, "max_attempts": 3}
    if events is not None:
        settings["observer"] = events.append
    return HandlerRuntime(
        queue=queue,
        facade=facade or Bot(handler),
        context_for=Context,
        options=HandlerOptions(**(settings | options)),
        now=clock,
        logger=logging.getLogger(LOGGER),
        registry=registry or CollectorRegistry(),
        jitter=lambda: 1.0,
    )


async def run_until_ended(
    runtime: HandlerRuntime, events: Events, count: int, *, step: float = 1.0
) -> None:
    """Serve ``runtime`` until ``count`` runs have ended (looking every ``step`` seconds of
    the test's clock), then stop it: retries due later run too, as ``run_until_idle`` would
    not wait for them."""
    async with trio.open_nursery() as nursery:
        await nursery.start(runtime.run)
        while len(events.ended()) < count:
            await trio.sleep(step)
        await runtime.stop()


async def deliver(runtime: HandlerRuntime, *keys: str, wake: bool = True) -> None:
    """Hand the messages ``keys`` over as the HTTP layer does: recorded in the store's inbox
    at ``now()`` (``wake=False``: as another process would, unannounced), or accepted by the
    memory queue."""
    pairs = [(message(key), key) for key in keys]
    queue = runtime.queue
    if isinstance(queue, MemoryQueue):
        assert runtime.accept(pairs) == list(keys)
        return
    await queue.store.record_webhook_updates(
        event_key="d-" + "-".join(keys),
        event_hash="h",
        received_at=now(),
        update_keys=list(keys),
        inbox=queue.rows(pairs),
    )
    if wake:
        runtime.accepted(pairs, set(keys))


class HeldStore(testing.HeldStore):
    """``svc.testing.HeldStore`` (the autojump clock held still while a call is in flight)
    that also keeps each call's name in ``calls`` and fails the calls named in ``faults``
    (as many times as given) with a ``PersistenceError`` before they reach the store."""

    __slots__ = ("calls", "faults")

    def __init__(self, store: PersistenceStore, clock: trio.testing.MockClock) -> None:
        super().__init__(store, clock, on_call=self._called)
        self.calls: list[str] = []
        self.faults: dict[str, int] = {}

    def _called(self, name: str) -> None:
        self.calls.append(name)
        if self.faults.get(name, 0) > 0:
            self.faults[name] -= 1
            raise PersistenceError("claim_failed", "a store fault of the test")

    async def items(self) -> dict[str, InboxItem]:
        """The inbox's items by update key."""
        return {item.update_key: item for item in await self.list_inbox_items()}


@pytest.fixture
async def store(autojump_clock: trio.testing.MockClock) -> AsyncIterator[HeldStore]:
    """A migrated in-memory SQLite store, held (``HeldStore``)."""
    opened = SqliteStore(":memory:")
    held = HeldStore(opened, autojump_clock)
    await held.migrate()
    yield held
    await opened.close()


@pytest.fixture(params=["sqlite-memory", "sqlite-file", "postgres"])
async def any_store(
    request: pytest.FixtureRequest, tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> AsyncIterator[HeldStore]:
    """A migrated store of SQLite (memory, file) and PostgreSQL, held (``HeldStore``)."""
    async with _closing_opened(_backend(request.param, request, tmp_path)) as backend:
        held = HeldStore(backend.open(), autojump_clock)
        await held.migrate()
        yield held
