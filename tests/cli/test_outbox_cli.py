"""``svc outbox list [--dead]`` and ``svc outbox retry ID`` on a real store."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
import trio
from click.testing import CliRunner

from svc.cli import cli
from svc.store import OutboxStatus, SqliteStore

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _seed(path: Path) -> None:
    async def main() -> None:
        store = SqliteStore(path)
        await store.migrate()
        for item_id in ("dead-1", "ok-1"):
            await store.enqueue_outbox_item(id=item_id, payload_hash="h", created_at=T0)
        claimed = {i.id: i for i in await store.claim_outbox_items(now=T0, limit=10)}
        lease = claimed["dead-1"].lease_id
        assert lease is not None
        await store.mark_outbox_item_dead(id="dead-1", lease_id=lease, now=T0, error="KeyError")
        await store.close()

    trio.run(main)


def _status(path: Path, item_id: str) -> OutboxStatus:
    async def main() -> OutboxStatus:
        store = SqliteStore(path)
        try:
            items = {i.id: i for i in await store.list_outbox_items()}
        finally:
            await store.close()
        return items[item_id].status

    return trio.run(main)


def test_list_dead_then_retry_moves_the_item_back_to_pending(tmp_path: Path) -> None:
    db = tmp_path / "svc.db"
    _seed(db)
    runner = CliRunner()
    listed = runner.invoke(cli, ["outbox", "list", "--dead", "--database", str(db)])
    assert listed.exit_code == 0, listed.output
    lines = listed.stdout.splitlines()
    assert lines[0].split("\t") == ["id", "status", "attempts", "nextAttemptAt", "lastError"]
    assert [line.split("\t")[:3] for line in lines[1:]] == [["dead-1", "dead", "1"]]
    assert lines[1].endswith("\tKeyError")
    every = runner.invoke(cli, ["outbox", "list", "--database", str(db)])
    assert sorted(line.split("\t")[0] for line in every.stdout.splitlines()[1:]) == [
        "dead-1",
        "ok-1",
    ]

    retried = runner.invoke(cli, ["outbox", "retry", "dead-1", "--database", str(db)])
    assert retried.exit_code == 0, retried.output
    assert retried.stdout.split("\t")[:3] == ["dead-1", "pending", "0"]
    assert _status(db, "dead-1") is OutboxStatus.PENDING

    again = runner.invoke(cli, ["outbox", "retry", "dead-1", "--database", str(db)])
    assert again.exit_code == 1
    assert "no dead outbox item has this id" in again.output


@pytest.mark.parametrize(
    "args",
    [
        ["outbox", "list"],
        ["outbox", "list", "--database", "x.db", "--database-url-env", "SVC_DB"],
        ["outbox", "list", "--database-url-env", "not-an-env-name"],
        ["outbox", "list", "--database-url-env", "SVC_H9_UNSET_FOR_TEST"],
    ],
)
def test_store_flags_are_checked(args: list[str]) -> None:
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1
    assert "database" in result.output
