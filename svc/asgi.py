"""An app factory for plain hypercorn: ``hypercorn --worker-class trio 'svc.asgi:create()'``.

It sits beside ``svc.cli`` (it may read the environment) and follows the
live rules of decisions.md section 2, without any command-line flag:

- ``SVC_CONFIG``: the config file (required); ``SVC_PROFILE``: a profile name (optional);
- ``SVC_ENV_FILE``: a relative dotenv file (optional); the process environment wins over it;
- ``SVC_LIVE_ENABLE=1`` and ``SVC_YES_LIVE=1`` (file or environment) are required;
- the four secrets and env-referenced ids come from the names the config references;
- ``SVC_DATABASE`` (a SQLite file) or ``SVC_DATABASE_URL_ENV`` (the env name of a
  PostgreSQL DSN) adds a store, migrated before the app is returned;
- ``SVC_ENABLE_GROUPS=1`` turns the Groups routes on;
- ``SVC_APP``: your webhook handlers as ``module:attribute`` (a facade, or a zero-argument
  factory of one), imported with the working folder first, as ``svc serve --app``; with a
  store it needs the profile's inbox keys (``inbox.keys``), and refuses to start without them.
  The handler runtime runs in the app's lifespan; ``SVC_HANDLER_CONCURRENCY``,
  ``SVC_HANDLER_TIMEOUT`` (seconds), ``SVC_HANDLER_MAX_ATTEMPTS`` and ``SVC_HANDLER_MAX_WAITING``
  are ``svc serve``'s
  ``--handler-*`` options.

``SVC_LOG_WEBHOOK_EVENTS``/``SVC_ECHO_REPLY`` pass to the default facade as under ``svc serve``.

Each connection is guarded as under ``svc serve``: hypercorn's trio worker has no hook
for it, so ``create()`` replaces the worker's connection class with the guarded one
(``svc.cli._serving``); an error one connection raises ends that connection only, and
``svc_connection_errors_total`` counts it on ``/metrics``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any

__all__ = ["create"]


def _store(env: Mapping[str, str]) -> Any:
    """The store the environment names (``SVC_DATABASE`` or ``SVC_DATABASE_URL_ENV``), migrated."""
    from .cli import CliUsageError, open_migrated_store, resolve_dsn

    sqlite_path = env.get("SVC_DATABASE") or None
    dsn_name = env.get("SVC_DATABASE_URL_ENV") or None
    if sqlite_path is not None and dsn_name is not None:
        raise CliUsageError("SVC_DATABASE and SVC_DATABASE_URL_ENV are mutually exclusive.")
    if sqlite_path is not None:
        return open_migrated_store(sqlite_path=sqlite_path)
    if dsn_name is not None:
        return open_migrated_store(postgres_dsn=resolve_dsn(env, dsn_name, "SVC_DATABASE_URL_ENV"))
    return None


def create(environ: Mapping[str, str] | None = None) -> Any:
    """Build the live service app from the environment (``os.environ`` unless given)."""
    from prometheus_client import CollectorRegistry

    from .cli import (
        CliConfigError,
        ConnectionGuard,
        handler_options_from_env,
        install_hypercorn_guard,
        live_environment_from,
        load_app,
        load_live_inbox_keyring,
        load_live_service,
    )
    from .http import create_app
    from .webhook import facade_flags_from_env

    source = os.environ if environ is None else environ
    config_path = source.get("SVC_CONFIG")
    if not config_path:
        raise CliConfigError("SVC_CONFIG must name the config file.")
    env = live_environment_from(source)
    profile_name = source.get("SVC_PROFILE") or None
    profile, secrets = load_live_service(config_path, profile_name, env)
    app_target = source.get("SVC_APP") or None
    facade = load_app(app_target) if app_target is not None else None
    flags = facade_flags_from_env(source)
    handler_options = handler_options_from_env(source)
    keyring = None
    if (facade is not None or flags.echo_reply) and (
        source.get("SVC_DATABASE") or source.get("SVC_DATABASE_URL_ENV")
    ):
        # Refused here, before the store is opened, when a key is missing or malformed.
        keyring = load_live_inbox_keyring(config_path, profile_name, env)
    registry = CollectorRegistry()
    app = create_app(
        profile=profile,
        secrets=secrets,
        store=_store(source),
        facade=facade,
        enable_group_routes=source.get("SVC_ENABLE_GROUPS") == "1",
        facade_flags=flags,
        metrics_registry=registry,
        handler_options=handler_options,
        inbox_keyring=keyring,
    )
    if not install_hypercorn_guard(ConnectionGuard(registry, log_stream=sys.stderr)):
        print(
            "svc: this hypercorn has no trio connection class to guard; a protocol error "
            "on one connection may stop the server.",
            file=sys.stderr,
            flush=True,
        )
    return app
