"""A dev service in process: ``svc dev``'s plan and session served by ``serve_once``."""

from __future__ import annotations

import dataclasses
import re
import shutil
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from svc.cli._dev import DevFolder, dev_plan, dev_session, open_dev_folder
from svc.cli._runtime import ServePlan, serve_once
from svc.dev import DevSession
from tests._support.serve import ServeProcess, start_serve

BOT = "tests.dev._bots:bot"


@dataclass
class DevService:
    """A running dev service: its URL, folder, session and the terminal lines it said."""

    url: str
    folder: DevFolder
    plan: ServePlan
    session: DevSession
    lines: list[str] = field(default_factory=list)

    def client(self, **kwargs: Any) -> httpx.AsyncClient:
        """A client of the service that presents the dev token in its header."""
        headers = {"X-Svc-Dev-Token": self.folder.token, **kwargs.pop("headers", {})}
        return httpx.AsyncClient(base_url=self.url, headers=headers, timeout=10, **kwargs)

    async def wait_for(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 10
    ) -> dict[str, Any]:
        """The first record ``predicate`` accepts, waiting for it up to ``timeout`` seconds."""
        with trio.fail_after(timeout):
            while True:
                for record in self.session.records():
                    if predicate(record):
                        return record
                await trio.sleep(0.02)


def bot_reply(record: dict[str, Any], text: str) -> bool:
    """Whether ``record`` is a text the bot sent whose body is ``text``."""
    payload = record.get("payload") or {}
    return (
        record["type"] == "send"
        and payload.get("type") == "text"
        and payload["text"]["body"] == text
    )


@pytest.fixture
async def dev_service(tmp_path: Path) -> AsyncIterator[DevService]:
    """``svc dev``'s service for the test bot, on a free loopback port, one retry at most."""
    async with serving(tmp_path, BOT) as service:
        yield service


@asynccontextmanager
async def serving(tmp_path: Path, app: str) -> AsyncIterator[DevService]:
    """``svc dev``'s service for the facade ``app`` (``module:attr``), in process."""
    folder = open_dev_folder(tmp_path / ".svc-dev")
    plan = dataclasses.replace(
        dev_plan(folder, app, 0),
        handler_options={"max_attempts": 2, "retry_delay": 0.0},
        graceful_timeout=1.0,
    )
    lines: list[str] = []
    session = dev_session(plan, folder.token, say=lines.append)
    stop = trio.Event()
    async with trio.open_nursery() as nursery:

        async def serve(*, task_status: trio.TaskStatus[list[str]]) -> None:
            await serve_once(plan, shutdown_trigger=stop.wait, task_status=task_status, dev=session)

        binds = await nursery.start(serve)
        yield DevService(url=binds[0], folder=folder, plan=plan, session=session, lines=lines)
        stop.set()


BOT_SOURCE = Path(__file__).with_name("_bots.py")
OPEN_LINE = re.compile(r"^svc dev: open (http://127\.0\.0\.1:\d+)/dev/\?token=(\S+)$")


@dataclass
class DevProcess:
    """``svc dev`` as a child process, in a folder of its own with the test bot as ``bot.py``."""

    process: ServeProcess
    folder: Path
    base: str
    token: str

    @property
    def url(self) -> str:
        """The URL ``svc dev`` printed (with the token)."""
        return f"{self.base}/dev/?token={self.token}"


def start_dev(folder: Path, *args: str) -> DevProcess:
    """Start ``svc dev --app bot:bot --port 0 ARGS`` in ``folder`` (the bot copied in first)."""
    if not (folder / "bot.py").exists():
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy(BOT_SOURCE, folder / "bot.py")
    process = start_serve("--app", "bot:bot", "--port", "0", *args, cwd=folder, command="dev")
    match = next(m for line in process.lines if (m := OPEN_LINE.match(line)))
    return DevProcess(process=process, folder=folder, base=match.group(1), token=match.group(2))
