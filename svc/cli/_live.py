"""What a live process needs besides the click commands: environment, service settings, store.

``svc.asgi`` builds the app from these public functions (re-exported by
``svc.cli``), so the factory and ``svc serve`` read the environment, the
config and the store by the same rules (decisions.md section 2). Heavy
imports happen inside the functions, as in the commands.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..crypto import InboxKeyring
    from ..http import Profile, ServiceSecrets
    from ..runtime import HandlerOptions
    from ..store import PersistenceStore
    from ..webhook import WebhookFacade

__all__ = [
    "handler_options_from_env",
    "live_environment_from",
    "load_app",
    "load_live_inbox_keyring",
    "load_live_inbox_keys",
    "load_live_service",
    "open_migrated_store",
    "resolve_dsn",
]


def live_environment_from(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment a live process reads; ``LiveGuardError`` unless both live gates are ``1``.

    When ``environ`` names a relative dotenv file in ``SVC_ENV_FILE``, its values
    lie under ``environ`` (which wins); the process environment is never changed.
    """
    from ._errors import LiveGuardError
    from ._inputs import LIVE_GATES, check_env_file_name, live_environment

    env_file = environ.get("SVC_ENV_FILE")
    if env_file:
        return live_environment(check_env_file_name(env_file), environ)
    merged = dict(environ)
    if any(merged.get(gate) != "1" for gate in LIVE_GATES):
        raise LiveGuardError("svc.asgi serves live: it needs SVC_LIVE_ENABLE=1 and SVC_YES_LIVE=1.")
    return merged


def load_live_service(
    config_path: str, profile_name: str | None, env: Mapping[str, str]
) -> tuple[Profile, ServiceSecrets]:
    """The config file's profile (no placeholder ids) and its four secrets, read from ``env``.

    A missing or malformed secret raises an error naming its env name, never a value.
    """
    from ._config import load_config, resolve_profile, resolve_secrets

    loaded = load_config(config_path)
    profile = resolve_profile(loaded, profile_name, env, placeholders=False)
    _, section = loaded.section(profile_name)
    return profile, resolve_secrets(section, env)


def load_live_inbox_keys(
    config_path: str, profile_name: str | None, env: Mapping[str, str]
) -> tuple[bytes, ...]:
    """The profile's inbox keys from ``env`` (writing key first); an error names the env name."""
    from ._config import load_config
    from ._inbox_keys import resolve_inbox_keys

    _, section = load_config(config_path).section(profile_name)
    return resolve_inbox_keys(section, env)


def load_live_inbox_keyring(
    config_path: str, profile_name: str | None, env: Mapping[str, str]
) -> InboxKeyring:
    """``load_live_inbox_keys`` as the keyring the service seals waiting updates with."""
    from ..crypto import InboxKeyring

    return InboxKeyring(load_live_inbox_keys(config_path, profile_name, env))


def load_app(target: str, option: str = "SVC_APP") -> WebhookFacade:
    """The user's facade ``module:attribute`` names (an object with ``handles`` and ``run``,
    or a factory of one)."""
    from ._user_code import load_app as load

    facade: WebhookFacade = load(target, option)
    return facade


def resolve_dsn(env: Mapping[str, str], name: str, option: str) -> str:
    """The PostgreSQL DSN held by the env variable ``name`` (``option`` names where it came from).

    ``CliUsageError`` when ``name`` is not an env name, ``ServeError`` when it is unset;
    neither message carries the DSN.
    """
    from ._errors import ServeError
    from ._inputs import check_env_name

    dsn = env.get(check_env_name(name, option))
    if not dsn:
        raise ServeError(f"{name} is not set.")
    return dsn


def open_migrated_store(
    *, sqlite_path: str | None = None, postgres_dsn: str | None = None
) -> PersistenceStore:
    """A store at a SQLite path or a PostgreSQL DSN, migrated in a short trio run of its own.

    The instance returned is a fresh one that has never been opened: a store's
    connections belong to the trio run that opened them, and the app runs in
    another. A file or PostgreSQL store runs its webhook writes in the writer process,
    as ``svc serve`` does. Exactly one of the two locations must be given; a failed
    migration raises ``ServeError``.
    """
    import trio

    from ..store import PostgresStore, SqliteStore
    from ._errors import CliUsageError
    from ._runtime import STORE_CLOSE_SECONDS, close_store, open_store_at

    if (sqlite_path is None) == (postgres_dsn is None):
        raise CliUsageError("a store needs exactly one of a SQLite path or a PostgreSQL DSN.")

    async def migrate() -> None:
        store = await open_store_at(sqlite_path=sqlite_path, postgres_dsn=postgres_dsn)
        await close_store(store, STORE_CLOSE_SECONDS)

    trio.run(migrate)
    # As under ``svc serve``: webhook writes in the writer process, started by the first
    # batch in the serving run.
    if sqlite_path is not None:
        if sqlite_path == ":memory:":
            return SqliteStore(sqlite_path)
        return SqliteStore(sqlite_path, writer="process")
    assert postgres_dsn is not None
    return PostgresStore(postgres_dsn, writer="process")


def handler_options_from_env(env: Mapping[str, str]) -> HandlerOptions:
    """The handler runtime's settings ``env`` gives (``svc serve``'s ``--handler-*``):
    ``SVC_HANDLER_CONCURRENCY``, ``SVC_HANDLER_MAX_WAITING``, ``SVC_HANDLER_TIMEOUT``
    (seconds), ``SVC_HANDLER_MAX_ATTEMPTS``;
    ``CliUsageError`` names the variable of a value out of range."""
    from ..runtime import HandlerOptions
    from ._inputs import read_handler_settings

    settings: dict[str, Any] = read_handler_settings(env, from_env=True)
    return HandlerOptions(**settings)
