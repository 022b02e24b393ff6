"""``StoreCalls._delete_in_batches``: the one loop of every batched delete."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from svc.store._methods import StoreCalls


class _Recorder(StoreCalls):
    """A ``_call`` that answers each run with the next of ``deleted`` and records the call."""

    def __init__(self, deleted: list[int]) -> None:
        self.deleted = deleted
        self.calls: list[tuple[str, tuple[object, ...], bool]] = []

    async def _call(self, code: Any, fn: Callable[..., Any], *args: Any, write: bool) -> Any:
        self.calls.append((code, args, write))
        return self.deleted.pop(0)

    async def _write(self, kind: Any, args: Any, *, code: Any, key: str) -> Any:
        raise AssertionError("no write expected")


def _batch(session: object, cutoff: int, size: int) -> int:
    raise AssertionError("the recorder does not run it")


async def test_runs_until_a_batch_deletes_fewer_than_its_size_and_sums_them() -> None:
    store = _Recorder([3, 3, 1, 99])
    assert await store._delete_in_batches(3, _batch, 7, 3) == 7
    assert store.calls == [("outbox_failed", (7, 3), True)] * 3
    assert store.deleted == [99]


async def test_an_empty_first_batch_is_the_only_run() -> None:
    store = _Recorder([0, 5])
    assert await store._delete_in_batches(500, _batch, 7, 500) == 0
    assert len(store.calls) == 1
