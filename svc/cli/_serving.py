"""Hypercorn's trio serving loop with every connection's task behind a guard.

Hypercorn's trio worker (0.18) runs each connection's task in its serving
nursery, so an exception one connection raises leaves that nursery and ends
the server: DATA on an HTTP/2 stream already answered (``KeyError``), a
WebSocket upgrade request followed by a stray byte (h11's
``LocalProtocolError``), a malformed ``HTTP2-Settings`` header
(``binascii.Error``). ``ConnectionGuard`` ends only that connection: its
socket is closed, the error's class is written as one ``svc.connection.error``
line and counted in ``svc_connection_errors_total{error_class}``, and every
other connection goes on. Cancellation and ``KeyboardInterrupt`` pass through.
The guarded connection also ends all its tasks once it is closed (a failed
write included), which hypercorn leaves to its reader: an HTTP/1.1 reader
parked on a pipelined request would otherwise hold its socket for ever. Its
EOF is written under the send lock, as every other write is (hypercorn's own
close writes it without the lock, beside a send another task may be making).

``serve_guarded`` is hypercorn's ``worker_serve`` (lifespan, listeners,
shutdown trigger, graceful timeout) with the guarded connection task
(``svc serve``). ``install_hypercorn_guard`` puts the same guarded class into
hypercorn's own trio worker, which has no hook for it (plain
``hypercorn --worker-class trio 'svc.asgi:create()'``).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Final, TextIO

if TYPE_CHECKING:
    import trio
    from prometheus_client import CollectorRegistry

__all__ = ["ConnectionGuard", "error_class", "install_hypercorn_guard", "serve_guarded"]

ERROR_CLASS_LIMIT: Final = 64
_PROTOCOLS: Final = {"H11Protocol": "http/1.1", "H2Protocol": "h2"}


def error_class(error: BaseException) -> str:
    """``KeyError``, ``h11.LocalProtocolError``: the class, with its package unless builtin."""
    kind = type(error)
    package = kind.__module__.partition(".")[0]
    name = kind.__qualname__ if package == "builtins" else f"{package}.{kind.__qualname__}"
    return name[:ERROR_CLASS_LIMIT]


def _leaves(error: BaseException) -> list[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    return [error]


class ConnectionGuard:
    """Runs a connection's task; an error it raises ends that connection only, logged and
    counted by class (never its message, which may hold request bytes). A connection ended
    by errors of two classes counts once under each."""

    def __init__(self, registry: CollectorRegistry, *, log_stream: TextIO) -> None:
        from prometheus_client import Counter

        self._errors = Counter(
            "svc_connection_errors_total",
            "Connections ended by an error in the protocol layer, by error class.",
            ("error_class",),
            registry=registry,
        )
        self._log_stream = log_stream

    async def run(
        self,
        serve: Callable[[], Awaitable[None]],
        connection: trio.abc.AsyncResource,
        protocol: Callable[[], str],
    ) -> None:
        """Await ``serve()``; on an error, record it; always close ``connection``."""
        import trio

        try:
            await serve()
        except* Exception as group:  # noqa: BLE001 - recorded below, then the socket closed
            # Several tasks of one connection may fail on the same cause: a class once.
            for name in dict.fromkeys(error_class(leaf) for leaf in _leaves(group)):
                self.record(name, protocol())
        finally:
            await trio.aclose_forcefully(connection)

    def record(self, name: str, protocol: str) -> None:
        """Count one ended connection and write its ``svc.connection.error`` line."""
        self._errors.labels(error_class=name).inc()
        line = {
            "level": "error",
            "event": "svc.connection.error",
            "errorClass": name,
            "protocol": protocol,
        }
        try:
            self._log_stream.write(json.dumps(line, separators=(",", ":")) + "\n")
            self._log_stream.flush()
        except (OSError, ValueError):
            pass  # counted above; a closed log stream must not end the connection's cleanup


def _protocol_of(server: Any) -> str:
    """``http/1.1`` or ``h2``: the protocol a hypercorn connection was speaking."""
    wrapper = getattr(server, "protocol", None)
    return _PROTOCOLS.get(type(getattr(wrapper, "protocol", None)).__name__, "unknown")


def guarded_server_class(guard: ConnectionGuard) -> Callable[..., Any]:
    """Hypercorn's trio ``TCPServer`` whose ``run`` goes through ``guard``, and whose
    tasks all end once its connection is closed."""
    import trio
    from hypercorn.events import Closed, RawData
    from hypercorn.trio.tcp_server import TCPServer

    class GuardedTCPServer(TCPServer):
        _ended: trio.CancelScope

        async def run(self) -> None:
            with trio.CancelScope() as self._ended:
                await guard.run(super().run, self.stream, partial(_protocol_of, self))

        async def protocol_send(self, event: Any) -> None:
            # Hypercorn tells the protocol the connection is closed (a failed write, or its
            # own close) but leaves its reader running; an HTTP/1.1 reader parked on a
            # pipelined request (h11's PAUSED) then waits for ever, holding the socket, when
            # the app was cancelled mid-answer (Quart does on a disconnect). End them all.
            if isinstance(event, RawData):
                async with self.send_lock:
                    try:
                        with trio.CancelScope(shield=True):
                            await self.stream.send_all(event.data)
                    except (trio.BrokenResourceError, trio.ClosedResourceError):
                        await self.protocol.handle(Closed())
                        self._ended.cancel()
                return
            await super().protocol_send(event)
            if isinstance(event, Closed):
                self._ended.cancel()

        async def _close(self) -> None:
            # Hypercorn writes the EOF without the send lock, from whichever task ends the
            # connection: the reader, on a request broken while the app still answers it,
            # then meets the app's next send (BusyResourceError in the app, its answer cut).
            # The EOF goes under the lock. While a send holds the lock (a peer that stops
            # reading can hold one for ever) there is no EOF: the close ends that send.
            try:
                if isinstance(self.stream, trio.abc.HalfCloseableStream) and _take(self.send_lock):
                    try:
                        await self.stream.send_eof()
                    except (trio.BrokenResourceError, trio.ClosedResourceError):
                        pass  # the peer is gone
                    finally:
                        self.send_lock.release()
            finally:
                await self.stream.aclose()

    return GuardedTCPServer


def _take(lock: trio.Lock) -> bool:
    """Hold ``lock`` when it is free now (without waiting); whether it was."""
    if lock.locked():
        return False
    lock.acquire_nowait()
    return True


def install_hypercorn_guard(guard: ConnectionGuard) -> bool:
    """Make hypercorn's own trio worker guard each connection with ``guard``.

    ``hypercorn.trio.run.worker_serve`` looks its connection class up when it
    starts serving, after the app factory ran, so replacing it here covers
    every connection of this process. Returns False (and changes nothing) when
    this hypercorn has no such class to replace.
    """
    import hypercorn.trio.run as trio_run
    from hypercorn.trio.tcp_server import TCPServer

    current = getattr(trio_run, "TCPServer", None)
    if not (isinstance(current, type) and issubclass(current, TCPServer)):
        return False
    setattr(trio_run, "TCPServer", guarded_server_class(guard))  # noqa: B010 - not re-exported
    return True


def bind_sockets(config: Any, *, backlog: int | None = None) -> Any:
    """hypercorn's sockets for ``config.bind``, listening when ``backlog`` is given.

    An address that cannot be bound (in use, not an address of this host, no
    permission) is a ``ServeError`` naming it and the system's reason, never a traceback.
    """
    from ._errors import ServeError, describe_cause

    try:
        sockets = config.create_sockets()
        if backlog is not None:
            for sock in sockets.insecure_sockets:
                sock.listen(backlog)
    except OSError as exc:
        address = ", ".join(config.bind)
        raise ServeError(f"the address {address} cannot be bound: {describe_cause(exc)}") from None
    return sockets


async def serve_guarded(
    app: Any,
    config: Any,
    guard: ConnectionGuard,
    *,
    shutdown_trigger: Callable[[], Awaitable[None]],
    sockets: Any = None,
    task_status: trio.TaskStatus[list[str]],
) -> None:
    """Serve ``app`` (hypercorn-wrapped) on plain-HTTP sockets until ``shutdown_trigger``
    returns, each connection guarded; started with the bound URLs."""
    import trio
    from hypercorn.trio.lifespan import Lifespan
    from hypercorn.trio.worker_context import WorkerContext
    from hypercorn.utils import ShutdownError, raise_shutdown, repr_socket_addr

    lifespan_state: dict[str, Any] = {}
    lifespan = Lifespan(app, config, lifespan_state)
    context = WorkerContext(None)
    server_class = guarded_server_class(guard)
    async with trio.open_nursery() as lifespan_nursery:
        await lifespan_nursery.start(lifespan.handle_lifespan)
        await lifespan.wait_for_startup()
        # Each connection's state starts as a copy of what the lifespan startup left.
        connection = partial(server_class, app, config, context, dict(lifespan_state))
        async with trio.open_nursery() as server_nursery:
            if sockets is None:
                sockets = bind_sockets(config, backlog=config.backlog)
            listeners = [
                trio.SocketListener(trio.socket.from_stdlib_socket(sock))
                for sock in sockets.insecure_sockets
            ]
            binds = [
                f"http://{repr_socket_addr(sock.family, sock.getsockname())}"
                for sock in sockets.insecure_sockets
            ]
            task_status.started(binds)
            try:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(raise_shutdown, shutdown_trigger)
                    nursery.start_soon(
                        partial(
                            trio.serve_listeners,
                            connection,
                            listeners,
                            handler_nursery=server_nursery,
                        )
                    )
                    await trio.sleep_forever()
            except BaseExceptionGroup as error:
                _, other_errors = error.split((ShutdownError, KeyboardInterrupt))
                if other_errors is not None:
                    raise other_errors from None
            finally:
                await context.terminated.set()
                server_nursery.cancel_scope.deadline = trio.current_time() + config.graceful_timeout
        await lifespan.wait_for_shutdown()
        lifespan_nursery.cancel_scope.cancel()
