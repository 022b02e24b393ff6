"""A supervisor of child processes, as gunicorn's arbiter: start them, replace one that exits.

``Supervisor(start, count, policy, say)`` keeps ``count`` children running.
``start(slot, cause, ready)`` starts the child of a slot (``cause`` is why the
previous one ended, ``None`` at first start) and hands it the write end of a
pipe; the child sends one message on it once it serves. A child that exits for
any reason is replaced at once, with one line saying which slot, which pid and
how it ended (exit code or signal); more than ``policy.limit`` replacements
within ``policy.window`` seconds means children die faster than restarting
helps, and the supervisor stops the rest and reports failure. It also stops
them when the caller's ``stop`` event is set (a signal), and kills any that has
not exited ``stop_timeout`` seconds later.

Nothing here knows what a child does: the serving workers of ``svc serve
--workers N`` are one kind; another (a store's writer) can be supervised the
same way. The parent, not the children, owns whatever must outlive a child
(the listening sockets).
"""

from __future__ import annotations

import signal
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    import trio

__all__ = ["RESTARTS_METRIC", "RestartPolicy", "Supervisor", "count_restart", "exit_cause"]

RESTARTS_METRIC: Final = "svc_worker_restarts_total"
START_SECONDS: Final = 60.0
"""How long a child may take to say it serves before it is killed (and counted as exited)."""


@dataclass(frozen=True, slots=True)
class RestartPolicy:
    """At most ``limit`` replacements within any ``window`` seconds (``limit=0``: none)."""

    limit: int = 10
    window: float = 60.0


def exit_cause(exitcode: int | None) -> str:
    """``SIGKILL``, ``exit code 1``: how a finished child ended."""
    if exitcode is None:
        return "an unknown cause"
    if exitcode < 0:
        try:
            return signal.Signals(-exitcode).name
        except ValueError:
            return f"signal {-exitcode}"
    return f"exit code {exitcode}"


def count_restart(registry: Any, *, replacement: bool) -> None:
    """Register ``svc_worker_restarts_total`` in a child, counting itself if it is a
    replacement (children count themselves: under prometheus-client's multiprocess mode
    ``/metrics`` sums every child's count, the dead ones' included)."""
    from prometheus_client import Counter

    restarts = Counter(
        RESTARTS_METRIC.removesuffix("_total"),
        "Worker processes started to replace one that exited.",
        registry=registry,
    )
    if replacement:
        restarts.inc()


StartChild = Callable[[int, "str | None", "Connection"], Any]
"""``start(slot, cause, ready_writer)``: start a child process, return it (started)."""


@dataclass(slots=True)
class _Child:
    slot: int
    process: Any
    ready: Connection


class Supervisor:
    """Keeps ``count`` children of one kind running until told to stop (see the module)."""

    def __init__(
        self,
        start: StartChild,
        count: int,
        policy: RestartPolicy,
        say: Callable[[str], None],
        *,
        kind: str = "worker",
        stop_timeout: float = 30.0,
    ) -> None:
        self._start = start
        self._count = count
        self._policy = policy
        self._say = say
        self._kind = kind
        self._stop_timeout = stop_timeout
        self._children: dict[int, _Child] = {}
        self._replaced: deque[float] = deque()

    def _spawn(self, slot: int, cause: str | None) -> _Child:
        import multiprocessing

        reader, writer = multiprocessing.Pipe(duplex=False)
        try:
            process = self._start(slot, cause, writer)
        finally:
            writer.close()  # the child holds its own copy: its exit reads as EOF here
        child = _Child(slot, process, reader)
        self._children[slot] = child
        return child

    async def run(
        self,
        stop: trio.Event,
        on_stop: Callable[[], None],
        *,
        on_serving: Callable[[], None],
    ) -> int:
        """Start the children and keep them running until ``stop`` is set. Returns 0 after a
        clean stop, 1 when a child failed to start or children exited faster than the policy
        allows. ``on_serving`` runs once all the first children serve; ``on_stop`` runs once,
        when the children are to stop (it tells them)."""
        import trio

        children = [self._spawn(slot, None) for slot in range(self._count)]
        started = [await self._serving(child) for child in children]
        if not all(started):
            if not stop.is_set():
                self._say(f"a {self._kind} failed to start; stopping the others.")
            on_stop()
            await self._stop_all()
            return 1
        on_serving()
        code = 0
        exits, exited = trio.open_memory_channel[_Child | None](self._count + 1)
        async with trio.open_nursery() as nursery:
            for child in children:
                nursery.start_soon(self._watch, child, exits)

            async def signalled() -> None:
                await stop.wait()
                await exits.send(None)

            nursery.start_soon(signalled)
            async for gone in exited:
                if gone is None or stop.is_set():
                    break
                child = gone
                if self._children.get(child.slot) is not child:
                    continue
                cause = exit_cause(child.process.exitcode)
                ended = f"{self._kind} {child.slot} (pid {child.process.pid}) ended by {cause}"
                if not self._may_replace(trio.current_time()):
                    self._say(
                        f"{ended}; {self._kind}s exit faster than the restart limit "
                        f"({self._policy.limit} in {self._policy.window:g} s): stopping."
                    )
                    code = 1
                    break
                self._say(f"{ended}; starting a replacement.")
                child.ready.close()
                child.process.close()
                replacement = self._spawn(child.slot, cause)
                nursery.start_soon(self._replace, replacement, exits)
            nursery.cancel_scope.cancel()  # the watchers: _stop_all waits on the same fds
        on_stop()
        return max(code, await self._stop_all())

    def _may_replace(self, now: float) -> bool:
        while self._replaced and now - self._replaced[0] > self._policy.window:
            self._replaced.popleft()
        if len(self._replaced) >= self._policy.limit:
            return False
        self._replaced.append(now)
        return True

    async def _serving(self, child: _Child) -> bool:
        """Whether ``child`` says it serves within ``START_SECONDS`` (killed if not)."""
        import trio

        with trio.move_on_after(START_SECONDS):
            await trio.lowlevel.wait_readable(child.ready.fileno())
            try:
                child.ready.recv()
            except (EOFError, OSError):
                return False
            return True
        child.process.kill()
        return False

    async def _replace(self, child: _Child, exits: trio.MemorySendChannel[_Child | None]) -> None:
        if await self._serving(child):
            self._say(f"{self._kind} {child.slot} serves again (pid {child.process.pid}).")
        await self._watch(child, exits)

    async def _watch(self, child: _Child, exits: trio.MemorySendChannel[_Child | None]) -> None:
        import trio

        await trio.lowlevel.wait_readable(child.process.sentinel)
        # The sentinel reads as soon as the child's fds close, a moment before it can be
        # reaped: join for its exit code.
        await trio.to_thread.run_sync(child.process.join)
        await exits.send(child)

    async def _stop_all(self) -> int:
        """Wait for every child to exit (killing those still running after the timeout);
        0 when all exited 0."""
        import trio

        with trio.move_on_after(self._stop_timeout):
            for child in self._children.values():
                await trio.lowlevel.wait_readable(child.process.sentinel)
        codes = []
        for child in self._children.values():
            if child.process.exitcode is None:
                self._say(f"{self._kind} {child.slot} did not stop in time; killing it.")
                child.process.kill()
            await trio.to_thread.run_sync(child.process.join)
            codes.append(child.process.exitcode)
            child.ready.close()
        return 0 if all(code == 0 for code in codes) else 1
