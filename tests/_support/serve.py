"""``python -m svc`` as a real child process: run a command to its end, or start ``serve``.

A started ``serve`` is a :class:`ServeProcess`: its stderr is read on a thread,
every wait has a deadline, and with a :class:`Captured` every line, response and
the leftover stdout is kept for a secret scan (the dry-run lines, which print the
secrets by design, are not).
"""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from .capture import Captured

SERVING = re.compile(r"^svc: serving (http://\S+?)[, ]")
DRY_RUN_LINE = re.compile(
    r"^dry-run (serviceBearerToken|webhookVerifyToken|webhookAppSecret|inboxKey)=(\S+)$"
)
START_TIMEOUT = 60.0


def child_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """Our environment without any SVC_ variable or PORT, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SVC_") and k != "PORT"}
    env.update(extra or {})
    return env


def run_svc(
    *args: str,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    input_text: str | None = None,
    timeout: float = 60,
    prefix: Sequence[str] = (),
    capture: Captured | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``[PREFIX] python -m svc ARGS`` to completion; its output joins ``capture``."""
    result = subprocess.run(
        [*prefix, sys.executable, "-m", "svc", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
        cwd=cwd,
        env=child_env(env),
        input=input_text,
    )
    if capture is not None:
        capture.add("run stderr", result.stderr)
        capture.add("run stdout", result.stdout)
    return result


@dataclass
class ServeProcess:
    """A running ``svc serve``: its URL, its secrets, and every stderr line so far."""

    process: subprocess.Popen[str]
    capture: Captured | None = None
    lines: list[str] = field(default_factory=list)
    url: str = ""
    secrets: dict[str, str] = field(default_factory=dict)
    _queue: queue.Queue[str | None] = field(default_factory=queue.Queue)
    _eof: bool = False
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
        """Read stderr until a line matches ``pattern``; fail on EOF or at the deadline."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._queue.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no line matching {pattern.pattern}: {self.lines}") from None
            if line is None:
                self._eof = True
                raise AssertionError(f"serve exited before {pattern.pattern}: {self.lines}")
            self._keep(line)
            match = pattern.search(line)
            if match:
                return match

    def _keep(self, line: str) -> None:
        self.lines.append(line)
        if self.capture is not None and not DRY_RUN_LINE.match(line):
            self.capture.add("stderr", line)

    def drain(self) -> None:
        """Collect stderr up to EOF (the process has exited or is exiting)."""
        while not self._eof:
            try:
                line = self._queue.get(timeout=10)
            except queue.Empty:
                return
            if line is None:
                self._eof = True
                return
            self._keep(line)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30) -> int:
        """Send ``sig``, wait for the exit code, and collect the rest of the output."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
        code = self.process.wait(timeout=timeout)
        self.close()
        return code

    def kill9(self) -> None:
        """SIGKILL, as a crash would; the output so far is collected."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)
        self.close()

    @property
    def stdout(self) -> str:
        """Everything the process wrote to stdout (read once it has exited)."""
        if self._stdout is None:
            stream = self.process.stdout
            self._stdout = stream.read() if stream is not None and not stream.closed else ""
            if self.capture is not None:
                self.capture.add("stdout", self._stdout)
        return self._stdout

    def close(self) -> None:
        """Kill the process if it still runs, keep the rest of its output, close both pipes."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=30)
        self.drain()
        if self._thread is not None:
            self._thread.join(timeout=30)
        _ = self.stdout
        for pipe in (self.process.stdout, self.process.stderr):
            if pipe is not None:
                pipe.close()

    @property
    def bearer(self) -> str:
        return self.secrets["serviceBearerToken"]

    @property
    def app_secret(self) -> str:
        return self.secrets["webhookAppSecret"]

    def client(self, timeout: float = 30) -> httpx.Client:
        """A client with the bearer token whose every response joins the capture."""
        return httpx.Client(
            base_url=self.url,
            timeout=timeout,
            headers={"Authorization": f"Bearer {self.bearer}"},
            limits=httpx.Limits(max_connections=64),
            event_hooks={"response": [self._record]},
        )

    def _record(self, response: httpx.Response) -> None:
        response.read()
        if self.capture is not None:
            self.capture.response(response)


def start_serve(
    *args: str,
    capture: Captured | None = None,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    secrets_used: Mapping[str, str] | None = None,
    prefix: Sequence[str] = (),
    preexec_fn: Callable[[], None] | None = None,
    command: str = "serve",
) -> ServeProcess:
    """Start ``[PREFIX] python -m svc COMMAND ARGS`` (``serve``, or ``dev``) and wait until
    it says it is serving.

    The dry-run secrets it prints, and ``secrets_used``, become ``secrets`` and are
    registered with ``capture`` as values that must never appear elsewhere.
    """
    process = subprocess.Popen(
        [*prefix, sys.executable, "-m", "svc", command, *args],
        preexec_fn=preexec_fn,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env=child_env(env),
    )
    served = ServeProcess(process, capture)
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
    if secrets_used is not None:
        served.secrets.update(secrets_used)
    if capture is not None:
        capture.secret(*served.secrets.values())
    return served
