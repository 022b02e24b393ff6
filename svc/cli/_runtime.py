"""The serve runtime: hypercorn around the app in one trio nursery, with the signal watcher.

``run_serve(plan)`` opens and migrates the store before binding, serves until
SIGINT or SIGTERM, stops accepting, lets in-flight requests finish for up to
``plan.graceful_timeout`` seconds (hypercorn's graceful timeout), closes the
store within ``plan.store_close_timeout`` seconds and returns. A second signal
during shutdown only sets the same event again: it joins the shutdown already
under way. ``_workers`` runs it in one process or in N supervised workers
(each runs the same serving code on the parent's sockets).

This module's top level imports only the standard library: spawned workers
import it before they set ``PROMETHEUS_MULTIPROC_DIR``, which prometheus-client
reads once at import time.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, TypeVar

if TYPE_CHECKING:
    import trio
    from prometheus_client import CollectorRegistry

    from ..dev import DevSession
    from ..http import FlowsEndpoint, Profile, ServiceSecrets
    from ..store import PersistenceStore

__all__ = [
    "DRAIN_SECONDS",
    "STORE_CLOSE_SECONDS",
    "ServePlan",
    "load_flow_handler",
    "run_on_store",
    "serve_once",
]

T = TypeVar("T")

DRAIN_SECONDS: Final = 10.0
READ_TIMEOUT_SECONDS: Final = 120
H2_MAX_STREAMS: Final = 32
STORE_CLOSE_SECONDS: Final = 5.0
_WORKER_START_SECONDS: Final = 60.0


@dataclass(frozen=True, slots=True, kw_only=True)
class ServePlan:
    """Everything a serving process needs, in plain values (picklable for spawned workers)."""

    profile_fields: dict[str, Any]
    secrets: tuple[str, str, str, str] = field(repr=False)
    number_tokens: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    """Access tokens of the business numbers that have their own, by phone number id."""
    dry_run: bool
    sqlite_path: str | None = field(default=None, repr=False)
    postgres_dsn: str | None = field(default=None, repr=False)
    enable_groups: bool = False
    log_webhook_events: bool = False
    echo_reply: bool = False
    host: str = "127.0.0.1"
    port: int = 8787
    workers: int = 1
    flow_handler: str | None = None
    flows_private_key_pem: bytes | None = field(default=None, repr=False)
    flows_passphrase: bytes | None = field(default=None, repr=False)
    outbox_handler: str | None = None
    """``module:callable`` of the outbox handler, imported in the serving process."""
    app: str | None = None
    """``module:attribute`` of the user's facade (``--app``), imported in the serving process."""
    inbox_keys: tuple[bytes, ...] = field(default=(), repr=False)
    """The inbox keys (the writing key first) when the user's handlers run over a store."""
    handler_options: dict[str, Any] = field(default_factory=dict)
    """Fields of ``create_app``'s ``HandlerOptions``: concurrency, timeout, max_attempts,
    max_waiting (plain values: this plan is pickled for spawned workers)."""
    body_read_timeout: float = 15.0
    """Seconds a request body may take (``create_app(limits=BodyLimits(...))``)."""
    max_pending_bodies: int = 64
    """Bodies one worker reads at once (``create_app(limits=BodyLimits(...))``)."""
    sqlite_synchronous: str = "full"
    """``SqliteStore(synchronous=...)``: ``full`` or ``normal``."""
    sqlite_writer: str = "thread"
    """``SqliteStore(writer=...)`` for a file (``svc serve`` passes ``process``); an in-memory
    database keeps its writes on the thread."""
    pg_writer: str = "thread"
    """``PostgresStore(writer=...)`` (``svc serve`` passes ``process``)."""
    access_log: bool = False
    retention_seconds: float | None = None
    """``--retention``: prune records older than this many seconds, at start and hourly."""
    test_faults: tuple[str, ...] = ()
    """Test-only fault injection (``SVC_TEST_FAULT``, comma-separated; see ``TEST_FAULTS``)."""
    graceful_timeout: float = DRAIN_SECONDS
    store_close_timeout: float = STORE_CLOSE_SECONDS
    multiproc_dir: str | None = None
    max_worker_restarts: int = 10
    """``--max-worker-restarts``: worker replacements allowed within any 60 s."""
    broadcast_options: dict[str, Any] = field(default_factory=dict)
    """Fields of ``create_app``'s ``BroadcastOptions``: the sender's rate and lease."""

    def profile(self) -> Profile:
        from ..http import Profile

        return Profile(**self.profile_fields)

    def service_secrets(self) -> ServiceSecrets:
        from ..http import ServiceSecrets

        access, verify, app_secret, bearer = self.secrets
        return ServiceSecrets(
            access_token=access,
            webhook_verify_token=verify,
            webhook_app_secret=app_secret,
            service_bearer_token=bearer,
            phone_number_tokens=dict(self.number_tokens),
        )


