"""The SQLite writer process: a second connection, in its own interpreter, for the hot writes.

CPython's sqlite3 releases the GIL around each step and must take it back after; in a
worker thread every retake waits for the event loop, so a served delivery costs the loop's
time plus the writer's. A child process has its own GIL: the batches of webhook deliveries
and handled marks (the writes whose group commit already runs set-based, from plain
arguments) run there, the same jobs through the same ``run_batch``, while the loop goes
on. Every other call stays on the store's thread.

The wire is a socket pair of length-prefixed pickles: the parent sends one a job (its kind
and arguments), the child one a batch (each job's outcome, in order, once the batch has
committed or failed). The child exits when the parent's end closes, so a killed
parent leaves no writer behind; it ignores the terminal's Ctrl+C, which the parent drains.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import pickle
import signal
import socket
import sqlite3
import struct
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final, cast

import anyio
from anyio.abc import Process

from . import _batch, _ops
from ._batch_kinds import BatchHint, BatchKind, DeliveryArgs
from ._session import Session
from ._sqlite_run import Job, held_to_completion, open_connection, run_batch

__all__ = ["WriterLost", "WriterProcess", "WriterUnavailable", "main"]

_HEADER: Final = struct.Struct(">I")
_PROTOCOL: Final = pickle.HIGHEST_PROTOCOL
_BOOT: Final = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from svc.store._sqlite_writer import main; main(int(sys.argv[2]))"
)
_READ_SIZE: Final = 1 << 16
_MAX_BATCH: Final = 256
_LINGER_SECONDS: Final = 0.004
_LINGER_FRAMES: Final = 16
_LINGER_NAP: Final = 0.0005
"""While callers are concurrent (the last batch held more than one job), a batch waits up
to ``_LINGER_SECONDS`` for up to ``_LINGER_FRAMES`` jobs, looking every ``_LINGER_NAP``
seconds (``_linger``)."""
_ROOT: Final = str(Path(__file__).resolve().parents[2])
"""The folder ``svc`` is imported from here, so the child runs this same code."""

Outcome = tuple[bool, object, Exception | None]


class WriterUnavailable(Exception):
    """The writer process could not be started (the store goes on with its thread)."""


class WriterLost(Exception):
    """The writer process went away: every job sent and not answered keeps its error."""


def _frame(value: object) -> bytes:
    payload = pickle.dumps(value, protocol=_PROTOCOL)
    return _HEADER.pack(len(payload)) + payload


class _Inbox:
    """Sans-IO framing: bytes in, whole frames' values out."""

    __slots__ = ("_buffer",)

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> None:
        self._buffer += data

    def take(self, most: int) -> list[object]:
        """Up to ``most`` whole frames' values, in order (none until a frame is whole)."""
        values: list[object] = []
        buffer = self._buffer
        start = 0
        while len(values) < most and len(buffer) - start >= _HEADER.size:
            (size,) = _HEADER.unpack_from(buffer, start)
            end = start + _HEADER.size + size
            if len(buffer) < end:
                break
            values.append(pickle.loads(buffer[start + _HEADER.size : end]))  # noqa: S301
            start = end
        del buffer[:start]
        return values

    def clear(self) -> None:
        self._buffer.clear()


