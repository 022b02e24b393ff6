"""Helpers of the CLI tests: run ``python -m svc`` as a real process, start and stop ``serve``."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest

SERVING = re.compile(r"^svc: serving (http://\S+?)[, ]")
DRY_RUN_LINE = re.compile(
    r"^dry-run (serviceBearerToken|webhookVerifyToken|webhookAppSecret)=(\S+)$"
)
START_TIMEOUT = 60.0


def svc_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a child: ours without any SVC_ variable, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SVC_") and k != "PORT"}
    env.update(extra or {})
    return env


def run_svc(
    *args: str,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    input_text: str | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m svc ARGS`` to completion."""
    return subprocess.run(
        [sys.executable, "-m", "svc", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
        cwd=cwd,
        env=svc_env(env),
        input=input_text,
    )


@dataclass
class ServeProcess:
    """A running ``svc serve``: its URL, dry-run secrets, and every stderr line so far."""

    process: subprocess.Popen[str]
    lines: list[str] = field(default_factory=list)
    url: str = ""
    secrets: dict[str, str] = field(default_factory=dict)
    _queue: queue.Queue[str | None] = field(default_factory=queue.Queue)
    _thread: threading.Thread | None = None
    _stdout: str | None = None

    def _pump(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def wait_for_line(
        self, pattern: re.Pattern[str], timeout: float = START_TIMEOUT
    ) -> re.Match[str]:
        """Read stderr until a line matches ``pattern``; fail on EOF or timeout."""
        while True:
            try:
                line = self._queue.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"no line matching {pattern.pattern}: {self.lines}") from None
            if line is None:
                raise AssertionError(f"serve exited before {pattern.pattern}: {self.lines}")
            self.lines.append(line)
            match = pattern.search(line)
            if match:
                return match

    def stop(self, sig: int = signal.SIGINT, timeout: float = 30) -> int:
        """Send ``sig`` and wait for the exit code; the rest of stderr is collected."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
        code = self.process.wait(timeout=timeout)
        self.drain()
        return code

    def drain(self) -> None:
        while True:
            try:
                line = self._queue.get(timeout=10)
            except queue.Empty:
                return
            if line is None:
                return
            self.lines.append(line)

    @property
    def stdout(self) -> str:
        """Everything the process wrote to stdout (read once it has exited)."""
        if self._stdout is None:
            assert self.process.stdout is not None
            self._stdout = self.process.stdout.read()
        return self._stdout

    def close(self) -> None:
        """Kill the process if it still runs, and close its pipes."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=30)
        if self._thread is not None:
            self._thread.join(timeout=30)
        _ = self.stdout
        for pipe in (self.process.stdout, self.process.stderr):
            if pipe is not None:
                pipe.close()


def start_serve(
    *args: str, cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> ServeProcess:
    """Start ``svc serve ARGS`` and wait until it says it is serving."""
    process = subprocess.Popen(
        [sys.executable, "-m", "svc", "serve", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env=svc_env(env),
    )
    served = ServeProcess(process)
    served._thread = threading.Thread(target=served._pump, daemon=True)
    served._thread.start()
    try:
        match = served.wait_for_line(SERVING)
    except AssertionError:
        served.close()
        raise
    served.url = match.group(1)
    for line in served.lines:
        found = DRY_RUN_LINE.match(line)
        if found:
            served.secrets[found.group(1)] = found.group(2)
    return served


@pytest.fixture
def serving() -> Iterator[list[ServeProcess]]:
    """Processes started by a test; any still running at the end is killed."""
    started: list[ServeProcess] = []
    yield started
    for served in started:
        served.close()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A folder with the config ``svc init`` writes (run in-process: fast)."""
    from click.testing import CliRunner

    from svc.cli import cli

    result = CliRunner().invoke(cli, ["init", str(tmp_path / "proj")])
    assert result.exit_code == 0, result.output
    return tmp_path / "proj"
