"""First chat: the seconds from a fresh clone to the bot's first answer drawn by ``svc dev``.

Runs the README's steps in a fresh clone of this repository in a temporary folder: the
virtual environment and ``pip install -e .`` (the README's first command; pip's cache
as the machine has it), the README's ``bot.py``, then ``svc dev --app bot:bot`` (the
"Talk to your bot" block), and a text sent through the page's own endpoint
(``/dev/api/act``, the page's "send" button) until the terminal names the bot's answer.
For scale, in the same run and clone: ``svc serve --dry-run --app bot:bot`` (the
first-bot tour's command) until it answers ``/healthz``.

Prints one JSON line: install, dev start, first answer and total seconds, and the dev
start over the plain serve start.

    .venv/bin/python bench/first_chat.py
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import _proc
import httpx

ROOT = Path(__file__).resolve().parent.parent
URL_LINE = re.compile(r"svc dev: open (http://127\.0\.0\.1:\d+)/dev/\?token=(\S+)")
ANSWER = re.compile(r'^dev: bot -> \d+ text "You said: Hello bot"')


def readme_bot() -> str:
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    return next(block for block in blocks if block.startswith("# bot.py\n"))


class Lines:
    """A process's stderr and stdout lines, read as they come."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.lines: list[str] = []
        self.process = process
        for stream in (process.stdout, process.stderr):
            threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream: object) -> None:
        for line in stream:  # type: ignore[attr-defined]
            self.lines.append(line.rstrip("\n"))

    def wait(self, pattern: re.Pattern[str], timeout: float) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in list(self.lines):
                if (found := pattern.search(line)) is not None:
                    return found
            if self.process.poll() is not None:
                raise RuntimeError("the process ended: " + "\n".join(self.lines[-20:]))
            time.sleep(0.01)
        raise RuntimeError(f"no line {pattern.pattern!r} within {timeout} s")


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="svc-bench-first-chat-") as tmp:
        clone = Path(tmp) / "svc"
        began = time.monotonic()
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        subprocess.run([sys.executable, "-m", "venv", str(clone / ".venv")], check=True)
        python = str(clone / ".venv" / "bin" / "python")
        subprocess.run(
            [python, "-m", "pip", "install", "-q", "-e", str(clone)],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        installed = time.monotonic()
        work = Path(tmp) / "work"
        work.mkdir()
        (work / "bot.py").write_text(readme_bot())
        port = _proc.free_port()
        argv = [python, "-m", "svc", "dev", "--app", "bot:bot", "--port", str(port)]
        dev = subprocess.Popen(
            [*argv, "--no-reload"], cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, start_new_session=True,
        )
        try:
            lines = Lines(dev)
            found = lines.wait(URL_LINE, 120)
            _proc.wait_until_up(port, dev, path="/healthz", seconds=120.0)  # type: ignore[arg-type]
            ready = time.monotonic()
            base, token = found.group(1), found.group(2)
            answer = httpx.post(
                f"{base}/dev/api/act",
                json={
                    "user": {"name": "Kerry", "phone": "16505551234"},
                    "action": {"kind": "text", "text": "Hello bot"},
                },
                headers={"X-Svc-Dev-Token": token},
                timeout=30,
            )
            answer.raise_for_status()
            lines.wait(ANSWER, 60)
            answered = time.monotonic()
        finally:
            _proc.stop(dev, seconds=15.0)  # type: ignore[arg-type]
        serve_dir = Path(tmp) / "serve"
        serve_dir.mkdir()
        (serve_dir / "bot.py").write_text(readme_bot())
        svc = str(clone / ".venv" / "bin" / "svc")
        subprocess.run([svc, "init", "demo"], cwd=serve_dir, check=True, capture_output=True)
        port = _proc.free_port()
        started = time.monotonic()
        serve = subprocess.Popen(
            [svc, "serve", "--config", "demo/svc.config.yaml", "--dry-run", "--database",
             "demo/svc.db", "--app", "bot:bot", "--port", str(port)],
            cwd=serve_dir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            _proc.wait_until_up(port, serve, path="/healthz", seconds=120.0)
            serve_ready = time.monotonic() - started
        finally:
            _proc.stop(serve, seconds=15.0)
    dev_start = ready - installed
    line = {
        "bench": "first_chat",
        "machine": _proc.machine(),
        "clone_and_install_s": round(installed - began, 2),
        "dev_start_s": round(dev_start, 2),
        "first_answer_s": round(answered - ready, 3),
        "total_s": round(answered - began, 2),
        "serve_start_s": round(serve_ready, 2),
        "dev_start_over_serve_start": round(dev_start / serve_ready, 2),
    }
    print(json.dumps(line))


if __name__ == "__main__":
    main()
