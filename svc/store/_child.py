"""The writer process: a group commit's batches on a second connection, in an interpreter of
its own (a ``_commit.Runner``). This is the one boundary between the store's callers and a
writer child; everything that crosses it is named here.

A database driver releases the GIL around each statement and must take it back after; in a
worker thread every retake waits for the event loop, so a batch's wall time grows with each
statement while the loop is busy. A child process has its own GIL: the batches of webhook
deliveries, their template pauses and inbox writes (``CHILD_KINDS``, plain records) run there
while the loop goes on. ``Writers`` holds a store's group commits and sends each write to the
child's or the thread's (``StoreBase._write``).

The child is started from a function object, its adapter's entry (``run_writer`` of
``sqlite/_store.py`` or ``postgres/_engine.py``): a fresh interpreter (``sys.executable``)
imports that function by reference, as ``multiprocessing`` does, and calls it with its end
of a socket pair; the entry calls ``serve`` with its ``opener``. The wire is length-prefixed
pickles:

1. parent -> child: the adapter's config (what ``opener`` needs to connect); child ->
   parent: ``True`` once connected, ``False`` if it cannot.
2. then, per batch, one ``WriteRequest`` (each job's ``Kind``, key and checked arguments, in
   order) and one ``WriteResponse`` back once the batch has committed or failed: whether it
   lost the database server, and each job's ``JobOutcome`` in order.

The child runs ``_commit.run_batch`` (where ``Kind`` is matched to its form) on the connection
``opener`` makes. It exits when the parent's end closes, so a killed parent leaves no writer
behind; it ignores the terminal's Ctrl+C, which the parent drains.
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
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, Protocol, TypeAlias

import anyio
from anyio.abc import Process

from ._commit import Batch, GroupCommit, Job, Runner
from ._kinds import Kind

__all__ = [
    "CHILD_KINDS",
    "Child",
    "ChildConnection",
    "JobOutcome",
    "JobRequest",
    "WriteRequest",
    "WriteResponse",
    "Writers",
    "serve",
]

CHILD_KINDS: Final = frozenset({Kind.DELIVERY, Kind.PAUSE, Kind.INBOX})
"""The writes a writer process runs: webhook deliveries, the broadcast pauses their template
status changes make, and the inbox's claims and completions (so they share the deliveries'
transactions; on another connection they would wait for the writer's lock)."""
_HEADER: Final = struct.Struct(">I")
_PROTOCOL: Final = pickle.HIGHEST_PROTOCOL
_BOOT: Final = (
    "import pickle, sys; sys.path.insert(0, sys.argv[1]); "
    "pickle.loads(bytes.fromhex(sys.argv[2]))(int(sys.argv[3]))"
)
"""The child's first line: import the entry function by reference (a function pickles as
its module and name) and call it with the socket's descriptor."""
_READ_SIZE: Final = 1 << 16
_log: Final = logging.getLogger("svc.store.writer")
_ROOT: Final = str(Path(__file__).resolve().parents[2])
"""The folder ``svc`` is imported from here, so the child runs this same code."""


JobRequest: TypeAlias = tuple[Kind, str, Any]
"""One job of a batch as the child receives it: its ``Kind``, key and the checked arguments
of its kind's form (``_kinds``). Plain tuples: a frame pickles and loads them in C, where a
named tuple runs Python code per job on each side."""
JobOutcome: TypeAlias = tuple[bool, object, Exception | None]
"""One job's answer: whether its batch committed it, its result, its own error (or ``None``
for its code's pessimistic error); a plain tuple, as ``JobRequest``."""


WriteRequest: TypeAlias = tuple[JobRequest, ...]
"""Parent -> child: one batch, its jobs in order (a plain tuple: a dataclass runs Python code
on each side per frame)."""
WriteResponse: TypeAlias = tuple[bool, tuple[JobOutcome, ...]]
"""Child -> parent: whether the batch found the database server out of reach, and each job's
outcome, in the request's order (a plain tuple)."""


def _frame(value: object) -> bytes:
    payload = pickle.dumps(value, protocol=_PROTOCOL)
    return _HEADER.pack(len(payload)) + payload


class _Frames:
    """Sans-IO framing: bytes in, whole frames' values out."""

    __slots__ = ("_buffer",)

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> None:
        self._buffer += data

    def take(self) -> object | None:
        """The value of the next whole frame received (None until a frame is whole)."""
        buffer = self._buffer
        if len(buffer) < _HEADER.size:
            return None
        (size,) = _HEADER.unpack_from(buffer)
        end = _HEADER.size + size
        if len(buffer) < end:
            return None
        value: object = pickle.loads(buffer[_HEADER.size : end])  # noqa: S301 -- our own bytes
        del buffer[:end]
        return value


