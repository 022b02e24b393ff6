"""Startup: ``svc --version`` and ``svc --help`` against ``python -c pass``, and serve-to-ready.

In the same run: the median wall time of each command over ``--runs`` runs
(target: each svc command <= 6x ``python -c pass``), the modules heavy enough
to matter that ``svc --version`` imports (expected: none of Quart, hypercorn,
httpx, cryptography, pydantic), and the time from spawning ``svc serve
--dry-run`` to its first 200 on ``/healthz`` (target <= 1.5 s). One JSON line.

    .venv/bin/python bench/startup.py [--quick] [--runs 15]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import _proc

RATIO_TARGET = 6.0
READY_TARGET = 1.5
HEAVY = ("quart", "hypercorn", "httpx", "cryptography", "pydantic", "trio", "prometheus_client")
SVC = str(Path(_proc.PYTHON).parent / "svc")


def _wall(argv: list[str]) -> float:
    begin = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, cwd=_proc.ROOT)
    return time.perf_counter() - begin


def _heavy_imports(argument: str) -> list[str]:
    """Heavy top-level packages loaded by ``svc <argument>`` (``-X importtime`` on stderr)."""
    out = subprocess.run(
        [_proc.PYTHON, "-X", "importtime", "-m", "svc", argument],
        check=True,
        capture_output=True,
        cwd=_proc.ROOT,
    )
    loaded = set()
    for line in out.stderr.decode().splitlines():
        name = line.rsplit("|", 1)[-1].strip()
        loaded.add(name.split(".")[0])
    return sorted(loaded & set(HEAVY))


def _serve_ready(config: Path) -> float:
    """Seconds from spawning ``svc serve --dry-run`` to its first 200 on ``/healthz``."""
    port = _proc.free_port()
    begin = time.perf_counter()
    process = subprocess.Popen(
        [SVC, "serve", "--config", str(config), "--dry-run", "--port", str(port)],
        cwd=config.parent,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        while time.perf_counter() - begin < 30:
            if process.poll() is not None:
                raise RuntimeError(f"svc serve exited with {process.returncode}")
            if _proc.http_status(port, "/healthz") == 200:
                return time.perf_counter() - begin
            time.sleep(0.005)
        raise RuntimeError("svc serve did not answer /healthz within 30 s")
    finally:
        _proc.stop(process)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a short run (CI smoke)")
    parser.add_argument("--runs", type=int, default=None)
    args = parser.parse_args()
    runs = args.runs or (3 if args.quick else 15)
    commands = {
        "python_pass": [_proc.PYTHON, "-c", "pass"],
        "svc_version": [SVC, "--version"],
        "svc_help": [SVC, "--help"],
    }
    times: dict[str, list[float]] = {name: [] for name in commands}
    ready: list[float] = []
    with tempfile.TemporaryDirectory(prefix="svc-bench-") as tmp:
        subprocess.run([SVC, "init", tmp, "--format", "json"], check=True, capture_output=True)
        config = Path(tmp) / "svc.config.json"
        for argv in commands.values():  # warm the page cache and .pyc files
            _wall(argv)
        for _ in range(runs):
            for name, argv in commands.items():
                times[name].append(_wall(argv))
        for _ in range(max(1, runs // 3)):
            ready.append(_serve_ready(config))
    base = _proc.med(times["python_pass"])
    line: dict[str, Any] = {
        "bench": "startup",
        "quick": args.quick,
        "machine": _proc.machine(),
        "runs": runs,
    }
    for name, found in times.items():
        line[f"{name}_ms"] = round(_proc.med(found) * 1000, 1)
    for name in ("svc_version", "svc_help"):
        ratio = _proc.med(times[name]) / base
        line[f"{name}_to_python"] = round(ratio, 2)
        line[f"{name}_meets_target"] = ratio <= RATIO_TARGET
    line["ratio_target"] = RATIO_TARGET
    line["heavy_imports_version"] = _heavy_imports("--version")
    line["heavy_imports_help"] = _heavy_imports("--help")
    line["serve_ready_s"] = round(_proc.med(ready), 3)
    line["serve_ready_rounds_s"] = [round(x, 3) for x in ready]
    line["serve_ready_target_s"] = READY_TARGET
    line["serve_ready_meets_target"] = _proc.med(ready) <= READY_TARGET
    print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