class WriterProcess:
    """The parent's end of one writer process, started by ``ready`` (the store's ``migrate``,
    or the first job) and again after a loss.

    ``send`` writes a job's frame at once, from the caller's task, without waiting: the
    child starts on the first jobs of a burst while the event loop still builds the rest
    (a write that would block is kept and flushed by ``receive``). The child runs whatever
    frames have arrived as one batch and answers with one frame of their outcomes, in order.
    """

    __slots__ = (
        "_config",
        "_idle",
        "_inbox",
        "_inflight",
        "_outbox",
        "_proc",
        "_pumping",
        "_ready",
        "_sock",
        "_starting",
    )

    def __init__(self, path: str, *, busy_timeout_ms: int, synchronous: str) -> None:
        self._config: Final = (path, busy_timeout_ms, synchronous)
        self._proc: Process | None = None
        self._sock: socket.socket | None = None
        self._starting: anyio.Event | None = None
        self._ready = False
        """True once the child has answered the handshake (and until it is lost)."""
        self._inbox = _Inbox()
        self._outbox = bytearray()
        self._inflight: collections.deque[Job[Any]] = collections.deque()
        """Jobs sent and not yet answered, in the order the child answers them."""
        self._pumping = False
        self._idle: anyio.Event | None = None
        """Set once no job is in flight any more (``aclose`` waits for it)."""

    async def run(self, job: Job[Any]) -> None:
        """Send ``job`` (a merged kind's) and wait until the child has answered it or is lost.

        The first waiting caller reads the child's answers for every waiting job until its
        own is in; then the next one takes over. A job, once sent, runs to completion
        whatever happens to its caller: a cancellation is held until then and delivered at
        the caller's next checkpoint (``held_to_completion``). ``WriterUnavailable`` if the
        child cannot start (nothing was sent).
        """
        if not (self._ready and self._inflight):  # with jobs in flight, a lost child shows
            await self.ready()  # in their answers: no wait(2) for every job
        hint = job.hint
        assert hint is not None
        try:
            self.send((hint.kind, hint.args))
        except WriterLost:
            job.finished = True
            await self.lose()
            return
        self._inflight.append(job)
        await held_to_completion(functools.partial(self._until_finished, job))

    async def _until_finished(self, job: Job[Any]) -> None:
        while not job.finished:
            if self._pumping:
                job.done = anyio.Event()
                await job.done.wait()
            else:
                with anyio.CancelScope(shield=True):
                    await self._pump(job)

    async def _pump(self, own: Job[Any]) -> None:
        """Read answers, finishing the jobs in order (and waking each), until ``own`` is
        finished; then wake the oldest job still waiting, which reads on."""
        self._pumping = True
        try:
            while not own.finished:
                try:
                    outcomes = cast(list[Outcome], await self.receive())
                except WriterLost:
                    await self.lose()
                    break
                for ok, result, error in outcomes:
                    self._finish(self._inflight.popleft(), ok, result, error)
        finally:
            self._pumping = False
            if not self._inflight:
                self._wake_idle()
            elif self._inflight[0].done is not None:
                self._inflight[0].done.set()

    def _wake_idle(self) -> None:
        """Nothing is in flight: wake ``aclose`` if it waits for that."""
        idle, self._idle = self._idle, None
        if idle is not None:
            idle.set()

    @staticmethod
    def _finish(job: Job[Any], ok: bool, result: object, error: Exception | None) -> None:
        job.ok, job.result, job.error = ok, result, error
        job.finished = True
        if job.done is not None:
            job.done.set()

    async def ready(self) -> None:
        """Start the child unless it runs (again, if it has exited since);
        ``WriterUnavailable`` if it cannot start."""
        if self._ready and self._proc is not None and self._proc.returncode is not None:
            await self.lose()
        while not self._ready:
            if self._starting is not None:
                await self._starting.wait()
                continue
            self._starting = anyio.Event()
            try:
                with anyio.CancelScope(shield=True):
                    await self._start()
            finally:
                self._starting.set()
                self._starting = None
            if not self._ready:
                raise WriterUnavailable

    async def _start(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._proc = await anyio.open_process(
                [sys.executable, "-c", _BOOT, _ROOT, str(theirs.fileno())],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError:
            ours.close()
            return
        finally:
            theirs.close()
        ours.setblocking(False)
        self._sock = ours
        try:
            self.send(self._config)
            answer = await self.receive()
        except WriterLost:
            answer = None
        if answer == "ready":
            self._ready = True
        else:
            await self.lose()

    def send(self, value: object) -> None:
        """Write ``value``'s frame now, or keep what would block for ``receive`` to flush."""
        if self._sock is None:
            raise WriterLost
        frame = _frame(value)
        if self._outbox:
            self._outbox += frame
            return
        try:
            sent = self._sock.send(frame)
        except BlockingIOError:
            sent = 0
        except OSError:
            raise WriterLost from None
        if sent < len(frame):
            self._outbox += frame[sent:]

    async def receive(self) -> object:
        """The child's next answer frame (flushing any kept output as it waits)."""
        while True:
            if self._sock is None:
                raise WriterLost
            answer = self._inbox.take(1)
            if answer:
                return answer[0]
            try:
                if self._outbox:
                    # Read what the child has written first, so that it never waits on a
                    # full socket while this end waits to write.
                    with contextlib.suppress(BlockingIOError):
                        self._feed(self._sock.recv(_READ_SIZE))
                        continue
                    await anyio.wait_writable(self._sock)
                    del self._outbox[: self._sock.send(self._outbox)]
                else:
                    await anyio.wait_readable(self._sock)
                    self._feed(self._sock.recv(_READ_SIZE))
            except (BlockingIOError, InterruptedError):
                continue
            except (OSError, anyio.ClosedResourceError):
                raise WriterLost from None

    def _feed(self, data: bytes) -> None:
        if not data:
            raise WriterLost
        self._inbox.feed(data)

    async def lose(self) -> None:
        """Drop the connection and reap the child (killed if it still runs); every job
        sent and not answered finishes with its pessimistic error."""
        while self._inflight:
            self._finish(self._inflight.popleft(), False, None, None)
        self._wake_idle()
        await self._close(kill=True)

    async def aclose(self) -> None:
        """After the jobs in flight are answered, close the parent's end; the child then
        exits."""
        with anyio.CancelScope(shield=True):
            while self._inflight and self._sock is not None:
                if self._pumping:
                    self._idle = self._idle or anyio.Event()
                    await self._idle.wait()
                else:
                    await self._pump(self._inflight[-1])
        await self._close(kill=False)

    async def _close(self, *, kill: bool) -> None:
        self._ready = False
        sock, self._sock = self._sock, None
        proc, self._proc = self._proc, None
        self._inbox.clear()
        self._outbox.clear()
        with anyio.CancelScope(shield=True):
            if sock is not None:
                anyio.notify_closing(sock)
                sock.close()
            if proc is not None:
                if kill and proc.returncode is None:
                    proc.kill()
                await proc.wait()


# --- the child ---------------------------------------------------------------------------


def _alone(kind: BatchKind, args: tuple[object, ...]) -> Callable[[Session], object]:
    """The single call a job of ``kind`` runs when its merged run fails (as the parent's)."""
    if kind == "delivery":
        item = cast(DeliveryArgs, args)
        return lambda s: _batch.record_webhook_delivery(s, item)
    keys, at = cast(tuple[tuple[str, ...], int], args)
    return lambda s: _ops.mark_webhook_updates_handled(s, keys, at)


def _outcomes(jobs: list[Job[Any]]) -> bytes:
    """The batch's answer frame; an error that does not survive pickling becomes the
    pessimistic one (``None``), so the parent can always read the frame."""
    return _frame([(job.ok, job.result, _portable(job.error)) for job in jobs])


def _portable(error: Exception | None) -> Exception | None:
    if error is None:
        return None
    try:
        pickle.loads(pickle.dumps(error, protocol=_PROTOCOL))  # noqa: S301 -- our own bytes
    except Exception:  # noqa: BLE001 -- any failure: the caller gets the pessimistic error
        return None
    return error


def _batches(sock: socket.socket, inbox: _Inbox) -> Iterator[list[object]]:
    """Each batch: the frames the socket holds when the last batch ends, waiting for the
    next when it holds none, and lingering for more while callers are concurrent; ends
    when the parent's end closes.

    One thread reads and runs: the parent drains the child's answers before it waits to
    write, so neither end waits on the other's full buffer.
    """
    closed = False
    concurrent = False
    while True:
        closed = _read_held(sock, inbox, closed)
        batch = inbox.take(_MAX_BATCH)
        if concurrent and not closed:
            closed = _linger(sock, inbox, batch, closed)
        if batch:
            concurrent = len(batch) > 1
            yield batch
        elif closed:
            return
        else:
            data = sock.recv(_READ_SIZE)
            closed = not data
            inbox.feed(data)


def _read_held(sock: socket.socket, inbox: _Inbox, closed: bool) -> bool:
    """Feed ``inbox`` what the socket holds now; whether the parent's end has closed."""
    while not closed:
        try:
            data = sock.recv(_READ_SIZE, socket.MSG_DONTWAIT)
        except BlockingIOError:
            break
        closed = not data
        inbox.feed(data)
    return closed


def _linger(sock: socket.socket, inbox: _Inbox, batch: list[object], closed: bool) -> bool:
    """Group-commit delay: add frames to ``batch`` until it holds ``_LINGER_FRAMES`` or
    ``_LINGER_SECONDS`` have passed. Each commit costs a fixed part (the transaction, the
    WAL sync, each statement of the set-based forms) that a bigger batch shares.

    It naps rather than waits on the socket: a frame written to a child blocked on its
    socket costs the writer a wake-up of the child, in the event loop's time.
    """
    deadline = time.monotonic() + _LINGER_SECONDS
    while len(batch) < _LINGER_FRAMES and not closed:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        time.sleep(min(_LINGER_NAP, left))
        closed = _read_held(sock, inbox, closed)
        batch += inbox.take(_MAX_BATCH - len(batch))
    return closed


def main(fd: int) -> None:
    """The child: open the connection, then run batches until the parent's end closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sock = socket.socket(fileno=fd)
    inbox = _Inbox()
    while not (config := inbox.take(1)):
        data = sock.recv(_READ_SIZE)
        if not data:
            return
        inbox.feed(data)
    path, busy_timeout_ms, synchronous = cast(tuple[str, int, str], config[0])
    try:
        conn = open_connection(path, busy_timeout_ms=busy_timeout_ms, synchronous=synchronous)
    except sqlite3.Error:
        sock.sendall(_frame("unavailable"))
        return
    sock.sendall(_frame("ready"))
    try:
        for items in _batches(sock, inbox):
            jobs: list[Job[Any]] = [
                Job(
                    fn=_alone(kind, args),
                    write=True,
                    code="outbox_failed",
                    hint=BatchHint(kind=kind, key="", args=args),
                )
                for kind, args in cast(list[tuple[BatchKind, tuple[object, ...]]], items)
            ]
            with contextlib.suppress(sqlite3.Error):  # every job keeps its pessimistic error
                run_batch(conn, jobs)
            try:
                sock.sendall(_outcomes(jobs))
            except OSError:
                break
    finally:
        conn.close()
