"""Issue 26 items 7 and 12: ``svc messages`` reads the store directly; a nonsense cursor exits 1."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner

from svc.cli import cli
from svc.store import MessageRecord, PostgresStore, SqliteStore
from tests._support import drop_run_schemas, new_run_prefix, run_svc, with_search_path

pytestmark = pytest.mark.slow

T0 = datetime(2026, 11, 21, 10, 15, 30, tzinfo=UTC)
HEADER = "createdAt\tdirection\twaMessageId\ttype\tstatus\tfrom\tto\tuser"
REFUSED = (
    "Error: the cursor was refused (malformed_query): 'cursor' names no stored message "
    "(mistyped, or removed since): use nextCursor of the previous page, or start again "
    "without a cursor.\n"
)


async def _seed(store: SqliteStore | PostgresStore) -> None:
    await store.migrate()
    for index in range(3):
        moment = T0 + timedelta(seconds=index)
        await store.record_message(
            MessageRecord(
                row_id=f"00000000-0000-4000-8000-00000000000{index}",
                wa_message_id=f"wamid.seed{index}",
                direction="outbound",
                type="text",
                status="sent",
                to_phone="15551234567",
                created_at=moment,
                updated_at=moment,
            )
        )
    await store.close()


def _check_reads(*source: str, cwd: Path, env: dict[str, str] | None = None) -> None:
    page = run_svc("messages", "list", *source, "--limit", "2", cwd=cwd, env=env)
    assert page.returncode == 0, page.stderr
    assert page.stdout.splitlines() == [
        HEADER,
        "2026-11-21T10:15:32.000Z\toutbound\twamid.seed2\ttext\tsent\t\t15551234567\t",
        "2026-11-21T10:15:31.000Z\toutbound\twamid.seed1\ttext\tsent\t\t15551234567\t",
    ]
    assert page.stderr == "next cursor: 00000000-0000-4000-8000-000000000001\n"
    rest = run_svc(
        "messages", "list", *source, "--json", "--cursor",
        "00000000-0000-4000-8000-000000000001", cwd=cwd, env=env,
    )  # fmt: skip
    assert rest.returncode == 0, rest.stderr
    body = json.loads(rest.stdout)
    assert [item["waMessageId"] for item in body["items"]] == ["wamid.seed0"]
    assert body["nextCursor"] is None
    shown = run_svc("messages", "show", "wamid.seed0", *source, cwd=cwd, env=env)
    assert shown.returncode == 0, shown.stderr
    assert "waMessageId: wamid.seed0" in shown.stdout.splitlines()
    assert "rowId: 00000000-0000-4000-8000-000000000000" in shown.stdout.splitlines()
    nonsense = run_svc("messages", "list", *source, "--cursor", "nonsense", cwd=cwd, env=env)
    assert nonsense.returncode == 1
    assert nonsense.stderr == REFUSED
    missing = run_svc("messages", "show", "wamid.nope", *source, cwd=cwd, env=env)
    assert missing.returncode == 1
    assert missing.stderr == "Error: no message with that id in the store (not_found).\n"


async def test_messages_read_a_sqlite_store_without_a_service(tmp_path: Path) -> None:
    await _seed(SqliteStore(tmp_path / "svc.db"))
    _check_reads("--database", "svc.db", cwd=tmp_path)


async def test_messages_read_a_postgres_store_without_a_service(
    tmp_path: Path, postgres_url: str
) -> None:
    url = postgres_url
    prefix = new_run_prefix("cli")
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{prefix}_m"')
        dsn = with_search_path(url, f"{prefix}_m")
        await _seed(PostgresStore(dsn, min_size=1, max_size=2))
        _check_reads("--database-url-env", "MY_DSN", cwd=tmp_path, env={"MY_DSN": dsn})
    finally:
        drop_run_schemas(url, prefix)


def test_messages_name_what_to_give_and_never_create_a_store(tmp_path: Path) -> None:
    neither = run_svc("messages", "list", cwd=tmp_path)
    assert neither.returncode == 1
    assert neither.stderr == (
        "Error: give --config (ask the running service) or --database / --database-url-env "
        "(read the store).\n"
    )
    absent = run_svc("messages", "list", "--database", "nope.db", cwd=tmp_path)
    assert absent.returncode == 1
    assert absent.stderr == "Error: --database names no SQLite file (a read never creates one).\n"
    assert not (tmp_path / "nope.db").exists()


@pytest.mark.parametrize("mode", [["--config", "svc.config.yaml"], ["--database-url-env", "DSN"]])
def test_messages_refuse_a_missing_or_unreadable_env_file(
    project: Path, mode: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    (project / "latin1.env").write_bytes(b"DSN=caf\xe9\n")
    runner = CliRunner()
    missing = runner.invoke(cli, ["messages", "list", *mode, "--env-file", "absent.env"])
    unreadable = runner.invoke(cli, ["messages", "list", *mode, "--env-file", "latin1.env"])
    assert (missing.exit_code, missing.stderr) == (
        1,
        "Error: the env file does not exist or is not a file.\n",
    )
    assert (unreadable.exit_code, unreadable.stderr) == (1, "Error: the env file cannot be read.\n")


async def test_the_user_column_is_the_bsuid_else_the_parent_bsuid(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "svc.db")
    await store.migrate()
    users = [("US.1", "US.ENT.1"), (None, "US.ENT.2"), (None, None)]
    for index, (user, parent) in enumerate(users):
        await store.record_message(
            MessageRecord(
                row_id=f"00000000-0000-4000-8000-00000000001{index}",
                wa_message_id=f"wamid.user{index}",
                direction="inbound",
                type="text",
                status="received",
                from_phone="15551234567",
                user_id=user,
                parent_user_id=parent,
                created_at=T0 + timedelta(seconds=index),
                updated_at=T0 + timedelta(seconds=index),
            )
        )
    await store.close()
    page = run_svc("messages", "list", "--database", "svc.db", cwd=tmp_path)
    assert page.returncode == 0, page.stderr
    rows = [line.split("\t") for line in page.stdout.splitlines()[1:]]
    assert {row[2]: row[7] for row in rows} == {
        "wamid.user0": "US.1",
        "wamid.user1": "US.ENT.2",
        "wamid.user2": "",
    }
