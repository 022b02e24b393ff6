"""``svc inbox list [--dead] | retry ID | drop ID`` on a real store, as docs/handlers.md runs
them: the listing shows ids, kinds, queue hash prefixes and states, never an item's content."""

from __future__ import annotations

import re
import shlex
from datetime import UTC, datetime
from pathlib import Path

import pytest
import trio
from click.testing import CliRunner

from svc.cli import cli
from svc.store import InboxRow, InboxStatus, SqliteStore

T0 = datetime(2026, 1, 1, tzinfo=UTC)
DOC = Path(__file__).resolve().parents[2] / "docs" / "handlers.md"
CONTENT = b"sealed content must never be listed"


def _seed(path: Path) -> tuple[int, int]:
    """A dead letter (``key_unavailable``) and a pending item; their ids."""

    async def main() -> tuple[int, int]:
        store = SqliteStore(path)
        await store.migrate()
        rows = [
            InboxRow(
                update_key=f"k{n}",
                queue_key=f"{n:064x}",
                phone_number_id="106540352242922",
                kind="message",
                sealed=CONTENT,
            )
            for n in (1, 2)
        ]
        await store.record_webhook_updates(
            event_key="e",
            event_hash="h",
            received_at=T0,
            update_keys=["k1", "k2"],
            inbox=rows,
        )
        [first, second] = await store.claim_inbox_items(now=T0, limit=10, lease_ms=60_000)
        assert first.lease_id is not None
        await store.mark_inbox_item_dead(
            id=first.id, lease_id=first.lease_id, now=T0, error="key_unavailable"
        )
        assert second.lease_id is not None
        await store.mark_inbox_item_failed(
            id=second.id, lease_id=second.lease_id, now=T0, retry_delay_ms=0, error="KeyError"
        )
        await store.close()
        return first.id, second.id

    return trio.run(main)


def _items(path: Path) -> dict[int, InboxStatus]:
    async def main() -> dict[int, InboxStatus]:
        store = SqliteStore(path)
        try:
            return {i.id: InboxStatus(i.status) for i in await store.list_inbox_items()}
        finally:
            await store.close()

    return trio.run(main)


def _doc_commands() -> list[list[str]]:
    [block] = re.findall(r"^```sh\n(svc inbox .*?)^```", DOC.read_text(), re.M | re.S)
    return [shlex.split(line.split("#")[0]) for line in block.strip().splitlines()]


def test_the_documented_inbox_commands_list_retry_and_drop(tmp_path: Path) -> None:
    db = tmp_path / "svc.db"
    dead, pending = _seed(db)
    runner = CliRunner()
    listed, dead_only, retried, dropped = _doc_commands()
    assert [c[:3] for c in (listed, dead_only, retried, dropped)] == [
        ["svc", "inbox", "list"],
        ["svc", "inbox", "list"],
        ["svc", "inbox", "retry"],
        ["svc", "inbox", "drop"],
    ]

    def run(command: list[str], item: int | None = None) -> str:
        args = [str(db) if a == "demo/svc.db" else a for a in command[1:]]
        if item is not None:
            args = [str(item) if a == "42" else a for a in args]
        result = runner.invoke(cli, args)
        assert result.exit_code == 0, result.output
        return result.stdout

    every = run(listed).splitlines()
    assert every[0].split("\t") == [
        "id",
        "kind",
        "queue",
        "status",
        "attempts",
        "nextAttemptAt",
        "lastError",
        "createdAt",
    ]
    rows = [line.split("\t") for line in every[1:]]
    assert [(r[0], r[1], r[2], r[3], r[6]) for r in rows] == [
        (str(dead), "message", f"{1:064x}"[:12], "dead", "key_unavailable"),
        (str(pending), "message", f"{2:064x}"[:12], "pending", "KeyError"),
    ]
    assert CONTENT.decode() not in "\n".join(every)
    assert [line.split("\t")[0] for line in run(dead_only).splitlines()[1:]] == [str(dead)]
    assert run(retried, dead).split("\t")[3] == "pending"
    assert _items(db) == {dead: InboxStatus.PENDING, pending: InboxStatus.PENDING}
    assert run(dropped, pending).strip() == f"dropped {pending}"
    assert _items(db) == {dead: InboxStatus.PENDING}


def test_an_unknown_or_malformed_id_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "svc.db"
    _, pending = _seed(db)
    runner = CliRunner()
    not_dead = runner.invoke(cli, ["inbox", "retry", str(pending), "--database", str(db)])
    assert not_dead.exit_code != 0 and "no dead inbox item" in not_dead.output
    missing = runner.invoke(cli, ["inbox", "drop", "999", "--database", str(db)])
    assert missing.exit_code != 0 and "no inbox item" in missing.output
    malformed = runner.invoke(cli, ["inbox", "drop", "x1", "--database", str(db)])
    assert malformed.exit_code != 0 and "ID must be an integer" in malformed.output
    # Every id of the range the refusal names is read (the largest is 19 digits long).
    largest = runner.invoke(cli, ["inbox", "drop", str(2**62), "--database", str(db)])
    assert largest.exit_code != 0 and "no inbox item" in largest.output
    past = runner.invoke(cli, ["inbox", "drop", str(2**62 + 1), "--database", str(db)])
    assert past.exit_code != 0 and "ID must be an integer 1..4611686018427387904" in past.output


@pytest.mark.parametrize(
    "args",
    [
        ["inbox", "list"],
        ["inbox", "retry", "1"],
        ["outbox", "list"],
        ["store", "prune", "--older-than", "30d"],
    ],
)
def test_a_store_command_never_creates_a_missing_sqlite_file(
    tmp_path: Path, args: list[str]
) -> None:
    """A mistyped path is refused: it would have read as an empty store ("0 item(s)")."""
    missing = tmp_path / "typo.db"
    result = CliRunner().invoke(cli, [*args, "--database", str(missing)])
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: --database names no SQLite file (a store command never creates one).\n"
    )
    assert not missing.exists()
