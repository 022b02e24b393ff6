"""``svc messages list|show``: read the message projection, from the service or the store.

The bearer is the profile's ``serviceBearerToken`` env reference, read from
``--env-file`` (optional) and the process environment; it travels only in the
``Authorization`` header and is never printed. With ``--database`` or
``--database-url-env`` the store is read directly instead (no service needed),
and the output is the same.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, TypeVar

import click

from svc._text import is_printable_ascii

from ._errors import CliUsageError, MessagesError
from ._local_service import SERVICE_OPTIONS, LocalService, environment

if TYPE_CHECKING:
    from ..store import PersistenceStore

__all__ = ["COLUMNS", "messages"]

COLUMNS: Final = (
    "createdAt",
    "direction",
    "waMessageId",
    "type",
    "status",
    "from",
    "to",
    "user",
)
_FIELDS: Final = {"from": "fromPhone", "to": "toPhone"}
T = TypeVar("T")


def _column(item: Mapping[str, Any], column: str) -> object:
    """A row's cell: ``user`` is its BSUID, else its parent BSUID (empty for phone-only rows)."""
    if column == "user":
        return item.get("userId") or item.get("parentUserId")
    return item.get(_FIELDS.get(column, column))


def _options(function: Any) -> Any:
    for decorator in reversed(
        [
            click.option("--config", "config_path", metavar="PATH", help="Config (service mode)."),
            *SERVICE_OPTIONS,
            click.option("--database", metavar="SQLITE_PATH", help="Read this SQLite store."),
            click.option(
                "--database-url-env", metavar="ENV_NAME", help="Read the PostgreSQL store."
            ),
        ]
    ):
        function = decorator(function)
    return function


@click.group()
def messages() -> None:
    """Read the message projection of the running local service."""


def _store_source(
    config_path: str | None, env_file: str | None, database: str | None, dsn_env: str | None
) -> tuple[str | None, str | None] | None:
    """``(sqlite_path, dsn)`` when the store is to be read directly, else ``None`` (service)."""
    if database is None and dsn_env is None:
        if config_path is None:
            raise CliUsageError(
                "give --config (ask the running service) or --database / --database-url-env "
                "(read the store)."
            )
        return None
    if database is not None and dsn_env is not None:
        raise CliUsageError("--database and --database-url-env are mutually exclusive.")
    if database is not None:
        if not database or "\x00" in database or not os.path.isfile(database):
            raise MessagesError("--database names no SQLite file (a read never creates one).")
        return database, None
    from ._inputs import check_env_name

    assert dsn_env is not None
    check_env_name(dsn_env, "--database-url-env")
    dsn = environment(env_file).get(dsn_env)
    if not dsn:
        raise MessagesError(f"{dsn_env} is not set (env file or environment).")
    return None, dsn


def _read_store(
    source: tuple[str | None, str | None], read: Callable[[PersistenceStore], Awaitable[T]]
) -> T:
    """Open (and migrate) the store in a short trio run, make one read, close it."""
    from ..store import PersistenceError
    from ._runtime import run_on_store

    try:
        return run_on_store(sqlite_path=source[0], postgres_dsn=source[1], work=read)
    except PersistenceError as exc:
        raise MessagesError(f"the store could not be read ({exc.code}).") from None


def _cell(value: object) -> str:
    text = "" if value is None else str(value)
    return text.replace("\t", " ").replace("\n", " ")


def _status_summary(items: list[Mapping[str, Any]]) -> None:
    if os.environ.get("SVC_CLI_STATUS_UI") != "1" or not sys.stderr.isatty():
        return
    counts: dict[str, int] = {}
    for item in items:
        counts[str(item.get("status"))] = counts.get(str(item.get("status")), 0) + 1
    summary = ", ".join(f"{status} {count}" for status, count in sorted(counts.items()))
    click.echo(f"status: {summary or 'no messages'}", err=True)


