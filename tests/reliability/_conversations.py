"""The user code and deliveries of the conversation proofs (``svc serve --app bot:talk`` or
``bot:burst``).

``BOT`` is written as ``bot.py`` into a live project whose profile names an inbox key.
Each event is one line appended to ``events.log`` in the project folder
(``O_APPEND``: whole lines, in the order they happened, across processes):
``WHAT PID MESSAGE_ID DETAIL``.

- Both facades note ``recorded PID ID -`` when the ingest of a process asks them
  whether they handle an update (``handles``): which process recorded a message or a
  status (a probe: no handler runs for it).
- ``talk`` runs one context handler per message: ``start`` (detail: the sender) and
  ``end``; ``ask [die]`` replies a question (``asked``, detail: its platform id), notes
  ``waiting``, waits for the user's reply (``got``, detail: the reply's id), with
  ``die`` SIGKILLs its own process the first time (a marker ``died-<id>``), then answers
  ``Hello <reply text>`` (``answered``); ``remember WORD`` keeps WORD reversed in
  ``ctx.state``; ``recall`` notes the state's word (``recalled``).
- ``burst`` gathers a user's messages (``coalesce=3.0``) into one call: ``burst``, detail
  the ids of ``ctx.updates`` comma-separated, then one reply.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psycopg

from tests._support import PHONE_ID, WABA_ID, Captured, ServeProcess, make_project, sign

from ._handlers import Event, LiveBot, inbox_key
from .conftest import wait_until as wait_until

BOT = """
import os
import signal
from pathlib import Path

from svc.webhook import DefaultFacade, HandlerContext, MessageUpdate, Update

HERE = Path.cwd()
LOG = HERE / "events.log"


def note(what: str, mid: str, detail: str = "-") -> None:
    fd = os.open(LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, f"{what} {os.getpid()} {mid} {detail}\\n".encode())
    finally:
        os.close(fd)


class Recording(DefaultFacade):
    def handles(self, update: Update) -> bool:
        note("recorded", getattr(update, "message_id", None) or "-")
        return super().handles(update)


talk = Recording()
burst = Recording()


@talk.on("message", context=True)
async def converse(ctx: HandlerContext) -> None:
    update = ctx.update
    assert isinstance(update, MessageUpdate)
    mid, words = update.message_id, (update.text or "").split()
    note("start", mid, update.from_ or "-")
    if words[:1] == ["ask"]:
        question = await ctx.reply_text("What is your name?")
        note("asked", mid, question.message_id or "-")
        note("waiting", mid)
        reply = await ctx.wait_for_reply(timeout=120)
        note("got", mid, reply.message_id)
        marker = HERE / f"died-{mid}"
        if "die" in words and not marker.exists():
            marker.write_text("")
            note("die", mid)
            os.kill(os.getpid(), signal.SIGKILL)
        answer = await ctx.reply_text(f"Hello {reply.text}")
        note("answered", mid, answer.message_id or "-")
    elif words[:1] == ["remember"]:
        ctx.state["word"] = words[1][::-1]
        ctx.state["times"] = int(ctx.state.get("times", 0)) + 1
    elif words[:1] == ["recall"]:
        note("recalled", mid, f"{ctx.state.get('word', '-')}/{ctx.state.get('times', 0)}")
    note("end", mid, update.from_ or "-")


@burst.on("message", context=True, coalesce=3.0, max_wait=30.0)
async def answer_once(ctx: HandlerContext) -> None:
    ids = [getattr(update, "message_id", "-") for update in ctx.updates]
    note("burst", ids[0], ",".join(ids))
    await ctx.reply_text(f"{len(ids)} messages, one answer")
