"""PostgreSQL for tests: schemas of a run on the shared server, and a server a test may stop.

The shared server (``SVC_TEST_POSTGRES_URL``) is only ever used inside schemas
named ``<run prefix>_...``: never ``public``, and :func:`drop_run_schemas`
removes every one of them when the run ends.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest


def new_run_prefix(kind: str) -> str:
    """A schema-name prefix no other run uses: ``svc_<kind>_<8 hex>``."""
    return f"svc_{kind}_{secrets.token_hex(4)}"


def with_search_path(url: str, schema: str) -> str:
    """``url`` with ``options=-c search_path=SCHEMA`` (the CLI takes a DSN, not a schema)."""
    separator = "&" if "?" in url else "?"
    return f"{url}{separator}options=-csearch_path%3D{schema}"


def drop_run_schemas(url: str, prefix: str) -> list[str]:
    """Drop every schema named ``<prefix>...`` (a run's leftovers included); return their names."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        names = [
            str(row[0])
            for row in conn.execute(
                "SELECT nspname FROM pg_namespace WHERE starts_with(nspname, %s)", (prefix,)
            ).fetchall()
        ]
        for name in names:
            conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
    return names


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PrivatePostgres:
    """A PostgreSQL server of our own (initdb + pg_ctl on a spare port) that a test may stop."""

    def __init__(self) -> None:
        found = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"))
        if not found:
            pytest.skip("no pg_ctl under /usr/lib/postgresql/*/bin for a private server")
        self.bin = found[-1].parent
        self.root = Path(tempfile.mkdtemp(prefix="svc-rel-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        self.as_user: list[str] = []
        if os.geteuid() == 0:  # initdb refuses to run as root
            shutil.chown(self.root, "postgres", "postgres")
            self.as_user = ["runuser", "-u", "postgres", "--"]
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres")
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *args: str) -> None:
        subprocess.run(
            [*self.as_user, *args], check=True, capture_output=True, timeout=120, cwd=self.root
        )

    def start(self) -> None:
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run(
            str(self.bin / "pg_ctl"),
            "-D",
            str(self.data),
            "-o",
            options,
            "-l",
            str(self.root / "log"),
            "-w",
            "-t",
            "60",
            "start",
        )

    def stop(self) -> None:
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")

    def close(self) -> None:
        subprocess.run(
            [
                *self.as_user,
                str(self.bin / "pg_ctl"),
                "-D",
                str(self.data),
                "-m",
                "immediate",
                "-w",
                "stop",
            ],
            capture_output=True,
            timeout=60,
            check=False,
        )
        shutil.rmtree(self.root, ignore_errors=True)