@messages.command(name="list")
@_options
@click.option("--limit", default="50", metavar="N", help="Page size 1..100 (default 50).")
@click.option("--cursor", metavar="ROW_ID", help="Continue after this row id.")
@click.option(
    "--user",
    metavar="ID",
    help="Only this user's messages: a phone number, a BSUID or a parent BSUID.",
)
def list_messages(
    config_path: str,
    profile: str | None,
    env_file: str | None,
    url: str | None,
    as_json: bool,
    database: str | None,
    database_url_env: str | None,
    limit: str,
    cursor: str | None,
    user: str | None,
) -> None:
    """One tab-separated line per message; the next cursor goes to stderr.

    ``--user`` keeps the rows of one user, whichever identifier (phone, BSUID,
    parent BSUID) names it once the service has linked them.
    """
    from svc.graph import is_phone_number, is_user_id

    from ._inputs import parse_int

    query = {"limit": str(parse_int(limit, "--limit", low=1, high=100))}
    if cursor is not None:
        if not cursor or not is_printable_ascii(cursor) or len(cursor) > 256:
            raise CliUsageError("--cursor must be a row id from a previous page.")
        query["cursor"] = cursor
    if user is not None:
        if not (is_phone_number(user) or is_user_id(user)):
            raise CliUsageError(
                "--user must be a phone number (digits), a BSUID (US.1234...) or a parent BSUID."
            )
        query["user"] = user
    source = _store_source(config_path, env_file, database, database_url_env)
    if source is None:
        assert config_path is not None
        with LocalService(config_path, profile, env_file, url, timeout=10.0) as service:
            page = service.call("GET", "/messages", query=query)
    else:
        count = int(query["limit"])
        page = _read_store(source, lambda store: _store_page(store, count, cursor, user))
    if as_json:
        click.echo(json.dumps(page, ensure_ascii=False))
        return
    items = page.get("items", []) if isinstance(page, dict) else []
    click.echo("\t".join(COLUMNS))
    for item in items:
        click.echo("\t".join(_cell(_column(item, c)) for c in COLUMNS))
    next_cursor = page.get("nextCursor") if isinstance(page, dict) else None
    if next_cursor:
        click.echo(f"next cursor: {next_cursor}", err=True)
    _status_summary(items)


@messages.command(name="show")
@click.argument("message_id", metavar="MESSAGE_ID")
@_options
def show_message(
    message_id: str,
    config_path: str,
    profile: str | None,
    env_file: str | None,
    url: str | None,
    as_json: bool,
    database: str | None,
    database_url_env: str | None,
) -> None:
    """One ``key: value`` line per field of one message (its waMessageId)."""
    from urllib.parse import quote

    if not message_id or len(message_id) > 256 or not message_id.isprintable() or "/" in message_id:
        raise CliUsageError("MESSAGE_ID must be a message id (no '/', no control characters).")
    source = _store_source(config_path, env_file, database, database_url_env)
    if source is None:
        assert config_path is not None
        with LocalService(config_path, profile, env_file, url, timeout=10.0) as service:
            record = service.call("GET", "/messages/" + quote(message_id, safe=""))
    else:
        record = _read_store(source, lambda store: _store_record(store, message_id))
    if as_json:
        click.echo(json.dumps(record, ensure_ascii=False))
        return
    if isinstance(record, dict):
        for key, value in record.items():
            click.echo(f"{key}: {_cell(value)}")
    if isinstance(record, dict):
        _status_summary([record])


async def _store_page(
    store: PersistenceStore, limit: int, cursor: str | None, user: str | None
) -> dict[str, Any]:
    """The page the service would answer, from the store; the service's cursor rule applies."""
    from ..http import CURSOR_REFUSED, message_json

    page = await store.list_messages(limit=limit, before_row_id=cursor, user=user)
    if not page.cursor_found:
        raise MessagesError(f"the cursor was refused (malformed_query): {CURSOR_REFUSED}")
    return {"items": [message_json(r) for r in page.items], "nextCursor": page.next_cursor}


async def _store_record(store: PersistenceStore, message_id: str) -> dict[str, Any]:
    from ..http import message_json

    record = await store.get_message(wa_message_id=message_id)
    if record is None:
        raise MessagesError("no message with that id in the store (not_found).")
    return message_json(record)
