"""LocalRuns, sans-HTTP: a copy waits for this process's own runs and gives up on others'.

Under trio's autojump clock: a wait that the state never releases ends at its
bounds (the 0.2 s grace, the 10 s cap) at once, and the times are exact.
"""

from __future__ import annotations

import trio
import trio.testing

from svc.http._local_runs import (
    LOCAL_CLAIM_GRACE_SECONDS,
    LOCAL_RUN_WAIT_SECONDS,
    MAX_FINISHED_KEYS,
    LocalRuns,
)


async def test_a_finished_key_is_true_at_once(autojump_clock: trio.testing.MockClock) -> None:
    runs = LocalRuns()
    runs.start(["k"])
    runs.finish(["k"])
    begin = trio.current_time()
    assert await runs.wait({"k"})
    assert trio.current_time() == begin


async def test_a_key_nobody_here_runs_is_false_after_the_grace(
    autojump_clock: trio.testing.MockClock,
) -> None:
    runs = LocalRuns()
    begin = trio.current_time()
    assert not await runs.wait({"k"})
    assert trio.current_time() - begin == LOCAL_CLAIM_GRACE_SECONDS


async def test_a_copy_waits_for_a_recording_run_to_start_and_finish(
    autojump_clock: trio.testing.MockClock,
) -> None:
    runs = LocalRuns()
    results: list[bool] = []
    begin = trio.current_time()

    async def copy() -> None:
        results.append(await runs.wait({"k"}))
        results.append(trio.current_time() - begin == 8)

    async with trio.open_nursery() as nursery:
        with runs.recording(["k"]):
            nursery.start_soon(copy)
            await trio.sleep(5)  # the store call: longer than the grace, shorter than the cap
            runs.start(["k"])
        await trio.sleep(3)  # the handlers
        assert results == []
        runs.finish(["k"])
    assert results == [True, True]


async def test_a_recording_that_ends_without_a_run_is_false_after_the_grace(
    autojump_clock: trio.testing.MockClock,
) -> None:
    runs = LocalRuns()
    results: list[bool] = []
    begin = trio.current_time()

    async def copy() -> None:
        results.append(await runs.wait({"k"}))

    async with trio.open_nursery() as nursery:
        with runs.recording(["k"]):  # its store call failed: the key never runs here
            nursery.start_soon(copy)
            await trio.sleep(1)
    assert results == [False]
    assert trio.current_time() - begin == 1 + LOCAL_CLAIM_GRACE_SECONDS


async def test_a_run_that_starts_within_the_grace_is_awaited(
    autojump_clock: trio.testing.MockClock,
) -> None:
    runs = LocalRuns()
    results: list[bool] = []

    async def copy() -> None:
        results.append(await runs.wait({"a", "b"}))

    async with trio.open_nursery() as nursery:
        runs.start(["a"])
        nursery.start_soon(copy)
        await trio.sleep(LOCAL_CLAIM_GRACE_SECONDS / 2)
        runs.start(["b"])
        await trio.sleep(1)
        runs.finish(["a"])
        await trio.sleep(1)
        assert results == []
        runs.finish(["b"])
    assert results == [True]


async def test_a_run_that_never_finishes_is_false_after_the_cap(
    autojump_clock: trio.testing.MockClock,
) -> None:
    runs = LocalRuns()
    runs.start(["k"])
    begin = trio.current_time()
    assert not await runs.wait({"k"})
    assert trio.current_time() - begin == LOCAL_RUN_WAIT_SECONDS


async def test_a_key_run_again_after_the_wait_began_still_ends_the_wait(
    autojump_clock: trio.testing.MockClock,
) -> None:
    runs = LocalRuns()
    results: list[bool] = []

    async def copy() -> None:
        results.append(await runs.wait({"k"}))

    async with trio.open_nursery() as nursery:
        runs.start(["k"])
        nursery.start_soon(copy)
        await trio.testing.wait_all_tasks_blocked()
        runs.finish(["k"])
        runs.start(["k"])  # a later run of the same key: the copy waited for the first
        await trio.testing.wait_all_tasks_blocked()
        assert results == [True]
        runs.finish(["k"])


async def test_a_key_recorded_finished_is_true_at_once(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """An update with no work is finished by its record: a copy waiting on it answers at once,
    while the keys that run still hold it."""
    runs = LocalRuns()
    with runs.recording(["idle", "work"]):
        runs.start(["work"], finished=["idle"])
    begin = trio.current_time()
    assert await runs.wait({"idle"})
    assert trio.current_time() == begin
    results: list[bool] = []

    async def copy() -> None:
        results.append(await runs.wait({"idle", "work"}))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(copy)
        await trio.sleep(1)
        assert results == []
        runs.finish(["work"])
    assert results == [True]
    assert trio.current_time() - begin == 1


async def test_only_the_latest_finished_keys_are_remembered(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """The latest ``MAX_FINISHED_KEYS`` finished keys are remembered, whether they were
    recorded finished or ran; older ones are forgotten a generation at a time (never more
    than twice the limit held), and a forgotten key is another process's."""
    runs = LocalRuns()
    runs.start([], finished=[f"r{i}" for i in range(3)])
    for i in range(2 * MAX_FINISHED_KEYS):
        runs.start([f"k{i}"])
        runs.finish([f"k{i}"])
    latest = {f"k{i}" for i in range(MAX_FINISHED_KEYS, 2 * MAX_FINISHED_KEYS)}
    assert await runs.wait(latest)
    runs.start(["x"])
    runs.finish(["x"])
    runs.start([], finished=["y"])
    assert await runs.wait({"x", "y", f"k{2 * MAX_FINISHED_KEYS - 1}"})
    for forgotten in ("r0", "r1", "r2", "k0", "k1"):
        assert not await runs.wait({forgotten})