def _say(line: str) -> None:
    print(f"svc: {line}", file=sys.stderr, flush=True)


def _store_kind(plan: ServePlan) -> str:
    if plan.sqlite_path is not None:
        return "sqlite"
    if plan.postgres_dsn is not None:
        return "postgres"
    return "none"


async def open_store(plan: ServePlan) -> PersistenceStore | None:
    """Open and migrate the plan's store (``None`` when stateless); errors become ``ServeError``."""
    return await open_store_at(
        sqlite_path=plan.sqlite_path,
        postgres_dsn=plan.postgres_dsn,
        sqlite_synchronous=plan.sqlite_synchronous,
        sqlite_writer=plan.sqlite_writer,
        pg_writer=plan.pg_writer,
    )


async def open_store_at(
    *,
    sqlite_path: str | None,
    postgres_dsn: str | None,
    sqlite_synchronous: str = "full",
    sqlite_writer: str = "thread",
    pg_writer: str = "thread",
) -> PersistenceStore | None:
    """Open and migrate the store at a SQLite path (first) or a PostgreSQL DSN, else ``None``."""
    from ..store import PersistenceError, PostgresStore, SqliteStore
    from ._errors import ServeError, describe_store_failure

    if sqlite_path is None and postgres_dsn is None:
        return None
    store: PersistenceStore
    try:
        if sqlite_path is not None:
            writer = "thread" if sqlite_path == ":memory:" else sqlite_writer
            store = SqliteStore(sqlite_path, synchronous=sqlite_synchronous, writer=writer)
        else:
            assert postgres_dsn is not None
            store = PostgresStore(postgres_dsn, writer=pg_writer)
        await store.migrate()
    except PersistenceError as exc:
        said = describe_store_failure(exc.code, exc.message, sqlite_path=sqlite_path)
        raise ServeError(said) from None
    return store


async def close_store(store: PersistenceStore | None, timeout: float) -> bool:
    """Close the store within ``timeout`` seconds, shielded from cancellation; True if it closed."""
    import trio

    if store is None:
        return True
    with trio.move_on_after(timeout) as scope:
        scope.shield = True
        await store.close()
    return not scope.cancelled_caught


def run_on_store(
    *,
    sqlite_path: str | None,
    postgres_dsn: str | None,
    work: Callable[[PersistenceStore], Awaitable[T]],
    close_timeout: float = STORE_CLOSE_SECONDS,
) -> T:
    """Open and migrate the store in a short trio run, run ``work`` on it, close it.

    A ``PersistenceError`` of ``work`` is raised to the caller, which says what failed.
    """
    import trio

    async def main() -> T:
        store = await open_store_at(sqlite_path=sqlite_path, postgres_dsn=postgres_dsn)
        assert store is not None
        try:
            return await work(store)
        finally:
            await close_store(store, close_timeout)

    return trio.run(main)


def _metrics_exposition(directory: str) -> Callable[[], bytes]:
    from prometheus_client import CollectorRegistry, generate_latest, multiprocess

    def exposition() -> bytes:
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry, path=directory)  # type: ignore[no-untyped-call]
        return bytes(generate_latest(registry))

    return exposition


def load_flow_handler(plan: ServePlan) -> FlowsEndpoint:
    """The plan's flow handler and its private key (``--flow-handler``), for ``create_app``."""
    from ..flows import load_flow_private_key
    from ..http import FlowsEndpoint
    from ._errors import SecretResolutionError, ServeError
    from ._inputs import import_callable

    assert plan.flow_handler is not None
    handler = import_callable(plan.flow_handler, "--flow-handler")
    if plan.flows_private_key_pem is None:
        raise ServeError("--flow-handler needs the flows private key.")
    try:
        key = load_flow_private_key(plan.flows_private_key_pem, plan.flows_passphrase)
    except (ValueError, TypeError):
        raise SecretResolutionError(
            "the flows private key cannot be loaded (PEM, passphrase, RSA >= 2048 bits)."
        ) from None
    return FlowsEndpoint(handler=handler, private_key=key)


