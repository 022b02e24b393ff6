"""The writer process: the hot writes on a second connection, in an interpreter of its own.

A database driver releases the GIL around each statement and must take it back after; in a
worker thread every retake waits for the event loop, so a served delivery costs the loop's
time plus the writer's, and a batch's wall time grows with every statement. A child process
has its own GIL: the batches of webhook deliveries and handled marks (the writes whose group
commit runs set-based, from plain arguments) run there while the loop goes on. Each adapter
has its own child module (``_sqlite_writer``, ``_pg_writer``) that opens its connection and
runs a batch; this module is the process, the wire and the batching, shared by both.

The wire is a socket pair of length-prefixed pickles: the parent sends one a job (its batch
hint), the child one a batch (whether the batch lost the database server, and each job's
outcome, in order, once the batch has committed or failed). The child exits when the
parent's end closes, so a killed parent leaves no writer behind; it ignores the terminal's
Ctrl+C, which the parent drains.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import pickle
import signal
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final, Protocol, cast

import anyio
from anyio.abc import Process

from . import _batch, _ops
from ._batch_kinds import BatchHint, BatchKind, DeliveryArgs
from ._errors import PersistenceValidationError
from ._held import held_to_completion
from ._session import Session

__all__ = [
    "WRITERS",
    "WRITER_KINDS",
    "BatchRunner",
    "Outcome",
    "WriterLost",
    "WriterProcess",
    "WriterUnavailable",
    "alone",
    "check_writer",
    "outcome",
    "serve",
    "started",
]

_HEADER: Final = struct.Struct(">I")
_PROTOCOL: Final = pickle.HIGHEST_PROTOCOL
_BOOT: Final = (
    "import importlib, sys; sys.path.insert(0, sys.argv[1]); "
    "importlib.import_module(sys.argv[2]).main(int(sys.argv[3]))"
)
_READ_SIZE: Final = 1 << 16
_MAX_BATCH: Final = 256
_LINGER_SECONDS: Final = 0.004
_LINGER_FRAMES: Final = 16
_LINGER_NAP: Final = 0.0005
"""While callers are concurrent (the last batch held more than one job), a batch waits up
to ``_LINGER_SECONDS`` for up to ``_LINGER_FRAMES`` jobs, looking every ``_LINGER_NAP``
seconds (``_linger``)."""
_log: Final = logging.getLogger("svc.store.writer")
_ROOT: Final = str(Path(__file__).resolve().parents[2])
"""The folder ``svc`` is imported from here, so the child runs this same code."""

WRITERS: Final = ("thread", "process")
"""Where a store runs its webhook writes (``"thread"`` first: the stores' default)."""
WRITER_KINDS: Final[frozenset[BatchKind]] = frozenset({"delivery", "handled"})
"""The writes a writer process runs: webhook deliveries and marks of handled updates."""
Outcome = tuple[bool, object, Exception | None]
"""A job's answer: whether its batch committed it, its result, its own error (or ``None``
for its kind's pessimistic error)."""
Wire = tuple[BatchKind, str, tuple[object, ...], tuple[str, ...]]
"""A job on the wire: its hint's kind, key, arguments and further locks."""


class WriterUnavailable(Exception):
    """The writer process could not be started (the store goes on with its thread)."""


class WriterLost(Exception):
    """The writer process went away: every job sent and not answered keeps its error."""


def check_writer(writer: object) -> str:
    """``writer`` when it is one of ``WRITERS``; else ``invalid_options``."""
    if writer not in WRITERS:
        message = f"writer must be one of {', '.join(WRITERS)}"
        raise PersistenceValidationError("invalid_options", message)
    return str(writer)


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


class _Pending:
    """A job sent and not yet answered: its answer, and the event its waiting caller sleeps on."""

    __slots__ = ("answer", "done", "finished")

    def __init__(self) -> None:
        self.finished = False
        self.answer: Outcome = (False, None, None)
        self.done: anyio.Event | None = None


class WriterProcess:
    """The parent's end of one writer process, started by ``ready`` (the store's ``migrate``,
    or the first job) and again after a loss.

    ``child`` names the module whose ``main`` the child runs; ``config`` is the first frame
    it reads (what it needs to open its connection). ``send`` writes a job's frame at once,
    from the caller's task, without waiting: the child starts on the first jobs of a burst
    while the event loop still builds the rest (a write that would block is kept and flushed
    by ``receive``). The child runs whatever frames have arrived as one batch and answers
    with one frame of their outcomes, in order.
    """

    __slots__ = (
        "_child",
        "_config",
        "_idle",
        "_inbox",
        "_inflight",
        "_outbox",
        "_proc",
        "_pumping",
        "_ready",
        "_server_lost",
        "_sock",
        "_starting",
    )

    def __init__(self, child: str, config: tuple[object, ...]) -> None:
        self._child: Final = child
        self._config: Final = config
        self._proc: Process | None = None
        self._sock: socket.socket | None = None
        self._starting: anyio.Event | None = None
        self._ready = False
        """True once the child has answered the handshake (and until it is lost)."""
        self._inbox = _Inbox()
        self._outbox = bytearray()
        self._inflight: collections.deque[_Pending] = collections.deque()
        """Jobs sent and not yet answered, in the order the child answers them."""
        self._pumping = False
        self._idle: anyio.Event | None = None
        """Set once no job is in flight any more (``aclose`` waits for it)."""
        self._server_lost = False

    async def run(self, hint: BatchHint) -> Outcome:
        """Send the job ``hint`` describes and wait until the child has answered it or is lost.

        The first waiting caller reads the child's answers for every waiting job until its
        own is in; then the next one takes over. A job, once sent, runs to completion
        whatever happens to its caller: a cancellation is held until then and delivered at
        the caller's next checkpoint (``held_to_completion``). ``WriterUnavailable`` if the
        child cannot start (nothing was sent).
        """
        if not (self._ready and self._inflight):  # with jobs in flight, a lost child shows
            await self.ready()  # in their answers: no wait(2) for every job
        pending = _Pending()
        try:
            self.send((hint.kind, hint.key, hint.args, hint.locks))
        except WriterLost:
            await self.lose(failing=1)
            return pending.answer
        self._inflight.append(pending)

        async def until_finished() -> None:
            while not pending.finished:
                if self._pumping:
                    pending.done = anyio.Event()
                    await pending.done.wait()
                else:
                    with anyio.CancelScope(shield=True):
                        await self._pump(pending)

        await held_to_completion(until_finished)
        return pending.answer

    def take_server_lost(self) -> bool:
        """Whether a batch found the database server out of reach since the last ask."""
        lost, self._server_lost = self._server_lost, False
        return lost

    async def _pump(self, own: _Pending) -> None:
        """Read answers, finishing the jobs in order (and waking each), until ``own`` is
        finished; then wake the oldest job still waiting, which reads on."""
        self._pumping = True
        try:
            while not own.finished:
                try:
                    lost, outcomes = cast(tuple[bool, list[Outcome]], await self.receive())
                except WriterLost:
                    await self.lose()
                    break
                self._server_lost = self._server_lost or lost
                for answer in outcomes:
                    self._finish(self._inflight.popleft(), answer)
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
    def _finish(pending: _Pending, answer: Outcome) -> None:
        pending.answer, pending.finished = answer, True
        if pending.done is not None:
            pending.done.set()

    async def ready(self) -> None:
        """Start the child unless it runs (again, if it has exited since);
        ``WriterUnavailable`` if it cannot start."""
        if self._ready and self._proc is not None and self._proc.returncode is not None:
            _log.warning("store writer process exited; starting a new one")
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
                _log.warning(
                    "store writer process could not start; these writes run on the store's"
                    " thread from now on"
                )
                raise WriterUnavailable

    async def _start(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._proc = await anyio.open_process(
                [sys.executable, "-c", _BOOT, _ROOT, self._child, str(theirs.fileno())],
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

    async def lose(self, *, failing: int = 0) -> None:
        """Drop the connection and reap the child (killed if it still runs); every job
        sent and not answered (and ``failing`` more, not sent) finishes with its
        pessimistic error."""
        failed = len(self._inflight) + failing
        if failed:
            _log.warning(
                "store writer process lost; %d call(s) in flight failed (a webhook is"
                " answered 503 and redelivered); the next call starts a new one",
                failed,
            )
        while self._inflight:
            self._finish(self._inflight.popleft(), (False, None, None))
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


async def started(writer: WriterProcess | None) -> WriterProcess | None:
    """``writer`` once its child runs, or ``None`` (the store's threads take its writes)
    when there is none or it cannot start."""
    if writer is None:
        return None
    try:
        await writer.ready()
    except WriterUnavailable:
        return None
    return writer


# --- the child ---------------------------------------------------------------------------


class BatchRunner(Protocol):
    """A child's connection: runs one batch of jobs and answers each (``serve``)."""

    def run(self, hints: list[BatchHint]) -> tuple[bool, list[Outcome]]:
        """Run ``hints`` as one batch; whether it lost the server, and each job's outcome."""

    def close(self) -> None: ...


def alone(kind: BatchKind, args: tuple[object, ...]) -> Callable[[Session], object]:
    """The single call a job of ``kind`` (a delivery or a mark of handled updates) runs when
    its set-based run fails: the one the store's own method runs."""
    if kind == "delivery":
        item = cast(DeliveryArgs, args)
        return lambda s: _batch.record_webhook_delivery(s, item)
    keys, at = cast(tuple[tuple[str, ...], int], args)
    return lambda s: _ops.mark_webhook_updates_handled(s, keys, at)


def outcome(ok: bool, result: object, error: Exception | None) -> Outcome:
    """A job's outcome for the wire: an error that does not survive pickling becomes the
    pessimistic one (``None``), so the parent can always read the frame."""
    if error is None:
        return (ok, result, None)
    try:
        pickle.loads(pickle.dumps(error, protocol=_PROTOCOL))  # noqa: S301 -- our own bytes
    except Exception:  # noqa: BLE001 -- any failure: the caller gets the pessimistic error
        return (ok, result, None)
    return (ok, result, error)


def serve(fd: int, opener: Callable[[Any], BatchRunner | None]) -> None:
    """The child's life: read the config, open the connection (``opener``; ``None`` answers
    "unavailable"), then run batches until the parent's end closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sock = socket.socket(fileno=fd)
    inbox = _Inbox()
    while not (config := inbox.take(1)):
        data = sock.recv(_READ_SIZE)
        if not data:
            return
        inbox.feed(data)
    runner = opener(config[0])
    if runner is None:
        sock.sendall(_frame("unavailable"))
        return
    sock.sendall(_frame("ready"))
    try:
        for items in _batches(sock, inbox):
            hints = [
                BatchHint(kind=kind, key=key, args=args, locks=locks)
                for kind, key, args, locks in cast(list[Wire], items)
            ]
            try:
                sock.sendall(_frame(runner.run(hints)))
            except OSError:
                break
    finally:
        runner.close()


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
