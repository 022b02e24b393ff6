"""``svc serve --outbox-handler module:callable``: the outbox worker in the serving process."""

from __future__ import annotations

import signal
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
import trio
from click.testing import CliRunner

from svc.cli import cli
from svc.store import SqliteStore
from tests._support import ServeProcess, run_svc, start_serve

pytestmark = pytest.mark.slow

HANDLER = """
from pathlib import Path

async def deliver(item):
    with Path("delivered.txt").open("a") as out:
        out.write(item.id + "\\n")

async def refuse(item):
    raise RuntimeError("upstream said no")

def not_async(item):
    return None

not_callable = 42
"""


def _project(tmp_path: Path, items: list[str]) -> Path:
    """``svc init`` in ``tmp_path``, the handler module, and a store with ``items`` enqueued."""
    made = run_svc("init", str(tmp_path / "bot"))
    assert made.returncode == 0, made.stderr
    (tmp_path / "myoutbox.py").write_text(HANDLER)
    database = tmp_path / "svc.db"

    async def enqueue() -> None:
        store = SqliteStore(str(database))
        try:
            await store.migrate()
            for item in items:
                await store.enqueue_outbox_item(
                    id=item, payload_hash="h", created_at=datetime.now(UTC)
                )
        finally:
            await store.close()

    trio.run(enqueue)
    return database


def _pending(database: Path) -> int:
    async def count() -> int:
        store = SqliteStore(str(database))
        try:
            return await store.count_outbox_pending()
        finally:
            await store.close()

    return trio.run(count)


def _serve(tmp_path: Path, database: Path, handler: str) -> ServeProcess:
    return start_serve(
        "--config",
        str(tmp_path / "bot" / "svc.config.yaml"),
        "--dry-run",
        "--database",
        str(database),
        "--port",
        "0",
        "--outbox-handler",
        handler,
        cwd=tmp_path,
    )


def test_serve_runs_the_outbox_worker_and_each_item_is_delivered_once(
    tmp_path: Path, serving: list[ServeProcess]
) -> None:
    database = _project(tmp_path, ["order-1", "order-2", "order-3"])
    served = _serve(tmp_path, database, "myoutbox:deliver")
    serving.append(served)
    assert "outbox worker" in served.lines[-1]
    delivered = tmp_path / "delivered.txt"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and (
        not delivered.exists() or len(delivered.read_text().split()) < 3
    ):
        time.sleep(0.1)
    assert served.stop(signal.SIGINT) == 0
    assert sorted(delivered.read_text().split()) == ["order-1", "order-2", "order-3"]
    assert _pending(database) == 0


def test_a_failing_handler_leaves_the_item_pending_and_the_service_serving(
    tmp_path: Path, serving: list[ServeProcess]
) -> None:
    database = _project(tmp_path, ["order-9"])
    served = _serve(tmp_path, database, "myoutbox:refuse")
    serving.append(served)
    time.sleep(2.5)  # a few worker ticks
    assert served.stop(signal.SIGINT) == 0
    assert _pending(database) == 1  # rescheduled, not lost
    assert "upstream said no" not in "\n".join(served.lines) + served.stdout


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--outbox-handler", "myoutbox:deliver"], "--outbox-handler needs a store"),
        (
            ["--database", "svc.db", "--workers", "2", "--outbox-handler", "myoutbox:deliver"],
            "--outbox-handler runs one outbox worker: use it with --workers 1.",
        ),
        (
            ["--database", "svc.db", "--outbox-handler", "nomodule_xyz:deliver"],
            "--outbox-handler nomodule_xyz:deliver: module 'nomodule_xyz' cannot be imported: "
            "ModuleNotFoundError: No module named 'nomodule_xyz'",
        ),
        (
            ["--database", "svc.db", "--outbox-handler", "myoutbox:missing"],
            "--outbox-handler myoutbox:missing: "
            "AttributeError: module 'myoutbox' has no attribute 'missing'",
        ),
        (
            ["--database", "svc.db", "--outbox-handler", "myoutbox:not_callable"],
            "--outbox-handler myoutbox:not_callable: the target is not callable (type int).",
        ),
        (
            ["--database", "svc.db", "--outbox-handler", "myoutbox:not_async"],
            "--outbox-handler myoutbox:not_async: "
            "the target must be an async function of one item.",
        ),
        (
            ["--database", "svc.db", "--outbox-handler", "myoutbox"],
            "--outbox-handler myoutbox: must look like module:callable.",
        ),
    ],
)
def test_outbox_handler_refusals_exit_before_binding(
    tmp_path: Path, extra: list[str], message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = run_svc("init", str(tmp_path / "bot"))
    assert made.returncode == 0, made.stderr
    (tmp_path / "myoutbox.py").write_text(HANDLER)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "myoutbox", raising=False)
    args = ["serve", "--config", str(tmp_path / "bot" / "svc.config.yaml"), "--dry-run"]
    result = CliRunner().invoke(cli, [*args, "--port", "0", *extra])
    assert result.exit_code == 1
    assert message in result.stderr
    assert "svc: serving" not in result.stderr
