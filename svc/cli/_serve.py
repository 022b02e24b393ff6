"""``svc serve``: flags checked, config resolved, then the runtime of ``_runtime``.

One function per step: ``_serve_options`` checks the flags (``_ServeFlags``) into ``ServeOptions``;
``_read_config`` reads the config and the environment; ``_bind_address`` picks host and port;
``_build_plan`` resolves secrets and keys into the ``ServePlan`` the serving processes get;
``run_serve`` (``_workers``) opens the store, binds and runs.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ._errors import CliUsageError, LiveGuardError, ServeError
from ._inputs import check_env_file_name, check_store_flags, parse_int, read_handler_settings

if TYPE_CHECKING:
    from ..http import Profile
    from ._config import DryRunTokens, ProfileSection
    from ._inbox_keys import DryRunInboxKeys
    from ._runtime import ServePlan

__all__ = ["ServeOptions", "serve"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ServeOptions:
    """The flags of ``svc serve``, checked and parsed; nothing read from disk or environment."""

    config_path: str
    profile: str | None
    dry_run: bool
    live: bool
    env_file: str | None
    env_path: Path | None
    """``env_file`` checked as a relative local file name."""
    host: str | None
    port: int | None
    paas: bool
    print_routes: bool
    database: str | None
    database_url_env: str | None
    enable_groups: bool
    workers: int
    max_worker_restarts: int
    flow_handler: str | None
    outbox_handler: str | None
    app_target: str | None
    handler_options: dict[str, int]
    body_read_timeout: float
    max_pending_bodies: int
    sqlite_synchronous: str
    sqlite_writer: str
    pg_writer: str
    access_log: bool
    retention_seconds: float | None
    broadcast_options: dict[str, float]

    @property
    def has_store(self) -> bool:
        return self.database is not None or self.database_url_env is not None


@dataclass(frozen=True, slots=True, kw_only=True)
class _Setting:
    """What the config file and the environment say for the chosen profile."""

    environ: Mapping[str, str]
    profile: Profile
    section: ProfileSection


@dataclass(frozen=True, slots=True, kw_only=True)
class _DryRunNotice:
    """What a dry run prints before serving: generated tokens and inbox keys."""

    tokens: DryRunTokens
    inbox: DryRunInboxKeys | None


@dataclass(frozen=True, slots=True, kw_only=True)
class _ServeFlags:
    """The flags of ``svc serve`` as click gives them: text and switches, not yet checked."""

    config_path: str
    profile: str | None
    dry_run: bool
    live: bool
    yes_live: bool
    env_file: str | None
    host: str | None
    port: str | None
    paas: bool
    print_routes: bool
    database: str | None
    database_url_env: str | None
    enable_groups: bool
    workers: str
    max_worker_restarts: str
    flow_handler: str | None
    outbox_handler: str | None
    app_target: str | None
    handler_concurrency: str
    handler_max_waiting: str
    handler_timeout: str
    handler_max_attempts: str
    body_read_timeout: str
    max_pending_bodies: str
    sqlite_synchronous: str
    sqlite_writer: str
    pg_writer: str
    access_log: bool
    retention: str | None
    broadcast_rate: str | None
    broadcast_lease: str | None


@click.command()
@click.option("--config", "config_path", required=True, metavar="PATH", help="Config file.")
@click.option("--profile", metavar="NAME", help="Profile (default: the file's defaultProfile).")
@click.option("--dry-run", is_flag=True, help="Synthetic secrets, no upstream calls.")
@click.option("--live", is_flag=True, help="Live mode (with --yes-live and --env-file).")
@click.option("--yes-live", is_flag=True, help="Confirm live mode.")
@click.option(
    "--env-file", metavar="FILE", help="Relative dotenv file: live secrets, or dry-run tokens."
)
@click.option("--host", metavar="HOST", help="Bind address (default: the config's).")
@click.option("--port", metavar="PORT", help="Bind port 0..65535 (default: the config's).")
@click.option("--paas", is_flag=True, help="Port from $PORT, host 0.0.0.0 (unless given).")
@click.option("--print-routes", is_flag=True, help="Print the route inventory and exit.")
@click.option("--database", metavar="SQLITE_PATH", help="SQLite store file.")
@click.option("--database-url-env", metavar="ENV_NAME", help="Env name holding a PostgreSQL DSN.")
@click.option("--enable-groups", is_flag=True, help="Turn the Groups routes on.")
@click.option("--workers", default="1", metavar="N", help="Worker processes (default 1).")
@click.option(
    "--max-worker-restarts",
    default="10",
    metavar="N",
    help="With --workers: replacements of exited workers allowed within any 60 s; one more "
    "stops the service (default 10).",
)
@click.option("--flow-handler", metavar="MODULE:CALLABLE", help="Flows data-exchange handler.")
@click.option(
    "--outbox-handler",
    metavar="MODULE:CALLABLE",
    help="Run the outbox worker with this async handler (needs a store, one worker).",
)
@click.option(
    "--app",
    "app_target",
    metavar="MODULE:ATTR",
    help="Your webhook handlers: a facade (e.g. bot:facade) or a zero-argument factory of one.",
)
@click.option(
    "--handler-concurrency",
    default="8",
    metavar="N",
    help="Handler runs at once, each for another user (default 8).",
)
@click.option(
    "--handler-max-waiting",
    default="1000",
    metavar="N",
    help="Runs waiting for a user's reply without a run slot at most (default 1000).",
)
@click.option(
    "--handler-timeout",
    default="30",
    metavar="SECONDS",
    help="Deadline of one handler run; a slower run is cancelled and retried (default 30).",
)
@click.option(
    "--handler-max-attempts",
    default="5",
    metavar="N",
    help="Runs of one update at most before it becomes a dead letter (default 5).",
)
@click.option(
    "--body-read-timeout",
    default="15",
    metavar="SECONDS",
    help="Deadline for a request body; a slower one is answered 408 and closed (default 15).",
)
@click.option(
    "--max-pending-bodies",
    default="64",
    metavar="N",
    help="Request bodies one worker reads at once; beyond it 503 + Retry-After (default 64).",
)
@click.option(
    "--sqlite-synchronous",
    type=click.Choice(["full", "normal"]),
    default="full",
    help="SQLite sync at every commit (full, default) or at checkpoints (normal, faster).",
)
@click.option(
    "--sqlite-writer",
    type=click.Choice(["process", "thread"]),
    default="process",
    help="Where SQLite webhook writes run: a writer process beside the server (process, "
    "default) or the server's own thread.",
)
@click.option(
    "--pg-writer",
    type=click.Choice(["process", "thread"]),
    default="process",
    help="Where PostgreSQL webhook writes run: a writer process with its own connection "
    "(process, default) or the server's worker thread.",
)
@click.option(
    "--access-log", is_flag=True, help="One line per request: method, route, status, duration."
)
@click.option(
    "--retention",
    metavar="DURATION",
    help="Prune dedupe keys, completed claims and finished outbox items older than this "
    "(e.g. 14d), at start and hourly (needs a store).",
)
@click.option(
    "--broadcast-rate", metavar="N", help="Broadcast messages per second per number (default 80)."
)
@click.option(
    "--broadcast-lease", metavar="SECONDS", help="In-flight broadcast send lease (default 60)."
)
def serve(**flags: Any) -> None:
    """Run the service (dry run, or live with its three flags and gates)."""
    options = _serve_options(_ServeFlags(**flags))
    setting = _read_config(options)
    host, port = _bind_address(options, setting.profile)
    if (
        setting.profile.flows_path is not None
        and options.flow_handler is None
        and not options.print_routes
    ):
        raise CliUsageError(
            "this profile has a flows section: give --flow-handler module:callable."
        )
    if options.print_routes:
        _print_routes(setting.profile, options.enable_groups)
        return
    plan, notice = _build_plan(options, setting, host=host, port=port)
    _import_user_code(plan)
    if notice is not None:
        _say_dry_run(notice, plan)
    from ._workers import run_serve

    code = run_serve(plan)
    if code:
        raise SystemExit(code)


def _serve_options(flags: _ServeFlags) -> ServeOptions:
    """The flags checked in a fixed order (the first refusal is the one a user sees)."""
    _check_mode(
        dry_run=flags.dry_run, live=flags.live, yes_live=flags.yes_live, env_file=flags.env_file
    )
    check_store_flags(flags.database, flags.database_url_env)
    has_store = flags.database is not None or flags.database_url_env is not None
    worker_count, restart_limit = _worker_limits(flags.workers, flags.max_worker_restarts)
    body_seconds, pending_bodies = _body_limits(flags.body_read_timeout, flags.max_pending_bodies)
    handler_settings = read_handler_settings(asdict(flags), from_env=False)
    _check_outbox(flags.outbox_handler, has_store=has_store, workers=worker_count)
    retention_seconds = _retention_seconds(flags.retention, has_store=has_store)
    port = parse_int(flags.port, "--port", low=0, high=65535) if flags.port is not None else None
    broadcast_options = _broadcast_options(flags.broadcast_rate, flags.broadcast_lease)
    return ServeOptions(
        config_path=flags.config_path,
        profile=flags.profile,
        dry_run=flags.dry_run,
        live=flags.live,
        env_file=flags.env_file,
        env_path=check_env_file_name(flags.env_file) if flags.env_file is not None else None,
        host=flags.host,
        port=port,
        paas=flags.paas,
        print_routes=flags.print_routes,
        database=flags.database,
        database_url_env=flags.database_url_env,
        enable_groups=flags.enable_groups,
        workers=worker_count,
        max_worker_restarts=restart_limit,
        flow_handler=flags.flow_handler,
        outbox_handler=flags.outbox_handler,
        app_target=flags.app_target,
        handler_options=handler_settings,
        body_read_timeout=float(body_seconds),
        max_pending_bodies=pending_bodies,
        sqlite_synchronous=flags.sqlite_synchronous,
        sqlite_writer=flags.sqlite_writer,
        pg_writer=flags.pg_writer,
        access_log=flags.access_log,
        retention_seconds=retention_seconds,
        broadcast_options=broadcast_options,
    )


def _worker_limits(workers: str, max_worker_restarts: str) -> tuple[int, int]:
    """``--workers`` and ``--max-worker-restarts``: the processes, and their replacements
    allowed within any 60 s."""
    worker_count = parse_int(workers, "--workers", low=1, high=64)
    return worker_count, parse_int(max_worker_restarts, "--max-worker-restarts", low=0, high=1000)


def _body_limits(body_read_timeout: str, max_pending_bodies: str) -> tuple[int, int]:
    """``--body-read-timeout`` (seconds) and ``--max-pending-bodies``."""
    seconds = parse_int(body_read_timeout, "--body-read-timeout", low=1, high=3600)
    return seconds, parse_int(max_pending_bodies, "--max-pending-bodies", low=1, high=100_000)


def _check_outbox(outbox_handler: str | None, *, has_store: bool, workers: int) -> None:
    """``--outbox-handler`` needs a store and runs one outbox worker, so one worker process."""
    if outbox_handler is not None and not has_store:
        raise CliUsageError(
            "--outbox-handler needs a store: give --database or --database-url-env."
        )
    if outbox_handler is not None and workers > 1:
        raise CliUsageError("--outbox-handler runs one outbox worker: use it with --workers 1.")


def _check_mode(*, dry_run: bool, live: bool, yes_live: bool, env_file: str | None) -> None:
    """Dry run, or live with ``--yes-live`` and ``--env-file``."""
    if dry_run == live:
        raise CliUsageError("choose one mode: --dry-run, or --live --yes-live --env-file FILE.")
    if dry_run and yes_live:
        raise CliUsageError("--yes-live belongs to live mode, not --dry-run.")
    if live and (not yes_live or env_file is None):
        raise LiveGuardError("--live, --yes-live and --env-file must be given together.")


def _retention_seconds(retention: str | None, *, has_store: bool) -> float | None:
    """``--retention`` in seconds; it needs a store."""
    if retention is None:
        return None
    from ._store_cmd import parse_duration

    seconds = parse_duration(retention, "--retention").total_seconds()
    if not has_store:
        raise CliUsageError("--retention needs a store: give --database or --database-url-env.")
    return seconds


def _broadcast_options(rate: str | None, lease: str | None) -> dict[str, float]:
    """``create_app(broadcast_options=...)`` of ``--broadcast-rate`` and ``--broadcast-lease``."""
    options: dict[str, float] = {}
    if rate is not None:
        options["rate_per_second"] = parse_int(rate, "--broadcast-rate", low=1, high=1000)
    if lease is not None:
        options["lease"] = parse_int(lease, "--broadcast-lease", low=2, high=3600)
    return options


def _read_config(options: ServeOptions) -> _Setting:
    """The config file, the environment (with ``--env-file``) and the chosen profile."""
    from ._config import load_config, resolve_profile

    config = load_config(options.config_path)
    environ: Mapping[str, str] = os.environ
    if options.env_path is not None and options.live:
        from ._inputs import live_environment

        environ = live_environment(options.env_path, os.environ)
    elif options.env_file is not None:
        from ._config import read_env_file

        environ = read_env_file(options.env_file, os.environ)
    profile = resolve_profile(config, options.profile, environ, placeholders=options.dry_run)
    _, section = config.section(options.profile)
    return _Setting(environ=environ, profile=profile, section=section)


def _bind_address(options: ServeOptions, profile: Profile) -> tuple[str, int]:
    """``--host``/``--port``, else ``--paas``'s ``0.0.0.0`` and ``$PORT``, else the profile's.

    ``--host`` follows the profile's host rule: an empty one would bind every interface.
    """
    from dataclasses import replace

    from ..http import ServiceError

    if options.host is not None:
        try:
            replace(profile, host=options.host)
        except ServiceError:
            raise CliUsageError("--host must be a host name or address.") from None
    paas_host = "0.0.0.0"  # noqa: S104
    host = (
        options.host if options.host is not None else (paas_host if options.paas else profile.host)
    )
    if options.port is not None:
        return host, options.port
    if options.paas:
        return host, parse_int(os.environ.get("PORT", ""), "$PORT (with --paas)", low=1, high=65535)
    return host, profile.port


def _print_routes(profile: Profile, enable_groups: bool) -> None:
    from ..http import route_inventory

    for route in route_inventory(profile, enable_group_routes=enable_groups):
        for line in route.lines():
            click.echo(line)


def _build_plan(
    options: ServeOptions, setting: _Setting, *, host: str, port: int
) -> tuple[ServePlan, _DryRunNotice | None]:
    """The plan the serving processes get, and what a dry run prints before serving."""
    from ..webhook import facade_flags_from_env
    from ._runtime import ServePlan, test_faults_from

    secrets, number_tokens, tokens = _secrets(options, setting)
    flags = facade_flags_from_env(os.environ)
    inbox, inbox_keys = _inbox_keys(
        options, setting, handlers=options.app_target is not None or flags.echo_reply
    )
    dsn = _postgres_dsn(options, setting.environ)
    keys = _flows_keys(options.flow_handler, setting.section, setting.profile, setting.environ)
    plan = ServePlan(
        profile_fields=_profile_fields(setting.profile),
        secrets=secrets,
        number_tokens=number_tokens,
        dry_run=options.dry_run,
        sqlite_path=options.database,
        postgres_dsn=dsn,
        enable_groups=options.enable_groups,
        log_webhook_events=flags.log_webhook_events,
        echo_reply=flags.echo_reply,
        host=host,
        port=port,
        workers=options.workers,
        max_worker_restarts=options.max_worker_restarts,
        flow_handler=options.flow_handler,
        flows_private_key_pem=keys.get("flows_private_key_pem"),
        flows_passphrase=keys.get("flows_passphrase"),
        outbox_handler=options.outbox_handler,
        app=options.app_target,
        inbox_keys=inbox_keys,
        handler_options=options.handler_options,
        body_read_timeout=options.body_read_timeout,
        max_pending_bodies=options.max_pending_bodies,
        sqlite_synchronous=options.sqlite_synchronous,
        sqlite_writer=options.sqlite_writer,
        pg_writer=options.pg_writer,
        access_log=options.access_log,
        retention_seconds=options.retention_seconds,
        test_faults=test_faults_from(os.environ.get("SVC_TEST_FAULT", "")),
        broadcast_options=options.broadcast_options,
    )
    notice = _DryRunNotice(tokens=tokens, inbox=inbox) if tokens is not None else None
    return plan, notice


def _secrets(
    options: ServeOptions, setting: _Setting
) -> tuple[tuple[str, str, str, str], tuple[tuple[str, str], ...], DryRunTokens | None]:
    """The four service secrets and the per-number tokens; in a dry run, its tokens too."""
    if options.dry_run:
        from ._config import dry_run_tokens
        from ._tokens import generate_service_token

        tokens = dry_run_tokens(setting.section, setting.environ)
        access = "dryrun-access-" + generate_service_token()
        secrets = (
            access,
            tokens.webhook_verify_token,
            tokens.webhook_app_secret,
            tokens.service_bearer_token,
        )
        return secrets, (), tokens
    from ._config import resolve_secrets

    resolved = resolve_secrets(setting.section, setting.environ)
    return resolved.values(), tuple(resolved.phone_number_tokens.items()), None


def _inbox_keys(
    options: ServeOptions, setting: _Setting, *, handlers: bool
) -> tuple[DryRunInboxKeys | None, tuple[bytes, ...]]:
    """The inbox keys, when the user's handlers run over a store (a dry run may generate one)."""
    from ._inbox_keys import dry_run_inbox_keys, inbox_keys_needed, resolve_inbox_keys

    if not inbox_keys_needed(handlers=handlers, store=options.has_store):
        return None, ()
    if options.dry_run:
        inbox = dry_run_inbox_keys(setting.section, setting.environ)
        return inbox, inbox.keys
    return None, resolve_inbox_keys(setting.section, setting.environ)


