"""Database faults under ``svc serve``: migration drift; a read-only, full or corrupt SQLite file.

Each ends in a clear startup error (exit 1, one ``svc serve:`` line, no
traceback) or a 503, never a traceback in a response and never a write
that answered 200 without being kept.
"""

from __future__ import annotations

import hashlib
import os
import resource
import shutil
import sqlite3
import stat
from pathlib import Path

import psycopg
import pytest

from svc.store import PostgresStore, SqliteStore
from tests._support import Captured, ServeProcess, make_project, run_svc, start_serve

from .conftest import error_code

pytestmark = pytest.mark.slow

DRIFT = (
    "UPDATE svc_schema_migrations SET checksum = 'f00d' || substr(checksum, 5) WHERE version = 1"
)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _assert_clear_refusal(result: object, code: str) -> None:
    assert result.returncode == 1
    stderr: str = result.stderr
    assert code in stderr
    assert "Traceback" not in stderr
    assert result.stdout == ""


async def test_migration_drift_on_sqlite_refuses_to_start_and_writes_nothing(
    tmp_path: Path, captured: Captured
) -> None:
    project = make_project(tmp_path)
    db = tmp_path / "svc.db"
    store = SqliteStore(db)
    await store.migrate()
    await store.close()
    with sqlite3.connect(db) as conn:
        conn.execute(DRIFT)
    conn.close()
    before = _digest(db)
    files_before = sorted(p.name for p in tmp_path.iterdir())
    result = run_svc(
        "serve", *project.dry_args(), "--database", "svc.db", capture=captured, cwd=tmp_path
    )
    _assert_clear_refusal(result, "migration_checksum_mismatch")
    assert _digest(db) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == files_before


@pytest.mark.postgres
async def test_migration_drift_on_postgres_refuses_to_start_and_writes_nothing(
    tmp_path: Path, captured: Captured, pg_schema: tuple[str, str]
) -> None:
    dsn, _ = pg_schema
    project = make_project(tmp_path)
    store = PostgresStore(dsn)
    await store.migrate()
    await store.close()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(DRIFT)
        snapshot = conn.execute(
            "SELECT version, checksum, applied_at FROM svc_schema_migrations ORDER BY version"
        ).fetchall()
    result = run_svc(
        "serve",
        *project.dry_args(),
        "--database-url-env",
        "SVC_REL_DB",
        capture=captured,
        cwd=tmp_path,
        env={"SVC_REL_DB": dsn},
    )
    _assert_clear_refusal(result, "migration_checksum_mismatch")
    with psycopg.connect(dsn, autocommit=True) as conn:
        after = conn.execute(
            "SELECT version, checksum, applied_at FROM svc_schema_migrations ORDER BY version"
        ).fetchall()
        counts = [
            conn.execute(f"SELECT count(*) FROM {table}").fetchone()  # noqa: S608 - fixed names
            for table in ("svc_messages", "svc_service_requests", "svc_webhook_events")
        ]
    assert after == snapshot
    assert counts == [(0,), (0,), (0,)]


def test_corrupt_sqlite_file_is_a_clear_startup_error(tmp_path: Path, captured: Captured) -> None:
    project = make_project(tmp_path)
    (tmp_path / "svc.db").write_bytes(b"this is not a database\x00" * 512)
    result = run_svc(
        "serve", *project.dry_args(), "--database", "svc.db", capture=captured, cwd=tmp_path
    )
    _assert_clear_refusal(result, "Error: the store could not be opened or migrated")


def _without_dac_override() -> list[str]:
    """A prefix that makes even root honour file modes (drops CAP_DAC_OVERRIDE)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: file modes cannot be enforced")
    caps = "-dac_override,-dac_read_search"
    return [setpriv, f"--inh-caps={caps}", f"--bounding-set={caps}"]


async def test_read_only_sqlite_file_is_a_clear_startup_error_and_stays_untouched(
    tmp_path: Path, captured: Captured, serving: list[ServeProcess]
) -> None:
    project = make_project(tmp_path)
    data = tmp_path / "data"
    data.mkdir()
    store = SqliteStore(data / "svc.db")
    await store.migrate()
    await store.close()
    before = _digest(data / "svc.db")
    (data / "svc.db").chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    data.chmod(stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP)
    prefix = _without_dac_override()
    try:
        result = run_svc(
            "serve",
            *project.dry_args(),
            "--database",
            "data/svc.db",
            "--port",
            "0",
            capture=captured,
            cwd=tmp_path,
            prefix=prefix,
        )
    finally:
        data.chmod(0o755)
    # Opening for writing fails at startup: a clear error, exit 1.
    _assert_clear_refusal(result, "Error: the store could not be opened or migrated")
    assert _digest(data / "svc.db") == before


def test_full_sqlite_file_answers_503_or_degraded_and_loses_no_acknowledged_write(
    tmp_path: Path, captured: Captured, serving: list[ServeProcess]
) -> None:
    project = make_project(tmp_path)
    # Migrate first without a limit, then serve with files capped just above their size.
    warm = start_serve(
        *project.dry_args(), "--database", "svc.db", "--port", "0", capture=captured, cwd=tmp_path
    )
    serving.append(warm)
    assert warm.stop() == 0
    cap = max(p.stat().st_size for p in tmp_path.glob("svc.db*")) + 64 * 1024

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (cap, cap))

    served = start_serve(
        *project.dry_args(),
        "--database",
        "svc.db",
        "--port",
        "0",
        capture=captured,
        cwd=tmp_path,
        preexec_fn=limit,
    )
    serving.append(served)
    kept: list[str] = []
    refused = degraded = 0
    with served.client() as client:
        for n in range(400):
            sent = client.post(
                "/api/messages/text",
                json={"to": "15551234567", "text": "fill " + "x" * 500},
                headers={"Idempotency-Key": f"full-{n}"},
            )
            assert "Traceback" not in sent.text
            if sent.status_code == 200 and "x-svc-persistence" not in sent.headers:
                kept.append(sent.json()["messages"][0]["id"])
            elif sent.status_code == 200:
                assert sent.headers["x-svc-persistence"] == "degraded"
                degraded += 1
            else:
                assert (sent.status_code, error_code(sent)) == (503, "persistence_unavailable")
                refused += 1
            if refused + degraded >= 20:
                break
        assert client.get("/healthz").status_code == 200
    assert refused + degraded >= 20, "the size limit was never reached"
    assert served.stop() == 0
    # Every send acknowledged without the degraded header is in the projection after restart.
    again = start_serve(
        *project.dry_args(), "--database", "svc.db", "--port", "0", capture=captured, cwd=tmp_path
    )
    serving.append(again)
    with again.client() as client:
        stored: set[str] = set()
        cursor = None
        while True:
            page = client.get(
                "/api/messages", params={"limit": "100", **({"cursor": cursor} if cursor else {})}
            )
            items = page.json()["items"]
            stored |= {item["waMessageId"] for item in items}
            if len(items) < 100:
                break
            cursor = str(items[-1]["rowId"])
    assert set(kept) <= stored
    assert again.stop() == 0
    print(
        f"sqlite full: sends={len(kept) + refused + degraded} kept={len(kept)} "
        f"refused={refused} degraded={degraded} lost=0"
    )
