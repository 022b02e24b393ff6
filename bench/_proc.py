"""Process plumbing of the HTTP benchmarks: free ports, start a server, wait for it, stop it."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
PYTHON = sys.executable
PG_URL_ENV = "SVC_TEST_POSTGRES_URL"
DEFAULT_PG_URL = "postgresql://postgres@127.0.0.1:5432/test"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def http_status(port: int, path: str = "/healthz", timeout: float = 0.5) -> int | None:
    """One GET over a fresh connection; the status, or None when nothing answers."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
            sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
            head = sock.recv(64)
    except OSError:
        return None
    parts = head.split(b" ", 2)
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None


def wait_until_up(
    port: int, process: subprocess.Popen[bytes], *, path: str, seconds: float
) -> float:
    """Poll until ``path`` answers (any status for a bare server); return the seconds waited."""
    begin = time.perf_counter()
    while time.perf_counter() - begin < seconds:
        if process.poll() is not None:
            raise RuntimeError(f"server exited early with {process.returncode}")
        if http_status(port, path) is not None:
            return time.perf_counter() - begin
        time.sleep(0.01)
    raise RuntimeError(f"server on {port} did not answer within {seconds} s")


def stop(process: subprocess.Popen[bytes], *, seconds: float = 10.0) -> None:
    """SIGTERM the process we started (and its group), then SIGKILL if it lingers."""
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(seconds)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@contextlib.contextmanager
def server(
    argv: Sequence[str], *, port: int, ready_path: str = "/healthz", cwd: Path = ROOT
) -> Iterator[subprocess.Popen[bytes]]:
    """Run ``argv`` in its own process group until the block ends; yields it once it answers.

    ``svc`` is imported from the checkout at ``cwd`` (``PYTHONPATH``), whatever the calling
    process's own path says.
    """
    process = subprocess.Popen(
        list(argv),
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        start_new_session=True,
        env={**os.environ, "PYTHONPATH": str(cwd)},
    )
    try:
        wait_until_up(port, process, path=ready_path, seconds=60.0)
        yield process
    finally:
        stop(process)


def tree_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of ``pid`` and its descendants (Linux ``/proc``; 0 elsewhere)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    pending = [pid]
    while pending:
        current = pending.pop()
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
            for task in Path(f"/proc/{current}/task").iterdir():
                pending.extend(int(c) for c in (task / "children").read_text().split())
    return total


def bench_server(kind: str, port: int, *extra: str, root: Path = ROOT) -> list[str]:
    """``bench/_serve.py KIND`` of the checkout at ``root`` (this one by default), run by that
    checkout's own virtualenv (``root/.venv``) when it is another."""
    python = PYTHON if root == ROOT else str(root / ".venv" / "bin" / "python")
    return [python, str(root / "bench" / "_serve.py"), kind, "--port", str(port), *extra]


def load(mode: str, port: int, *extra: str) -> dict[str, object]:
    """Run the load generator process against ``port``; its JSON answer."""
    out = subprocess.run(
        [PYTHON, str(BENCH / "_loadgen.py"), mode, "--port", str(port), *extra],
        cwd=ROOT,
        capture_output=True,
        check=True,
        timeout=600,
    )
    result: dict[str, object] = json.loads(out.stdout.decode().strip().splitlines()[-1])
    return result


def median_run(runs: list[dict[str, object]]) -> dict[str, object]:
    """The run with the median req/s, plus every round's req/s."""
    ordered = sorted(runs, key=lambda r: float(r["rps"]))  # type: ignore[arg-type]
    middle = dict(ordered[len(ordered) // 2])
    middle["rps_rounds"] = [r["rps"] for r in runs]
    return middle


def postgres_url() -> str:
    return os.environ.get(PG_URL_ENV, DEFAULT_PG_URL)


def postgres_reachable(url: str) -> bool:
    try:
        import psycopg

        psycopg.connect(url, connect_timeout=3).close()
    except Exception:  # noqa: BLE001 - any failure means "no server to measure against"
        return False
    return True


def postgres_url_to_measure(skip: bool) -> str | None:
    """The PostgreSQL URL to measure against, or None when skipped or no server answers."""
    url = postgres_url()
    return None if skip or not postgres_reachable(url) else url


def drop_schema(url: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def machine_busy_ticks() -> tuple[int, int] | None:
    """(idle, total) CPU ticks of the whole machine so far (Linux ``/proc/stat``)."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            ticks = [int(part) for part in stat.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    return ticks[3] + ticks[4], sum(ticks)


def machine_busy_share(since: tuple[int, int] | None) -> float | None:
    """Share of all CPU time the machine was busy since ``since`` (``machine_busy_ticks()``)."""
    now = machine_busy_ticks()
    if since is None or now is None or now[1] <= since[1]:
        return None
    return 1.0 - (now[0] - since[0]) / (now[1] - since[1])


def machine() -> dict[str, object]:
    """The machine a JSON line was measured on: usable CPUs and the CPU model."""
    return {"nproc": cpu_count(), "cpu": cpu_model()}


def cpu_count() -> int:
    return len(os.sched_getaffinity(0))


def cpu_model() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown"


def med(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0


def git_head(root: Path) -> str | None:
    """The commit the checkout at ``root`` has checked out (its short hash), if git says."""
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            check=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.decode().strip() or None