def build_app(
    plan: ServePlan,
    store: PersistenceStore | None,
    registry: CollectorRegistry,
    *,
    dev: DevSession | None = None,
) -> Any:
    """The service app of ``plan`` (``svc.http.create_app``), dry-run transport when asked;
    its metrics go to ``registry``. With ``dev`` (``svc dev``), the session's capturing
    transport, runtime observer and replay sink take part (its routes are mounted by the
    caller)."""
    from ..graph import DryRunTransport
    from ..http import BodyLimits, BroadcastOptions, LogOptions, ServiceError, create_app
    from ..runtime import HandlerOptions
    from ..store import OutboxWorkerOptions
    from ..webhook import FacadeFlags
    from ._errors import ServeError
    from ._user_code import load_app, load_outbox_handler

    outbox = None
    if plan.outbox_handler is not None:
        outbox = OutboxWorkerOptions(handler=load_outbox_handler(plan.outbox_handler))
    seams: dict[str, Any] = {}
    if "kill-after-handler" in plan.test_faults:
        seams["after_run"] = _kill_after_handler
    kill_at = {fault for fault in plan.test_faults if fault in _KILL_AT}
    if kill_at:
        seams["observer"] = _killer({_KILL_AT[fault] for fault in kill_at})
    transport = DryRunTransport() if plan.dry_run else None
    telemetry_sink = None
    if dev is not None:
        transport = dev.transport
        seams["observer"] = dev.observe
        telemetry_sink = dev.telemetry_sink()
    inbox_keyring = None
    if plan.inbox_keys and store is not None:
        from ..crypto import InboxKeyring

        inbox_keyring = InboxKeyring(plan.inbox_keys)
    try:
        app = create_app(
            profile=plan.profile(),
            secrets=plan.service_secrets(),
            transport=transport,
            store=store,
            enable_group_routes=plan.enable_groups,
            facade_flags=FacadeFlags(
                log_webhook_events=plan.log_webhook_events, echo_reply=plan.echo_reply
            ),
            limits=BodyLimits(
                body_read_timeout=plan.body_read_timeout,
                max_pending_bodies=plan.max_pending_bodies,
            ),
            metrics_registry=registry,
            metrics_exposition=(
                _metrics_exposition(plan.multiproc_dir) if plan.multiproc_dir is not None else None
            ),
            flows=load_flow_handler(plan) if plan.flow_handler is not None else None,
            outbox=outbox,
            facade=load_app(plan.app) if plan.app is not None else None,
            log=LogOptions(access_log=plan.access_log),
            broadcast_options=BroadcastOptions(**plan.broadcast_options),
            handler_options=HandlerOptions(**plan.handler_options, **seams),
            telemetry_sink=telemetry_sink,
            inbox_keyring=inbox_keyring,
        )
    except ServiceError as exc:
        raise ServeError(f"the service refused its configuration ({exc.code}).") from None
    _inject_faults(app, plan.test_faults)
    return app


_KILL_AT: Final = {
    "kill-at-run-start": "RunStarted",
    "kill-at-wait-start": "WaitStarted",
    "kill-at-wait-end": "WaitEnded",
}
TEST_FAULTS: Final = frozenset({"kill-after-record", "kill-after-handler", *_KILL_AT})
"""``kill-after-record``: SIGKILL this process between recording a webhook delivery and
answering it; ``kill-after-handler``: SIGKILL it between a handler run's end and its
completion mark (the runtime's ``after_run`` seam); ``kill-at-run-start``,
``kill-at-wait-start``, ``kill-at-wait-end``: SIGKILL it at that step of a run (the
runtime's observer: before a burst is gathered, when a wait begins, when it took an
update). The crashes the reliability proofs need."""


def _killer(events: set[str]) -> Callable[[object], None]:
    """An observer that SIGKILLs this process at the first event named in ``events``."""

    def observe(event: object) -> None:
        if type(event).__name__ in events:
            os.kill(os.getpid(), signal.SIGKILL)

    return observe


