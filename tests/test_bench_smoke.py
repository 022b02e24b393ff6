"""Every benchmark in ``bench/`` still runs: its short variant exits 0 and prints one JSON line.

Speed is not asserted here (CI machines vary); the figures live in
``docs/performance.md``. This only keeps the scripts from rotting.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
PEER_MODULES = ("pywa", "fastapi", "uvicorn")

pytestmark = pytest.mark.slow


def _run(*argv: str, timeout: float = 120.0) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, *argv],
        cwd=BENCH.parent,
        capture_output=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    lines = [line for line in done.stdout.decode().splitlines() if line.strip()]
    assert len(lines) == 1, lines
    line = json.loads(lines[0])
    assert isinstance(line, dict) and line
    return line


def _peer_missing() -> list[str]:
    return [name for name in PEER_MODULES if importlib.util.find_spec(name) is None]


@pytest.mark.parametrize(
    "argv",
    [
        ["bench/http_ingest.py", "--quick"],
        ["bench/http_ingest.py", "--quick", "--loadgen", "asyncio", "--no-postgres"],
        ["bench/send.py", "--quick"],
        ["bench/startup.py", "--quick"],
        ["bench/webhook_normalize.py"],
        ["bench/flow_endpoint.py"],
        ["bench/media_decrypt.py", "--rounds", "1"],
        ["bench/store.py", "--rows", "20000", "--adapters", "sqlite"],
        ["bench/retention.py", "--quick"],
        ["bench/broadcast.py", "--quick", "--no-postgres"],
        ["bench/inbox_cipher.py", "--rounds", "1", "--items", "200"],
        ["bench/handlers.py", "--quick"],
        ["bench/conversations.py", "--quick", "--no-postgres"],
        ["bench/crash_resume.py", "--kills", "1", "--no-postgres"],
        ["bench/first_chat.py"],
        ["bench/many_queues.py", "--queues", "300", "--claims", "3", "--no-postgres"],
    ],
    ids=lambda argv: "-".join([Path(argv[0]).stem, *(a for a in argv[1:] if a == "asyncio")]),
)
def test_benchmark_short_variant_prints_one_json_line(argv: list[str]) -> None:
    _run(*argv)


def test_handlers_short_variant_serves_a_baseline_checkout_beside_this_one() -> None:
    # This checkout as its own baseline: the baseline's servers run and are reported apart.
    root = str(Path(__file__).resolve().parent.parent)
    line = _run("bench/handlers.py", "--quick", "--loadgen", "asyncio", "--baseline", root)
    baseline = line["baseline"]
    assert isinstance(baseline, dict)
    assert baseline["ingestion_rps"] > 0
    assert baseline["ingestion_rps_noop_handler"] > 0
    assert set(baseline["answer"]) == {"no_handler", "handler_1s"}
    assert line["share_kept_over_baseline"] == round(
        line["share_kept_with_handlers"] / baseline["share_kept_with_handlers"], 3
    )


def test_backlog_short_variant_holds_the_backlog_and_names_each_figure() -> None:
    line = _run("bench/backlog.py", "--quick", "--no-postgres", "--no-baseline")
    sqlite = line["sqlite"]
    assert isinstance(sqlite, dict)
    assert set(sqlite["claim_ms"]) == {"0", "200"}
    # The held run kept the backlog standing: the probe's claims found nothing due.
    assert sqlite["claim_ms"]["200"]["current"]["claimed"] == 0
    assert set(sqlite["drain_runs_per_s"]) == {"20", "200"}
    assert sqlite["others_s"]["with_over_without"]["current"] > 0
    assert sqlite["others_s"]["draining_over_without"]["current"] > 0


@pytest.mark.postgres
def test_backlog_short_variant_claims_on_a_churned_postgres_table(postgres_url: str) -> None:
    # The largest backlog's waiting rows deleted and inserted again (ids kept, no VACUUM): the
    # probe's claims still find nothing due behind the held run.
    line = _run("bench/backlog.py", "--quick", "--no-sqlite", "--no-baseline", timeout=300)
    postgres = line["postgres"]
    assert isinstance(postgres, dict)
    assert set(postgres["claim_ms"]) == {"0", "200", "200_churned"}
    assert postgres["claim_ms"]["200_churned"]["current"]["claimed"] == 0
    assert postgres["claim_ms"]["200_churned"]["current"]["sql"]["p50"] > 0


def test_http_ingest_peer_short_variant_prints_one_json_line() -> None:
    missing = _peer_missing()
    if missing:
        pytest.skip(
            f"{', '.join(missing)} not installed: pywa is in the 'bench' extra, not in 'dev' "
            "(pip install -e '.[bench]')"
        )
    line = _run("bench/http_ingest.py", "--quick", "--peer-only")
    assert {"peer_in_process", "peer_end_to_end"} <= set(line)
