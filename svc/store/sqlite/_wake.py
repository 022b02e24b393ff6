"""Wakes across processes on one SQLite file: a datagram per commit of inbox rows.

Each watching store binds a Unix datagram socket in ``<file>.wake/`` (``<pid>-<random>.sock``,
removed when its watch ends or its store closes). A store that commits inbox rows sends one
empty datagram to every other socket there: without blocking and without ever failing the
write (a full socket already has a wake waiting; a socket nobody holds, left by a killed
process, is removed). The watcher calls ``on_signal`` once per readable turn, however many
datagrams came. A lost wake costs only latency: the runtime's poll finds the rows.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
from collections.abc import Callable
from typing import Final

import anyio

from .._errors import PersistenceError

__all__ = ["WAKE_SUFFIX", "Wakes"]

WAKE_SUFFIX: Final = ".wake"
"""The folder of the watchers' sockets: the database's path with this suffix."""
_SOCKET_SUFFIX: Final = ".sock"
_DRAIN: Final = 64
"""Datagrams read per readable turn at most (each is empty; one ``on_signal`` for all)."""


class Wakes:
    """The wake sockets of one store on one file: ``signal`` the other watchers, ``watch``."""

    __slots__ = ("_folder", "_own", "_scopes", "_sender")

    def __init__(self, database: str) -> None:
        self._folder: Final = os.path.abspath(database) + WAKE_SUFFIX
        self._own: set[str] = set()
        self._scopes: set[anyio.CancelScope] = set()
        self._sender: socket.socket | None = None

    def signal(self) -> None:
        """Send one datagram to each socket in the folder but this store's own; never blocks,
        never raises."""
        try:
            names = os.listdir(self._folder)
        except OSError:  # no folder: nobody watches yet
            return
        sender = self._sender
        if sender is None:
            sender = self._sender = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            sender.setblocking(False)
        for name in names:
            if not name.endswith(_SOCKET_SUFFIX):
                continue
            path = os.path.join(self._folder, name)
            if path in self._own:
                continue
            try:
                sender.sendto(b"", path)
            except ConnectionRefusedError:  # bound by nobody: its process died
                with contextlib.suppress(OSError):
                    os.unlink(path)
            except OSError:  # full (a wake already waits there), gone, or refused otherwise
                continue

    async def watch(self, on_signal: Callable[[], None]) -> None:
        """Bind a socket in the folder and call ``on_signal`` at once (rows may have come
        before), then whenever a datagram arrives, until cancelled or the store closes; the
        socket is removed on the way out."""
        try:
            os.makedirs(self._folder, mode=0o700, exist_ok=True)
            receiver = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        except OSError:
            raise PersistenceError("query_failed", "SQLite wake socket unavailable.") from None
        path = os.path.join(self._folder, f"{os.getpid()}-{secrets.token_hex(6)}{_SOCKET_SUFFIX}")
        scope = anyio.CancelScope()
        try:
            receiver.setblocking(False)
            try:
                receiver.bind(path)  # fails for a path over the socket address's 107 bytes
            except OSError:
                raise PersistenceError("query_failed", "SQLite wake socket unavailable.") from None
            self._own.add(path)
            self._scopes.add(scope)
            with scope:
                on_signal()
                while True:
                    await anyio.wait_readable(receiver)
                    with contextlib.suppress(BlockingIOError):
                        for _ in range(_DRAIN):
                            receiver.recv(1)
                    on_signal()
        finally:
            self._scopes.discard(scope)
            if path in self._own:
                self._own.discard(path)
                with contextlib.suppress(OSError):
                    os.unlink(path)
            receiver.close()

    def close(self) -> None:
        """Remove this store's sockets, end its watches (they return), close the sender."""
        for path in self._own:
            with contextlib.suppress(OSError):
                os.unlink(path)
        self._own.clear()
        for scope in self._scopes:
            scope.cancel()
        if self._sender is not None:
            self._sender.close()
            self._sender = None