def _kill_after_handler(item: object) -> None:
    """The ``kill-after-handler`` fault: the process dies before the run is marked done."""
    os.kill(os.getpid(), signal.SIGKILL)


def test_faults_from(value: str) -> tuple[str, ...]:
    """The faults ``SVC_TEST_FAULT`` names (comma-separated); an unknown one is a usage error."""
    from ._errors import CliUsageError

    faults = tuple(name.strip() for name in value.split(",") if name.strip())
    if any(name not in TEST_FAULTS for name in faults):
        raise CliUsageError("SVC_TEST_FAULT names an unknown fault.")
    return faults


def _inject_faults(app: Any, faults: tuple[str, ...]) -> None:
    """Apply the test-only faults to the app's service (never set outside the tests)."""
    if not faults:
        return
    service = app.extensions["svc"]
    if "kill-after-record" in faults:

        def kill(point: str) -> None:
            if point == "after_record":
                os.kill(os.getpid(), signal.SIGKILL)

        service.fault_hook = kill


def _hypercorn_config(plan: ServePlan) -> Any:
    from hypercorn.config import Config

    config = Config()
    host = f"[{plan.host}]" if ":" in plan.host else plan.host
    config.bind = [f"{host}:{plan.port}"]
    config.graceful_timeout = plan.graceful_timeout
    # A connection that sends nothing for this long is closed (headers never finished
    # included): above the longest a request may take (body deadline plus a 30 s upstream
    # call), so a client waiting for its answer is never cut off. Bodies have their own
    # deadline in the app; HTTP/2 streams share the app's cap on bodies read at once.
    config.read_timeout = int(max(READ_TIMEOUT_SECONDS, 2 * plan.body_read_timeout))
    config.h2_max_concurrent_streams = H2_MAX_STREAMS
    config.accesslog = None
    config.errorlog = None  # the runtime prints its own lines; hypercorn's would repeat them
    return config


def _close_when_draining(app: Any, draining: trio.Event) -> Any:
    """Answer ``Connection: close`` once the drain has begun, so keep-alive clients let go.

    Without it a pooled client's connection stays open after its last answer
    and holds the exit to the whole drain window.
    """

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return

        async def send_closing(message: Any) -> None:
            if message["type"] == "http.response.start" and draining.is_set():
                headers = [
                    (name, value)
                    for name, value in message.get("headers", [])
                    if name.lower() != b"connection"
                ]
                message = {**message, "headers": [*headers, (b"connection", b"close")]}
            await send(message)

        await app(scope, receive, send_closing)

    return wrapped


async def serve_once(
    plan: ServePlan,
    *,
    shutdown_trigger: Callable[[], Awaitable[None]],
    sockets: Any = None,
    task_status: trio.TaskStatus[list[str]] | None = None,
    replacement: bool = False,
    dev: DevSession | None = None,
) -> bool:
    """Open the store, serve the app until ``shutdown_trigger`` returns, close the store.

    Returns whether the store closed within its timeout. A worker (``plan.multiproc_dir``
    set) registers ``svc_worker_restarts_total``, counting itself when it is a
    ``replacement`` for one that exited. ``dev`` (``svc dev`` only) mounts the dev routes
    in front of the app and posts its statuses; its event streams end at the shutdown.
    """
    import trio
    from hypercorn.utils import wrap_app
    from prometheus_client import CollectorRegistry

    from ._serving import ConnectionGuard, serve_guarded
    from ._supervisor import count_restart

    store = await open_store(plan)
    draining = trio.Event()
    registry = CollectorRegistry()
    if plan.multiproc_dir is not None:
        count_restart(registry, replacement=replacement)

    async def trigger() -> None:
        await shutdown_trigger()
        draining.set()
        if dev is not None:
            dev.close()

    try:
        app = build_app(plan, store, registry, dev=dev)
        if dev is not None:
            from ..dev import mount_dev

            dev.store = store
            app = mount_dev(app, dev)
        app = _close_when_draining(app, draining)
        guard = ConnectionGuard(registry, log_stream=sys.stderr)
        config = _hypercorn_config(plan)
        async with trio.open_nursery() as background:
            if plan.retention_seconds is not None and store is not None:
                await background.start(_retention(plan.retention_seconds, store))
            if dev is not None:
                await background.start(dev.run_statuses)
            try:
                await serve_guarded(
                    wrap_app(app, config.wsgi_max_body_size, "asgi"),
                    config,
                    guard,
                    sockets=sockets,
                    shutdown_trigger=trigger,
                    task_status=task_status
                    if task_status is not None
                    else trio.TASK_STATUS_IGNORED,
                )
            finally:
                background.cancel_scope.cancel()
    finally:
        closed = await close_store(store, plan.store_close_timeout)
    return closed


