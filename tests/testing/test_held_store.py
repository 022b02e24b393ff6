"""``svc.testing.HeldStore``: the store contract method by method, each call holding the
autojump clock still."""

from __future__ import annotations

import math

import pytest
import trio
import trio.testing

from svc.store import PersistenceError, PersistenceStore, SqliteStore
from svc.testing import HeldStore


def test_it_defines_every_method_of_the_contract_itself() -> None:
    contract = {name for name in dir(PersistenceStore) if not name.startswith("_")}
    assert contract <= set(vars(HeldStore))  # no __getattr__: isinstance sees each one
    store = HeldStore(SqliteStore(":memory:"), None)
    assert isinstance(store, PersistenceStore)
    assert store.backend == "sqlite"


async def test_a_call_holds_the_clock_and_on_call_sees_it_first(
    autojump_clock: trio.testing.MockClock,
) -> None:
    calls: list[str] = []
    thresholds: list[float] = []

    def on_call(name: str) -> None:
        calls.append(name)
        if name == "inbox_statistics":
            raise PersistenceError("claim_failed", "a fault the test injects")

    # The inner wrapper's hook runs inside the outer one's call: it sees the clock held.
    seen = HeldStore(
        SqliteStore(":memory:"),
        None,
        on_call=lambda name: thresholds.append(autojump_clock.autojump_threshold),
    )
    store = HeldStore(seen, autojump_clock, on_call=on_call)
    assert await store.migrate() >= 1
    assert thresholds == [math.inf]  # held while the call ran
    assert autojump_clock.autojump_threshold == 0  # and let go after it
    with pytest.raises(PersistenceError):
        await store.inbox_statistics()
    assert calls == ["migrate", "inbox_statistics"]
    assert store.busy == 0
    await store.close()
