"""``svc serve``: flags checked, config resolved, then the runtime of ``_runtime``."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

import click

from ._errors import CliUsageError, LiveGuardError, ServeError
from ._inputs import check_env_file_name, check_env_name, parse_int

if TYPE_CHECKING:
    from ._inbox_keys import DryRunInboxKeys

__all__ = ["serve"]


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
def serve(
    config_path: str,
    profile: str | None,
    dry_run: bool,
    live: bool,
    yes_live: bool,
    env_file: str | None,
    host: str | None,
    port: str | None,
    paas: bool,
    print_routes: bool,
    database: str | None,
    database_url_env: str | None,
    enable_groups: bool,
    workers: str,
    max_worker_restarts: str,
    flow_handler: str | None,
    outbox_handler: str | None,
    app_target: str | None,
    handler_concurrency: str,
    handler_max_waiting: str,
    handler_timeout: str,
    handler_max_attempts: str,
    body_read_timeout: str,
    max_pending_bodies: str,
    sqlite_synchronous: str,
    sqlite_writer: str,
    pg_writer: str,
    access_log: bool,
    retention: str | None,
    broadcast_rate: str | None,
    broadcast_lease: str | None,
) -> None:
    """Run the service (dry run, or live with its three flags and gates)."""
    if dry_run == live:
        raise CliUsageError("choose one mode: --dry-run, or --live --yes-live --env-file FILE.")
    if dry_run and yes_live:
        raise CliUsageError("--yes-live belongs to live mode, not --dry-run.")
    if live and (not yes_live or env_file is None):
        raise LiveGuardError("--live, --yes-live and --env-file must be given together.")
    if database is not None and database_url_env is not None:
        raise CliUsageError("--database and --database-url-env are mutually exclusive.")
    if database is not None and (not database or "\x00" in database):
        raise CliUsageError("--database must be a SQLite file path.")
    if database_url_env is not None:
        check_env_name(database_url_env, "--database-url-env")
    worker_count = parse_int(workers, "--workers", low=1, high=64)
    restart_limit = parse_int(max_worker_restarts, "--max-worker-restarts", low=0, high=1000)
    body_seconds = parse_int(body_read_timeout, "--body-read-timeout", low=1, high=3600)
    pending_bodies = parse_int(max_pending_bodies, "--max-pending-bodies", low=1, high=100_000)
    handler_settings: dict[str, float] = {
        "concurrency": parse_int(handler_concurrency, "--handler-concurrency", low=1, high=1024),
        "max_waiting": parse_int(handler_max_waiting, "--handler-max-waiting", low=0, high=100_000),
        "timeout": parse_int(handler_timeout, "--handler-timeout", low=1, high=86_400),
        "max_attempts": parse_int(handler_max_attempts, "--handler-max-attempts", low=1, high=100),
    }
    if outbox_handler is not None and database is None and database_url_env is None:
        raise CliUsageError(
            "--outbox-handler needs a store: give --database or --database-url-env."
        )
    if outbox_handler is not None and worker_count > 1:
        raise CliUsageError("--outbox-handler runs one outbox worker: use it with --workers 1.")
    retention_seconds = None
    if retention is not None:
        from ._store_cmd import parse_duration

        retention_seconds = parse_duration(retention, "--retention").total_seconds()
        if database is None and database_url_env is None:
            raise CliUsageError("--retention needs a store: give --database or --database-url-env.")
    port_number = parse_int(port, "--port", low=0, high=65535) if port is not None else None
    broadcast_options: dict[str, float] = {}
    if broadcast_rate is not None:
        broadcast_options["rate_per_second"] = parse_int(
            broadcast_rate, "--broadcast-rate", low=1, high=1000
        )
    if broadcast_lease is not None:
        broadcast_options["lease"] = parse_int(
            broadcast_lease, "--broadcast-lease", low=2, high=3600
        )
    env_path = check_env_file_name(env_file) if env_file is not None else None

    from ._config import load_config, resolve_profile, resolve_secrets
    from ._runtime import ServePlan, test_faults_from
    from ._workers import run_serve

    config = load_config(config_path)
    environ: Mapping[str, str] = os.environ
    if env_path is not None and live:
        from ._inputs import live_environment

        environ = live_environment(env_path, os.environ)
    elif env_file is not None:
        from ._config import read_env_file

        environ = read_env_file(env_file, os.environ)
    resolved = resolve_profile(config, profile, environ, placeholders=dry_run)
    _, section = config.section(profile)
    bind_host = host if host is not None else ("0.0.0.0" if paas else resolved.host)  # noqa: S104
    if port_number is not None:
        bind_port = port_number
    elif paas:
        bind_port = parse_int(os.environ.get("PORT", ""), "$PORT (with --paas)", low=1, high=65535)
    else:
        bind_port = resolved.port

    if resolved.flows_path is not None and flow_handler is None and not print_routes:
        raise CliUsageError(
            "this profile has a flows section: give --flow-handler module:callable."
        )

    if print_routes:
        from ..http import route_inventory

        for route in route_inventory(resolved, enable_group_routes=enable_groups):
            for line in route.lines():
                click.echo(line)
        return

    if dry_run:
        from ._config import dry_run_tokens
        from ._tokens import generate_service_token

        tokens = dry_run_tokens(section, environ)
        bearer, verify, app_secret = (
            tokens.service_bearer_token,
            tokens.webhook_verify_token,
            tokens.webhook_app_secret,
        )
        secrets = ("dryrun-access-" + generate_service_token(), verify, app_secret, bearer)
        number_tokens: tuple[tuple[str, str], ...] = ()
    else:
        resolved_secrets = resolve_secrets(section, environ)
        secrets = resolved_secrets.values()
        number_tokens = tuple(resolved_secrets.phone_number_tokens.items())
    from ..webhook import facade_flags_from_env
    from ._inbox_keys import dry_run_inbox_keys, inbox_keys_needed, resolve_inbox_keys

    flags = facade_flags_from_env(os.environ)
    inbox = None
    inbox_keys: tuple[bytes, ...] = ()
    if inbox_keys_needed(
        handlers=app_target is not None or flags.echo_reply,
        store=database is not None or database_url_env is not None,
    ):
        if dry_run:
            inbox = dry_run_inbox_keys(section, environ)
            inbox_keys = inbox.keys
        else:
            inbox_keys = resolve_inbox_keys(section, environ)
    dsn = None
    if database_url_env is not None:
        dsn = environ.get(database_url_env)
        if not dsn:
            raise ServeError(f"{database_url_env} is not set.")

    keys = _flows_keys(flow_handler, section, resolved, environ)
    plan = ServePlan(
        profile_fields=_profile_fields(resolved),
        secrets=secrets,
        number_tokens=number_tokens,
        dry_run=dry_run,
        sqlite_path=database,
        postgres_dsn=dsn,
        enable_groups=enable_groups,
        log_webhook_events=flags.log_webhook_events,
        echo_reply=flags.echo_reply,
        host=bind_host,
        port=bind_port,
        workers=worker_count,
        max_worker_restarts=restart_limit,
        flow_handler=flow_handler,
        flows_private_key_pem=keys.get("flows_private_key_pem"),
        flows_passphrase=keys.get("flows_passphrase"),
        outbox_handler=outbox_handler,
        app=app_target,
        inbox_keys=inbox_keys,
        handler_options=handler_settings,
        body_read_timeout=float(body_seconds),
        max_pending_bodies=pending_bodies,
        sqlite_synchronous=sqlite_synchronous,
        sqlite_writer=sqlite_writer,
        pg_writer=pg_writer,
        access_log=access_log,
        retention_seconds=retention_seconds,
        test_faults=test_faults_from(os.environ.get("SVC_TEST_FAULT", "")),
        broadcast_options=broadcast_options,
    )
    if flow_handler is not None:
        from ._runtime import load_flow_handler

        load_flow_handler(plan)  # fail before binding when the handler cannot be imported
    if outbox_handler is not None:
        from ._user_code import load_outbox_handler

        load_outbox_handler(outbox_handler)
    if app_target is not None:
        from ._user_code import load_app

        load_app(app_target)  # fail before binding when the app cannot be imported
    if dry_run:
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
        if inbox is not None:
            _say_inbox_keys(inbox)
    code = run_serve(plan)
    if code:
        raise SystemExit(code)


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