def _postgres_dsn(options: ServeOptions, environ: Mapping[str, str]) -> str | None:
    """The PostgreSQL DSN that ``--database-url-env`` names; it must be set."""
    if options.database_url_env is None:
        return None
    dsn = environ.get(options.database_url_env)
    if not dsn:
        raise ServeError(f"{options.database_url_env} is not set.")
    return dsn


def _import_user_code(plan: ServePlan) -> None:
    """Import the flow handler, outbox handler and app: fail before binding when one cannot."""
    if plan.flow_handler is not None:
        from ._runtime import load_flow_handler

        load_flow_handler(plan)
    if plan.outbox_handler is not None:
        from ._user_code import load_outbox_handler

        load_outbox_handler(plan.outbox_handler)
    if plan.app is not None:
        from ._user_code import load_app

        load_app(plan.app)


def _say_dry_run(notice: _DryRunNotice, plan: ServePlan) -> None:
    """Print the dry run's generated tokens once, and which came from the environment."""
    _, verify, app_secret, bearer = plan.secrets
    tokens = notice.tokens
    for name, value in (
        ("serviceBearerToken", bearer),
        ("webhookVerifyToken", verify),
        ("webhookAppSecret", app_secret),
    ):
        if name in tokens.generated:
            print(f"dry-run {name}={value}", file=sys.stderr, flush=True)
    if tokens.from_env:
        taken = ", ".join(tokens.from_env)
        print(f"dry-run tokens from the environment: {taken}", file=sys.stderr, flush=True)
    if notice.inbox is not None:
        _say_inbox_keys(notice.inbox)


def _say_inbox_keys(inbox: DryRunInboxKeys) -> None:
    """Print a generated inbox key once, and what its loss at a restart means."""
    if inbox.generated is not None:
        print(f"dry-run inboxKey={inbox.generated}", file=sys.stderr, flush=True)
        print(
            f"dry-run: the inbox key is new at each start; updates still waiting for a handler "
            f"at a restart become key_unavailable dead letters. Set {inbox.writing_env} to "
            "this value (environment or --env-file) to keep them readable.",
            file=sys.stderr,
            flush=True,
        )
    if inbox.from_env:
        taken = ", ".join(inbox.from_env)
        print(f"dry-run inbox keys from the environment: {taken}", file=sys.stderr, flush=True)


def _profile_fields(profile: object) -> dict[str, object]:
    from dataclasses import asdict, is_dataclass

    assert is_dataclass(profile) and not isinstance(profile, type)
    return asdict(profile)


def _flows_keys(
    flow_handler: str | None, section: object, profile: object, environ: Mapping[str, str]
) -> dict[str, bytes | None]:
    if flow_handler is None:
        return {}
    from ._flows import flows_key_material

    return flows_key_material(section, profile, environ)
