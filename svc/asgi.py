"""An app factory for plain hypercorn: ``hypercorn --worker-class trio 'svc.asgi:create()'``.

It sits beside ``svc.cli`` (it may read the environment) and follows the
live rules of decisions.md section 2, without any command-line flag:

- ``SVC_CONFIG``: the config file (required); ``SVC_PROFILE``: a profile name (optional);
- ``SVC_ENV_FILE``: a relative dotenv file (optional); the process environment wins over it;
- ``SVC_LIVE_ENABLE=1`` and ``SVC_YES_LIVE=1`` (file or environment) are required;
- the four secrets and env-referenced ids come from the names the config references;
- ``SVC_DATABASE`` (a SQLite file) or ``SVC_DATABASE_URL_ENV`` (the env name of a
  PostgreSQL DSN) adds a store, migrated before the app is returned;
- ``SVC_ENABLE_GROUPS=1`` turns the Groups routes on.

``SVC_LOG_WEBHOOK_EVENTS``/``SVC_ECHO_REPLY`` pass to the default facade as under ``svc serve``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

__all__ = ["create"]


def _environment(environ: Mapping[str, str]) -> dict[str, str]:
    from .cli._errors import LiveGuardError
    from .cli._inputs import LIVE_GATES, check_env_file_name, live_environment

    env_file = environ.get("SVC_ENV_FILE")
    if env_file:
        return live_environment(check_env_file_name(env_file), environ)
    merged = dict(environ)
    if any(merged.get(gate) != "1" for gate in LIVE_GATES):
        raise LiveGuardError("svc.asgi serves live: it needs SVC_LIVE_ENABLE=1 and SVC_YES_LIVE=1.")
    return merged


def _store(env: Mapping[str, str]) -> Any:
    """The store the environment names, migrated in a short trio run of its own."""
    import trio

    from .cli._errors import CliUsageError, ServeError
    from .cli._inputs import check_env_name
    from .cli._runtime import ServePlan, close_store, open_store
    from .store import PostgresStore, SqliteStore

    sqlite_path = env.get("SVC_DATABASE") or None
    dsn_name = env.get("SVC_DATABASE_URL_ENV") or None
    if sqlite_path is not None and dsn_name is not None:
        raise CliUsageError("SVC_DATABASE and SVC_DATABASE_URL_ENV are mutually exclusive.")
    if sqlite_path is None and dsn_name is None:
        return None
    dsn = None
    if dsn_name is not None:
        dsn = env.get(check_env_name(dsn_name, "SVC_DATABASE_URL_ENV"))
        if not dsn:
            raise ServeError(f"{dsn_name} is not set.")
    plan = ServePlan(
        profile_fields={},
        secrets=("", "", "", ""),
        dry_run=False,
        sqlite_path=sqlite_path,
        postgres_dsn=dsn,
    )

    async def migrate() -> None:
        await close_store(await open_store(plan), plan.store_close_timeout)

    trio.run(migrate)
    # A fresh instance for the app: the one above belonged to the finished trio run.
    return SqliteStore(sqlite_path) if sqlite_path is not None else PostgresStore(dsn or "")


def create(environ: Mapping[str, str] | None = None) -> Any:
    """Build the live service app from the environment (``os.environ`` unless given)."""
    from .cli._config import load_config, resolve_profile, resolve_secrets
    from .cli._errors import CliConfigError
    from .http import create_app
    from .webhook import facade_flags_from_env

    source = os.environ if environ is None else environ
    config_path = source.get("SVC_CONFIG")
    if not config_path:
        raise CliConfigError("SVC_CONFIG must name the config file.")
    env = _environment(source)
    loaded = load_config(config_path)
    profile_name = source.get("SVC_PROFILE") or None
    profile = resolve_profile(loaded, profile_name, env, placeholders=False)
    _, section = loaded.section(profile_name)
    secrets = resolve_secrets(section, env)
    return create_app(
        profile=profile,
        secrets=secrets,
        store=_store(source),
        enable_group_routes=source.get("SVC_ENABLE_GROUPS") == "1",
        facade_flags=facade_flags_from_env(source),
    )