"""


@dataclass(frozen=True, kw_only=True)
class BotProject(LiveBot):
    """A live project serving ``bot.py``, its inbox key, and the events its code wrote."""

    def events(self, what: str | None = None) -> list[Event]:
        log = self.root / "events.log"
        lines = log.read_text().splitlines() if log.exists() else []
        found = [Event.parse(line) for line in lines if line.strip()]
        return [e for e in found if what is None or e.what == what]

    def recorded_by(self, message_id: str) -> str:
        """The pid of the process whose ingest recorded ``message_id`` (asked ``handles``)."""
        pids = {e.pid for e in self.events("recorded") if e.message_id == message_id}
        assert len(pids) == 1, f"{message_id} recorded by {pids}"
        return pids.pop()


def bot_project(root: Path, graph_url: str, capture: Captured) -> BotProject:
    """``make_project`` (its profile names an inbox key) with ``bot.py``; the inbox key is
    registered with ``capture`` as a value that must never appear."""
    project = make_project(root, graph_url)
    (root / "bot.py").write_text(BOT)
    key = inbox_key(project)
    capture.secret(key)
    return BotProject(project=project, inbox_key=key)


def inbox_empty(bot: BotProject, dsn: str | None = None) -> bool:
    """Whether the inbox (SQLite file, or the PostgreSQL schema ``dsn`` pins) holds no row."""
    return rows(bot, "SELECT id FROM svc_inbox", dsn) == []


def wait_for_event(bot: BotProject, what: str, message_id: str, timeout: float = 60) -> Event:
    """The first ``what`` event of ``message_id``, once written."""
    found: list[Event] = []

    def seen() -> bool:
        found[:] = [e for e in bot.events(what) if e.message_id == message_id]
        return bool(found)

    wait_until(seen, f"{what} {message_id}", timeout)
    return found[0]


# --- deliveries ---------------------------------------------------------------------------


def _envelope(value: dict[str, object]) -> bytes:
    value = {
        "messaging_product": "whatsapp",
        "metadata": {"display_phone_number": "15550783881", "phone_number_id": PHONE_ID},
        **value,
    }
    envelope = {
        "object": "whatsapp_business_account",
        "entry": [{"id": WABA_ID, "changes": [{"field": "messages", "value": value}]}],
    }
    return json.dumps(envelope).encode()


def text(sender: str, message_id: str, body: str) -> bytes:
    """One inbound text of ``sender``."""
    message = {"from": sender, "id": message_id, "timestamp": "1749416383", "type": "text"}
    return _envelope(
        {
            "contacts": [{"profile": {"name": "Rel"}, "wa_id": sender}],
            "messages": [{**message, "text": {"body": body}}],
        }
    )


def status_probe(message_id: str) -> bytes:
    """A ``delivered`` status of a message nobody sent: recorded, no handler runs for it."""
    status = {"id": message_id, "status": "delivered", "timestamp": "1749416390"}
    return _envelope({"statuses": [{**status, "recipient_id": "16505550999"}]})


def _signed(bot: BotProject, body: bytes) -> dict[str, str]:
    return {
        "Content-Type": "application/json",
        "X-Hub-Signature-256": sign(body=body, secret=bot.app_secret),
    }


def deliver(served: ServeProcess, bot: BotProject, body: bytes) -> None:
    """POST ``body`` to ``served`` (a fresh connection); it must be recorded and handed over."""
    with served.client() as client:
        answer = client.post("/webhooks/whatsapp", content=body, headers=_signed(bot, body))
    assert answer.status_code == 200, answer.text
    assert answer.json()["dispatched"] == 1


@dataclass
class Workers:
    """Deliveries to a chosen worker of one ``svc serve --workers N``: a keep-alive
    connection stays with the worker that accepted it, and a status probe on it tells which
    worker that is (its ``recorded`` event)."""

    served: ServeProcess
    bot: BotProject
    capture: Captured
    _probes: Iterator[int] = field(default_factory=lambda: iter(range(1, 10**6)))

    def _connection(self) -> httpx.Client:
        return httpx.Client(
            base_url=self.served.url,
            timeout=30,
            limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
        )

    def _post(self, client: httpx.Client, body: bytes) -> httpx.Response:
        answer = client.post("/webhooks/whatsapp", content=body, headers=_signed(self.bot, body))
        self.capture.response(answer)
        assert answer.status_code == 200, answer.text
        return answer

    def pids(self, count: int = 2, attempts: int = 60) -> set[str]:
        """The pids of ``count`` workers (found by probing fresh connections)."""
        seen: set[str] = set()
        for _ in range(attempts):
            with self._connection() as client:
                probe = f"wamid.PROBE{next(self._probes):06d}"
                self._post(client, status_probe(probe))
                seen.add(self.bot.recorded_by(probe))
            if len(seen) == count:
                return seen
        raise AssertionError(f"found workers {seen} of {count}")

    def deliver(self, pid: str, body: bytes, attempts: int = 60) -> None:
        """POST ``body`` through a connection the worker ``pid`` accepted."""
        for _ in range(attempts):
            with self._connection() as client:
                probe = f"wamid.PROBE{next(self._probes):06d}"
                self._post(client, status_probe(probe))
                if self.bot.recorded_by(probe) == pid:
                    assert self._post(client, body).json()["dispatched"] == 1
                    return
        raise AssertionError(f"no connection reached worker {pid}")


# --- what the fake Graph and the store hold ---------------------------------------------


def sent_texts(bodies: Sequence[bytes]) -> list[str]:
    """The text of each send the fake Graph got, in order."""
    return [json.loads(body)["text"]["body"] for body in bodies]


def rows(
    bot: BotProject, query: str, dsn: str | None = None, database: str = "svc.db"
) -> list[tuple[object, ...]]:
    """``query``'s rows, from the project's SQLite file or the PostgreSQL ``dsn``."""
    if dsn is not None:
        with psycopg.connect(dsn) as pg:
            return list(pg.execute(query).fetchall())
    conn = sqlite3.connect(bot.root / database)
    try:
        return list(conn.execute(query).fetchall())
    finally:
        conn.close()


def tables(bot: BotProject, dsn: str | None = None) -> list[str]:
    """The store's tables (SQLite file, or the PostgreSQL schema the DSN pins)."""
    if dsn is not None:
        query = (
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
        )
    else:
        query = "SELECT name FROM sqlite_master WHERE type = 'table'"
    return sorted(str(name) for (name,) in rows(bot, query, dsn))


def every_value(bot: BotProject, dsn: str | None = None) -> bytes:
    """Every value of every row of every table of the store, as bytes (blobs as they are)."""
    found: list[bytes] = []
    for table in tables(bot, dsn):
        query = f'SELECT * FROM "{table}"'  # noqa: S608 - the store's own table names
        for row in rows(bot, query, dsn):
            for value in row:
                if isinstance(value, bytes | bytearray | memoryview):
                    found.append(bytes(value))
                elif value is not None:
                    found.append(str(value).encode())
    return b"\n".join(found)