class _Lost(Exception):
    """The child went away (or never answered): the batch sent keeps its errors."""


class Child:
    """The parent's end of one writer process: a ``_commit.Runner`` whose batches run in a
    child started at ``entry`` (the adapter's ``run_writer``), by ``start`` (the store's
    ``migrate``) and again at the next batch after a loss.

    ``config`` is the first frame the child reads (what it needs to open its connection).
    ``fallback`` runs a batch when the child cannot start; ``unavailable`` then tells the
    store to send its later writes to its thread.
    """

    __slots__ = (
        "_answers",
        "_config",
        "_entry",
        "_fallback",
        "_frames",
        "_idle",
        "_proc",
        "_reading",
        "_sending",
        "_sock",
        "_starting",
        "in_flight",
        "unavailable",
    )
    withdraws: Final = False
    depth: Final = 2

    def __init__(
        self, entry: Callable[[int], None], config: tuple[object, ...], fallback: Any
    ) -> None:
        self._entry: Final = pickle.dumps(entry, protocol=_PROTOCOL).hex()
        self._config: Final = config
        self._fallback = fallback
        self._proc: Process | None = None
        self._sock: socket.socket | None = None
        self._frames = _Frames()
        self.unavailable = False
        self.in_flight = 0
        """How many jobs the child holds now (sent, not yet answered)."""
        self._answers: collections.deque[list[object]] = collections.deque()
        """One slot per batch sent and not yet answered, in the order the child answers."""
        # Uncontended, a lock is taken without a pass through the scheduler (a batch takes
        # all three).
        self._sending = anyio.Lock(fast_acquire=True)
        self._reading = anyio.Lock(fast_acquire=True)
        self._starting = anyio.Lock(fast_acquire=True)
        self._idle: anyio.Event | None = None
        """Set once nothing is in flight any more (``aclose`` waits for it)."""

    async def start(self) -> bool:
        """Start the child unless it runs (again, if it exited); False if it cannot start."""
        async with self._starting:
            return await self._start_once()

    async def _start_once(self) -> bool:
        if self.unavailable:
            return False
        if self._proc is not None and self._proc.returncode is None:
            return True
        if self._proc is not None:
            _log.warning("store writer process exited; starting a new one")
            await self._close(kill=True)
        with anyio.CancelScope(shield=True):
            started = await self._start()
        if not started:
            _log.warning(
                "store writer process could not start; these writes run on the store's"
                " thread from now on"
            )
            self.unavailable = True
        return started

    async def _start(self) -> bool:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._proc = await anyio.open_process(
                [sys.executable, "-c", _BOOT, _ROOT, self._entry, str(theirs.fileno())],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError:
            ours.close()
            return False
        finally:
            theirs.close()
        ours.setblocking(False)
        self._sock = ours
        try:
            await self._send(self._config)
            answer = await self._receive()
        except _Lost:
            answer = None
        if answer is not True:
            await self._close(kill=True)
            return False
        return True

    async def run(self, batch: Batch) -> None:
        """Run ``batch`` in the child: one frame out, one frame of outcomes back, in the order
        sent (two batches may be in flight: ``depth``). A lost child fails every job of the
        batches in flight (the next batch starts a new one); a child that cannot start hands
        the batch to ``fallback``."""
        if self.unavailable or not await self.start():
            await self._fallback.run(batch)
            return
        self.in_flight += len(batch.jobs)
        slot: list[object] = []
        try:
            async with self._sending:
                request: WriteRequest = tuple((job.kind, job.key, job.args) for job in batch.jobs)
                await self._send(request)
                self._answers.append(slot)
            async with self._reading:
                while not slot:
                    received = await self._receive()
                    self._answers.popleft().append(received)
            answer = slot[0]
        except _Lost:
            _log.warning(
                "store writer process lost; %d call(s) in flight failed (a webhook is"
                " answered 503 and redelivered); the next call starts a new one",
                len(batch.jobs),
            )
            await self._close(kill=True)
            return
        finally:
            self.in_flight -= len(batch.jobs)
            if not self.in_flight:
                idle, self._idle = self._idle, None
                if idle is not None:
                    idle.set()
        assert type(answer) is tuple
        batch.lost, outcomes = answer
        for job, (ok, result, error) in zip(batch.jobs, outcomes, strict=True):
            job.ok, job.result, job.error = ok, result, error

    async def _send(self, value: object) -> None:
        data = memoryview(_frame(value))
        full = False
        while data:
            if self._sock is None:
                raise _Lost
            try:
                if full:  # a frame usually goes at once: wait only once a send found no room
                    await anyio.wait_writable(self._sock)
                data = data[self._sock.send(data) :]
                full = False
            except (BlockingIOError, InterruptedError):
                full = True
            except (OSError, anyio.ClosedResourceError):
                raise _Lost from None

    async def _receive(self) -> object:
        while True:
            if self._sock is None:
                raise _Lost
            value = self._frames.take()
            if value is not None:
                return value
            try:
                await anyio.wait_readable(self._sock)
                data = self._sock.recv(_READ_SIZE)
            except (BlockingIOError, InterruptedError):
                continue
            except (OSError, anyio.ClosedResourceError):
                raise _Lost from None
            if not data:
                raise _Lost
            self._frames.feed(data)

    async def aclose(self) -> None:
        """Close the parent's end once the batch in flight is answered; the child then exits."""
        with anyio.CancelScope(shield=True):
            while self.in_flight:
                self._idle = self._idle or anyio.Event()
                await self._idle.wait()
        await self._close(kill=False)

    async def _close(self, *, kill: bool) -> None:
        sock, self._sock = self._sock, None
        proc, self._proc = self._proc, None
        self._frames = _Frames()
        self._answers.clear()
        with anyio.CancelScope(shield=True):
            if sock is not None:
                anyio.notify_closing(sock)
                sock.close()
            if proc is not None:
                if kill and proc.returncode is None:
                    proc.kill()
                await proc.wait()


class Writers:
    """Where a store's hot writes run: the group commit of its thread, and with a writer
    process (``child``) that child's, for the kinds it runs (``CHILD_KINDS``) while it is
    available."""

    __slots__ = ("_child_commit", "child", "thread")

    def __init__(self, thread: Runner, child: Child | None, *, messages: dict[str, str]) -> None:
        self.thread: Final = GroupCommit(thread, messages=messages)
        self.child: Final = child
        self._child_commit: Final = (
            None if child is None else GroupCommit(child, messages=messages)
        )

    def commit_for(self, kind: Kind) -> GroupCommit:
        """The group commit that runs a job of ``kind``."""
        child, commit = self.child, self._child_commit
        available = child is not None and not child.unavailable
        if commit is not None and available and kind in CHILD_KINDS:
            return commit
        return self.thread


# --- the child ---------------------------------------------------------------------------


class ChildConnection(Protocol):
    """The child's connection (its adapter's): runs one batch; whether it lost the server."""

    def run(self, batch: Batch) -> bool: ...

    def close(self) -> None: ...


def _outcome(job: Job[Any]) -> JobOutcome:
    """A job's outcome for the wire: an error that does not survive pickling becomes the
    pessimistic one (``None``), so the parent can always read the frame."""
    error = job.error
    if error is not None:
        try:
            pickle.loads(pickle.dumps(error, protocol=_PROTOCOL))  # noqa: S301 -- our own bytes
        except Exception:  # noqa: BLE001 -- any failure: the caller gets the pessimistic error
            error = None
    return (job.ok, job.result, error)


def serve(fd: int, opener: Callable[[Any], ChildConnection | None]) -> None:
    """The child's life: read the config, open the connection (``opener``; ``None`` answers
    ``False``), then run each ``WriteRequest`` until the parent's end closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sock = socket.socket(fileno=fd)
    frames = _Frames()

    def receive() -> object | None:
        while (value := frames.take()) is None:
            data = sock.recv(_READ_SIZE)
            if not data:
                return None
            frames.feed(data)
        return value

    config = receive()
    if config is None:
        return
    conn = opener(config)
    if conn is None:
        sock.sendall(_frame(False))
        return
    sock.sendall(_frame(True))
    try:
        while (request := receive()) is not None:
            assert type(request) is tuple
            jobs: list[Job[Any]] = [
                Job(kind, args, code="outbox_failed", key=key) for kind, key, args in request
            ]
            lost = conn.run(Batch(jobs))
            answer: WriteResponse = (lost, tuple(_outcome(job) for job in jobs))
            try:
                sock.sendall(_frame(answer))
            except OSError:
                break
    finally:
        with contextlib.suppress(Exception):
            conn.close()