def _retention(seconds: float, store: PersistenceStore) -> Callable[..., Awaitable[None]]:
    """The ``--retention`` loop of this serving process (``svc.store.run_retention``)."""
    from datetime import timedelta

    from ..store import RetentionOptions, run_retention

    options = RetentionOptions(older_than=timedelta(seconds=seconds))

    async def run(*, task_status: trio.TaskStatus[None]) -> None:
        await run_retention(store, options, task_status=task_status)

    return run


async def _watch_signals(
    stop: trio.Event, on_signal: Callable[[], None], *, task_status: trio.TaskStatus[None]
) -> None:
    """Set ``stop`` on SIGINT/SIGTERM; a later signal joins the same shutdown."""
    import trio

    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        task_status.started()
        async for signum in signals:
            if not stop.is_set():
                _say(f"{signal.Signals(signum).name} received, draining in-flight requests.")
                stop.set()
                on_signal()
            else:
                _say("shutdown already in progress.")


async def _serve_single(plan: ServePlan, dev: DevSession | None = None) -> int:
    import trio

    stop = trio.Event()
    done = trio.Event()

    async def serve(*, task_status: trio.TaskStatus[list[str]]) -> None:
        try:
            closed = await serve_once(
                plan, shutdown_trigger=stop.wait, task_status=task_status, dev=dev
            )
            _say("stopped." if closed else "stopped (the store did not close within 5 s).")
        finally:
            done.set()

    async with trio.open_nursery() as nursery:
        await nursery.start(partial_watch(stop, lambda: None))
        binds: list[str] = await nursery.start(serve)
        handlers = _handlers_line(plan)
        if handlers is not None:
            _say(handlers)
        _say(f"serving {', '.join(binds)} ({_mode(plan)}); Ctrl+C to stop.")
        await done.wait()
        nursery.cancel_scope.cancel()
    return 0


def partial_watch(
    stop: trio.Event, on_signal: Callable[[], None]
) -> Callable[..., Awaitable[None]]:
    """The signal watcher as a ``nursery.start`` target."""

    async def watch(*, task_status: trio.TaskStatus[None]) -> None:
        await _watch_signals(stop, on_signal, task_status=task_status)

    return watch


def _mode(plan: ServePlan) -> str:
    mode = "dry run" if plan.dry_run else "live"
    workers = f", {plan.workers} workers" if plan.workers > 1 else ""
    outbox = ", outbox worker" if plan.outbox_handler is not None else ""
    app = f", app {plan.app}" if plan.app is not None else ""
    return f"{mode}, store {_store_kind(plan)}{workers}{outbox}{app}"


def _handlers_line(plan: ServePlan) -> str | None:
    """The start-up line of the handler runtime, when handlers run (``--app`` or the echo)."""
    if plan.app is None and not plan.echo_reply:
        return None
    from ..runtime import HandlerOptions

    options = HandlerOptions(**plan.handler_options)  # the runtime's own defaults
    limits = (
        f"{options.concurrency} at once, {options.timeout:g} s deadline, "
        f"{options.max_attempts} attempts"
    )
    if _store_kind(plan) == "none":
        return (
            f"handlers run after the answer from memory ({limits}); without a store a crash "
            "or a stop loses the updates not yet run (give --database to keep them)."
        )
    return f"handlers run after the answer from the store's encrypted inbox ({limits})."


class _ServeLines(logging.StreamHandler):  # type: ignore[type-arg]
    """The serving process's handler of the ``svc`` loggers (one per process)."""


def show_svc_log_lines() -> None:
    """Write the ``svc`` loggers' lines from INFO up to stderr, as bare messages.

    Without a handler Python prints warnings only, so the event log
    (``SVC_LOG_WEBHOOK_EVENTS``) and the handlers' reply lines would not show.
    Every svc log line is privacy-safe (no text, phone number or user id).
    """
    logger = logging.getLogger("svc")
    if any(isinstance(handler, _ServeLines) for handler in logger.handlers):
        return
    handler = _ServeLines(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
