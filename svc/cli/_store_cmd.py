"""``svc store prune`` and the store flags the store commands share.

A store command opens the SQLite file (``--database``) or the PostgreSQL DSN
named by an env variable (``--database-url-env``: a DSN never travels on the
command line), migrates it, runs, and closes it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Awaitable, Callable, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Final, TypeVar

import click

from ._errors import CliUsageError, ServeError
from ._inputs import check_store_flags, parse_int

if TYPE_CHECKING:
    from ..store import PersistenceStore

__all__ = [
    "echo_listing",
    "item_limit",
    "item_limit_option",
    "parse_duration",
    "run_with_store",
    "store",
    "store_options",
]

T = TypeVar("T")
_DURATION: Final = re.compile(r"^([0-9]{1,6})([smhd])$")
_UNITS: Final = {"s": 1, "m": 60, "h": 3600, "d": 86_400}
MAX_DURATION_DAYS: Final = 3650


def parse_duration(value: str, option: str) -> timedelta:
    """``30d``, ``12h``, ``90m`` or ``45s``: more than zero, at most ten years.

    Zero is a duration, refused on purpose and said so: a horizon of zero keeps
    nothing, not even the records still in use.
    """
    found = _DURATION.fullmatch(value.strip())
    if found is None:
        raise CliUsageError(f"{option} must be a duration such as 30d, 12h, 90m or 45s.")
    seconds = int(found.group(1)) * _UNITS[found.group(2)]
    if seconds == 0:
        raise CliUsageError(
            f"{option} must be more than zero: a zero horizon keeps nothing, not even records"
            " still in use (the dedupe keys of deliveries the platform still redelivers, for"
            " up to 7 days); use a duration such as 30d."
        )
    if seconds > MAX_DURATION_DAYS * 86_400:
        raise CliUsageError(f"{option} must be at most {MAX_DURATION_DAYS}d (ten years).")
    return timedelta(seconds=seconds)


def store_options(function: Any) -> Any:
    """``--database SQLITE_PATH`` | ``--database-url-env ENV_NAME``."""
    function = click.option(
        "--database-url-env", metavar="ENV_NAME", help="Env name holding a PostgreSQL DSN."
    )(function)
    return click.option("--database", metavar="SQLITE_PATH", help="SQLite store file.")(function)


item_limit_option: Final = click.option(
    "--limit", default="100", metavar="N", help="At most N items (default 100)."
)
"""The ``--limit`` of an item listing (``inbox list``, ``outbox list``); read by ``item_limit``."""


def item_limit(limit: str) -> int:
    """The ``--limit`` of an item listing: 1 to 1000 items."""
    return parse_int(limit, "--limit", low=1, high=1000)


def echo_listing(header: str, lines: Sequence[str]) -> None:
    """An item listing: the tab-separated header and a line an item on stdout, the count on
    stderr (so a pipe reads the table alone)."""
    click.echo(header)
    for line in lines:
        click.echo(line)
    click.echo(f"{len(lines)} item(s)", err=True)


def _locate(database: str | None, database_url_env: str | None) -> tuple[str | None, str | None]:
    if (database is None) == (database_url_env is None):
        raise CliUsageError("give exactly one of --database and --database-url-env.")
    check_store_flags(database, database_url_env)
    if database is not None:
        if not os.path.isfile(database):  # a mistyped path would read as an empty store
            raise CliUsageError(
                "--database names no SQLite file (a store command never creates one)."
            )
        return database, None
    assert database_url_env is not None
    dsn = os.environ.get(database_url_env, "")
    if not dsn.strip():
        raise CliUsageError("the --database-url-env variable is not set.")
    return None, dsn


def run_with_store(
    database: str | None,
    database_url_env: str | None,
    work: Callable[[PersistenceStore], Awaitable[T]],
) -> T:
    """Open and migrate the store, run ``work`` under trio, close; store faults exit 1."""
    from ..store import PersistenceError
    from ._runtime import run_on_store

    sqlite_path, dsn = _locate(database, database_url_env)
    try:
        return run_on_store(sqlite_path=sqlite_path, postgres_dsn=dsn, work=work, close_timeout=10)
    except PersistenceError as exc:
        raise ServeError(f"the store refused the command ({exc.code}).") from None


@click.group()
def store() -> None:
    """Maintain the service's store (retention)."""


@store.command("prune")
@click.option(
    "--older-than",
    required=True,
    metavar="DURATION",
    help="Delete dedupe keys, completed claims and finished outbox items older than this.",
)
@click.option(
    "--messages-older-than",
    metavar="DURATION",
    help="Also delete projected messages and status events older than this.",
)
@store_options
def prune(
    older_than: str,
    messages_older_than: str | None,
    database: str | None,
    database_url_env: str | None,
) -> None:
    """Delete old records in small batches; print what was removed."""
    keep = parse_duration(older_than, "--older-than")
    keep_messages = (
        None
        if messages_older_than is None
        else parse_duration(messages_older_than, "--messages-older-than")
    )

    async def work(store: PersistenceStore) -> dict[str, int]:
        from ..store import RetentionOptions, prune_once

        report = await prune_once(
            store, RetentionOptions(older_than=keep, messages_older_than=keep_messages)
        )
        return {
            "webhookEvents": report.webhook_events,
            "webhookUpdates": report.webhook_updates,
            "serviceRequests": report.service_requests,
            "outboxItems": report.outbox_items,
            "messages": report.messages,
            "statusEvents": report.status_events,
        }

    counts = run_with_store(database, database_url_env, work)
    for name, count in counts.items():
        click.echo(f"{name}\t{count}")
    click.echo(f"removed {sum(counts.values())} row(s)", err=True)
