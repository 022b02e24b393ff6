"""``svc inbox list [--dead] | retry ID | drop ID``: the updates waiting for a handler run.

Listing never decrypts: a line shows the item id, the update kind, the first 12
hex characters of its queue's hash, the state, attempts, the next attempt, the
last error (a class name or a dead-letter reason) and when it was recorded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ._errors import CliUsageError
from ._inputs import parse_int
from ._store_cmd import echo_listing, item_limit, item_limit_option, run_with_store, store_options

if TYPE_CHECKING:
    from ..store import InboxItem, PersistenceStore

__all__ = ["inbox"]

_DROP_POLL = 0.1
"""Seconds between two looks at a running item being dropped."""
_HEADER = "id\tkind\tqueue\tstatus\tattempts\tnextAttemptAt\tlastError\tcreatedAt"


def _line(item: InboxItem) -> str:
    from ..store import format_timestamp

    return "\t".join(
        (
            str(item.id),
            item.kind,
            item.queue_key[:12],
            str(item.status.value),
            str(item.attempts),
            format_timestamp(item.next_attempt_at),
            item.last_error or "-",
            format_timestamp(item.created_at),
        )
    )


def _item_id(value: str) -> int:
    return parse_int(value, "ID", low=1, high=2**62)


@click.group()
def inbox() -> None:
    """The updates waiting for a handler: list, retry dead ones, drop one."""


@inbox.command("list")
@store_options
@click.option("--dead", is_flag=True, help="Only dead letters.")
@item_limit_option
def list_items(database: str | None, database_url_env: str | None, dead: bool, limit: str) -> None:
    """List inbox items (never their content)."""
    count = item_limit(limit)

    async def work(store: PersistenceStore) -> list[InboxItem]:
        return await store.list_inbox_items(status="dead" if dead else None, limit=count)

    items = run_with_store(database, database_url_env, work)
    echo_listing(_HEADER, [_line(item) for item in items])


@inbox.command("retry")
@store_options
@click.argument("item_id", metavar="ID")
def retry(database: str | None, database_url_env: str | None, item_id: str) -> None:
    """Move a dead letter back to pending, due now, with a fresh attempt budget."""
    wanted = _item_id(item_id)

    async def work(store: PersistenceStore) -> InboxItem | None:
        from ..store import utc_now

        return await store.retry_inbox_item(id=wanted, now=utc_now())

    item = run_with_store(database, database_url_env, work)
    if item is None:
        raise CliUsageError("no dead inbox item has this id.")
    click.echo(_line(item))


@inbox.command("drop")
@store_options
@click.argument("item_id", metavar="ID")
def drop(database: str | None, database_url_env: str | None, item_id: str) -> None:
    """Delete an item: its update will not run. A running item's run is stopped first (its
    sends, completion and state write refused); the command returns once it is gone."""
    wanted = _item_id(item_id)

    async def work(store: PersistenceStore) -> bool:
        import trio

        from ..store import InboxStatus, utc_now

        if not await store.drop_inbox_item(id=wanted):
            return False
        # A running item goes when its run settles, or when its lease lapses (no run left).
        while (item := await store.get_inbox_item(id=wanted)) is not None:
            if item.status is not InboxStatus.DROPPING:
                break
            expires = item.lease_expires_at
            if expires is None or expires <= utc_now():
                await store.drop_inbox_item(id=wanted)
            await trio.sleep(_DROP_POLL)
        return True

    if not run_with_store(database, database_url_env, work):
        raise CliUsageError("no inbox item has this id.")
    click.echo(f"dropped {wanted}")
