"""``svc outbox list [--dead]`` and ``svc outbox retry ID``: inspect and revive outbox items.

Lines show the item id, state, attempts, next attempt and the last error's
class name: keys and metadata only, as the store keeps them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ._errors import CliUsageError
from ._store_cmd import echo_listing, item_limit, item_limit_option, run_with_store, store_options

if TYPE_CHECKING:
    from ..store import OutboxItem, PersistenceStore

__all__ = ["outbox"]


def _line(item: OutboxItem) -> str:
    from ..store import format_timestamp

    return "\t".join(
        (
            item.id,
            item.status.value,
            str(item.attempts),
            format_timestamp(item.next_attempt_at),
            item.last_error or "-",
        )
    )


@click.group()
def outbox() -> None:
    """Inspect the outbox; retry dead items."""


@outbox.command("list")
@store_options
@click.option("--dead", is_flag=True, help="Only dead items (their last attempt failed).")
@item_limit_option
def list_items(database: str | None, database_url_env: str | None, dead: bool, limit: str) -> None:
    """List outbox items, most recently updated first."""
    count = item_limit(limit)

    async def work(store: PersistenceStore) -> list[OutboxItem]:
        return await store.list_outbox_items(status="dead" if dead else None, limit=count)

    items = run_with_store(database, database_url_env, work)
    echo_listing("id\tstatus\tattempts\tnextAttemptAt\tlastError", [_line(item) for item in items])


@outbox.command("retry")
@store_options
@click.argument("item_id", metavar="ID")
def retry(database: str | None, database_url_env: str | None, item_id: str) -> None:
    """Move a dead item back to pending, due now, with a fresh attempt budget."""
    if not item_id.strip() or len(item_id) > 256 or not item_id.isprintable():
        raise CliUsageError("ID must be an outbox item id.")

    async def work(store: PersistenceStore) -> OutboxItem | None:
        from ..store import utc_now

        return await store.retry_outbox_item(id=item_id, now=utc_now())

    item = run_with_store(database, database_url_env, work)
    if item is None:
        raise CliUsageError("no dead outbox item has this id.")
    click.echo(_line(item))
