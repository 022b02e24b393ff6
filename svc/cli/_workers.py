"""``svc serve``'s processes: one serving process, or N workers under a supervisor.

``run_serve(plan)`` serves in this process with ``workers == 1``. With more,
the parent opens and migrates the store once, binds the sockets and keeps them,
and a ``Supervisor`` runs the workers (spawned; each serves the same app on the
parent's sockets): one that exits for any reason is replaced and serves the
same sockets, the replacement counting itself in ``svc_worker_restarts_total``;
more than ``plan.max_worker_restarts`` replacements within a minute stop the
service (exit 1). SIGINT/SIGTERM tell every worker to drain through a
multiprocessing event; the parent then closes its sockets and waits for them.

Like ``_runtime``, this module's top level imports only the standard library:
spawned workers import it before they set ``PROMETHEUS_MULTIPROC_DIR``.
"""

from __future__ import annotations

import os
import signal
from typing import TYPE_CHECKING, Any, Final

from ._runtime import (
    ServePlan,
    _handlers_line,
    _hypercorn_config,
    _mode,
    _say,
    _serve_single,
    close_store,
    open_store,
    partial_watch,
    serve_once,
    show_svc_log_lines,
)

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.synchronize import Event as MpEvent

    import trio

    from ..dev import DevSession

__all__ = ["run_serve"]

_STOP_MARGIN_SECONDS: Final = 5.0
"""A worker still running this long after its drain window and store close is killed."""


def run_serve(plan: ServePlan, *, dev: DevSession | None = None) -> int:
    """Serve ``plan`` until a signal; returns the process exit code (0 after a clean shutdown).

    Raises ``ServeError`` when the store cannot be opened, the address cannot
    be bound or the app refuses to start. ``dev`` (``svc dev``, one process) mounts the
    dev routes and their session.
    """
    import trio

    show_svc_log_lines()
    try:
        if plan.workers <= 1:
            return trio.run(_serve_single, plan, dev)
        return _run_workers(plan)
    except BaseExceptionGroup as group:
        raise _one_error(group) from None
    except OSError as exc:
        raise _unexpected(exc) from None


def _unexpected(exc: BaseException | None) -> Exception:
    """An error no refusal describes, named by its class only (its message may hold a path)."""
    from ._errors import ServeError

    name = type(exc).__name__ if exc is not None else "unknown"
    return ServeError(f"the service stopped on an unexpected {name}.")


def _one_error(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The first meaningful error of a trio exception group, as the CLI reports it."""
    from ._errors import CliError

    leaves: list[BaseException] = []

    def walk(error: BaseException) -> None:
        if isinstance(error, BaseExceptionGroup):
            for inner in error.exceptions:
                walk(inner)
        else:
            leaves.append(error)

    walk(group)
    for leaf in leaves:
        if isinstance(leaf, CliError | KeyboardInterrupt):
            return leaf
    return _unexpected(leaves[0] if leaves else None)


# --- a worker (child) ----------------------------------------------------------------------


def _worker_main(
    plan: ServePlan,
    sockets: Any,
    shutdown_event: MpEvent,
    ready: Connection,
    replacement: bool,
) -> None:
    """One spawned worker: serve on the parent's sockets until the parent's event is set;
    say so on ``ready`` once serving."""
    # The parent owns shutdown: Ctrl+C reaches the whole process group, workers ignore it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if plan.multiproc_dir is not None:
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = plan.multiproc_dir
    import trio

    show_svc_log_lines()
    for sock in sockets.insecure_sockets:
        sock.listen(100)

    parent = os.getppid()

    async def wait_for_parent() -> None:
        # Shut down when the parent asks, or when it is gone (killed without a signal).
        while not shutdown_event.is_set() and os.getppid() == parent:
            await trio.sleep(0.1)

    async def serve(*, task_status: trio.TaskStatus[list[str]]) -> None:
        await serve_once(
            plan,
            shutdown_trigger=wait_for_parent,
            sockets=sockets,
            task_status=task_status,
            replacement=replacement,
        )

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            await nursery.start(serve)
            ready.send("serving")
            ready.close()

    trio.run(main)


# --- the parent ----------------------------------------------------------------------------


def _run_workers(plan: ServePlan) -> int:
    import shutil
    import tempfile

    import trio

    directory = tempfile.mkdtemp(prefix="svc-metrics-")
    plan = _replace(plan, multiproc_dir=directory)
    try:
        # Open and migrate once before binding, so workers never race on migrations.
        trio.run(_migrate_only, plan)
        from ._serving import bind_sockets

        sockets = bind_sockets(_hypercorn_config(plan))
        try:
            return trio.run(_supervise, plan, sockets)
        finally:
            _close_sockets(sockets)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


async def _migrate_only(plan: ServePlan) -> None:
    # On the thread: the workers' stores run the writer processes; this one only migrates.
    store = await open_store(_replace(plan, sqlite_writer="thread", pg_writer="thread"))
    await close_store(store, plan.store_close_timeout)


def _close_sockets(sockets: Any) -> None:
    for sock in [*sockets.insecure_sockets, *sockets.secure_sockets]:
        sock.close()


async def _supervise(plan: ServePlan, sockets: Any) -> int:
    import multiprocessing

    import trio

    from ._supervisor import RestartPolicy, Supervisor

    ctx = multiprocessing.get_context("spawn")
    shutdown_event = ctx.Event()

    def start(slot: int, cause: str | None, ready: Connection) -> Any:
        process = ctx.Process(
            target=_worker_main,
            args=(plan, sockets, shutdown_event, ready, cause is not None),
            name=f"svc-worker-{slot}",
        )
        process.start()
        return process

    def stop_workers() -> None:
        shutdown_event.set()
        # The workers drain now; with the parent's copies closed, the kernel refuses new
        # connections as soon as the workers stop accepting.
        _close_sockets(sockets)

    binds = ", ".join(_bind_url(sock) for sock in sockets.insecure_sockets)
    supervisor = Supervisor(
        start,
        plan.workers,
        RestartPolicy(limit=plan.max_worker_restarts),
        _say,
        stop_timeout=plan.graceful_timeout + plan.store_close_timeout + _STOP_MARGIN_SECONDS,
    )
    stop = trio.Event()
    async with trio.open_nursery() as nursery:
        await nursery.start(partial_watch(stop, shutdown_event.set))
        code = await supervisor.run(
            stop,
            stop_workers,
            on_serving=lambda: _say_serving(binds, plan),
        )
        nursery.cancel_scope.cancel()
    _say("stopped.")
    return code


def _say_serving(binds: str, plan: ServePlan) -> None:
    handlers = _handlers_line(plan)
    if handlers is not None:
        _say(handlers)
    _say(f"serving {binds} ({_mode(plan)}); Ctrl+C to stop.")


def _bind_url(sock: Any) -> str:
    from hypercorn.utils import repr_socket_addr

    return f"http://{repr_socket_addr(sock.family, sock.getsockname())}"


def _replace(plan: ServePlan, **changes: Any) -> ServePlan:
    import dataclasses

    return dataclasses.replace(plan, **changes)
