"""The user code, deliveries and operator commands of the handler runtime's promises
(``svc serve --app bot:bot`` or ``bot:burst``).

``BOT`` is written as ``bot.py`` into a live project whose profile names an inbox key.
Every event is one JSON line appended to ``events.log`` in the project folder
(``O_APPEND``: whole lines, in the order they happened, across processes), with
``what``, ``pid``, ``mid`` (the update's message id), ``run`` (a token per handler call)
and ``t`` (the wall clock), plus the event's own fields.

- ``bot`` counts its runs in ``ctx.state["n"]`` (``start`` notes ``n`` as read, ``end``
  the ``n`` it leaves to be written) and runs the steps its text names (comma-separated):
  ``fail`` (raise, the first time only), ``hold`` (until a file ``release-<message id>``
  exists), ``reply`` (``ctx.reply_text``: ``sent`` with the platform's ``id``), ``die``
  (SIGKILL its own process, the first time only), ``flood`` (the first time only: replies
  in a loop for 8 s, nothing else awaited), ``big`` (a state over 16 KiB) and ``ask``
  (a question, then ``wait_for_reply``: ``waiting``, then ``got`` with the reply's ``id``,
  or ``timedout``). Other words are plain text (an answer).
- ``burst`` gathers a user's messages (``coalesce=1.0, max_wait=3.0``): ``burst`` notes
  the gathered ``texts``; an ``order`` asks a name (``waiting``), waits for it (``got``,
  ``text``), then for a click (``clicked``, ``choice``) and confirms.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests._support import PHONE_ID, WABA_ID, Captured, ServeProcess, make_project, run_svc

from ._handlers import LiveBot, inbox_key
from .conftest import post_webhook, wait_until

BOT = """
import json
import os
import secrets
import signal
import time
from pathlib import Path

import trio

from svc.webhook import DefaultFacade, HandlerContext, ListenerTimeout, MessageUpdate

HERE = Path.cwd()
LOG = HERE / "events.log"
bot = DefaultFacade()
burst = DefaultFacade()


def note(what: str, mid: str, run: str, **fields: object) -> None:
    line = {"what": what, "pid": os.getpid(), "mid": mid, "run": run, "t": time.time(), **fields}
    fd = os.open(LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, (json.dumps(line) + "\\n").encode())
    finally:
        os.close(fd)


def first_time(name: str) -> bool:
    marker = HERE / name
    if marker.exists():
        return False
    marker.write_text(str(os.getpid()))
    return True


@bot.on("message", context=True)
async def run(ctx: HandlerContext) -> None:
    update = ctx.update
    assert isinstance(update, MessageUpdate)
    mid, token = update.message_id, secrets.token_hex(4)
    n = int(ctx.state.get("n", 0))
    ctx.state["n"] = n + 1
    note("start", mid, token, n=n)
    for step in (update.text or "").split(","):
        if step == "fail" and first_time(f"failed-{mid}"):
            note("fail", mid, token)
            raise RuntimeError("the first attempt fails")
        elif step == "hold":
            while not (HERE / f"release-{mid}").exists():
                await trio.sleep(0.02)
        elif step == "reply":
            sent = await ctx.reply_text(f"reply to {mid}")
            note("sent", mid, token, id=sent.message_id)
        elif step == "die" and first_time(f"died-{mid}"):
            note("die", mid, token)
            os.kill(os.getpid(), signal.SIGKILL)
        elif step == "flood" and first_time(f"flooded-{mid}"):
            until, count = time.monotonic() + 8, 0
            while time.monotonic() < until:
                count += 1
                await ctx.reply_text(f"flood {mid} {count}")
        elif step == "big":
            ctx.state["blob"] = "x" * 17_000
        elif step == "ask":
            await ctx.reply_text("Your name?")
            note("waiting", mid, token)
            try:
                reply = await ctx.wait_for_reply(timeout=8)
            except ListenerTimeout:
                note("timedout", mid, token)
                return
            note("got", mid, token, id=reply.message_id)
    note("end", mid, token, n=n + 1)


@burst.on("message", context=True, coalesce=1.0, max_wait=3.0)
async def order(ctx: HandlerContext) -> None:
    mid, token = ctx.update.message_id, secrets.token_hex(4)
    texts = [u.text or u.type for u in ctx.updates if isinstance(u, MessageUpdate)]
    note("burst", mid, token, texts=texts)
    if texts[0] != "order":
        return
    await ctx.reply_text("Your name?")
    note("waiting", mid, token)
    name = await ctx.wait_for_reply(timeout=60)
    note("got", mid, token, text=name.text)
    await ctx.reply_text(f"Confirm, {name.text}?")
    click = await ctx.wait_for_click(timeout=60)
    choice = getattr(click.content, "reply_id", None)
    note("clicked", mid, token, choice=choice)
    await ctx.reply_text(f"Ordered for {name.text}: {choice}")
"""


@dataclass(frozen=True, slots=True)
class Event:
    """One line of the bot's ``events.log``."""

    what: str
    pid: int
    mid: str
    run: str
    t: float
    fields: Mapping[str, Any]

    @classmethod
    def parse(cls, line: str) -> Event:
        data = json.loads(line)
        head = {name: data.pop(name) for name in ("what", "pid", "mid", "run", "t")}
        return cls(**head, fields=data)


@dataclass(frozen=True, kw_only=True)
class PromiseBot(LiveBot):
    """A live project serving ``bot.py``, with its database flags, and what it noted."""

    db: tuple[str, ...]
    env: Mapping[str, str]

    def events(self, what: str | None = None, mid: str | None = None) -> list[Event]:
        log = self.root / "events.log"
        lines = log.read_text().splitlines() if log.exists() else []
        found = [Event.parse(line) for line in lines if line.strip()]
        return [
            e for e in found if (what is None or e.what == what) and (mid is None or e.mid == mid)
        ]

    def release(self, message_id: str) -> None:
        """Let the run of ``message_id`` blocked on ``hold`` go on."""
        (self.root / f"release-{message_id}").write_text("go")

    def wait_for(self, what: str, mid: str, count: int = 1, timeout: float = 60) -> list[Event]:
        """The ``what`` events of ``mid`` once there are ``count`` of them."""
        wait_until(lambda: len(self.events(what, mid)) >= count, f"{what} of {mid}", timeout)
        return self.events(what, mid)

    def inbox(self, capture: Captured, *args: str) -> list[dict[str, str]]:
        """``svc inbox ARGS`` on this project's store; a listing's rows as dicts."""
        result = run_svc("inbox", *args, *self.db, cwd=self.root, env=self.env, capture=capture)
        assert result.returncode == 0, result.stderr
        lines = result.stdout.splitlines()
        if not lines or not lines[0].startswith("id\t"):
            return []
        header = lines[0].split("\t")
        return [dict(zip(header, line.split("\t"), strict=True)) for line in lines[1:]]


def promise_bot(
    root: Path, graph_url: str, capture: Captured, db: Sequence[str], env: Mapping[str, str]
) -> PromiseBot:
    """``make_project`` (its profile names an inbox key) with ``bot.py``; the inbox key is
    registered with ``capture`` as a value that must never appear."""
    project = make_project(root, graph_url)
    (root / "bot.py").write_text(BOT)
    key = inbox_key(project)
    capture.secret(key)
    return PromiseBot(project=project, inbox_key=key, db=tuple(db), env=dict(env))


def seen_within(check: Callable[[], bool], seconds: float) -> bool:
    """Whether ``check`` (a real process's effects) becomes true within ``seconds``: the
    bounded look for something a promise says must not happen."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return check()


def overlapping(events: Sequence[Event]) -> list[tuple[str, str]]:
    """Pairs ``(earlier, later)`` of message ids whose runs were in flight at once: a run spans
    its events (by its token) from its ``start`` to its last event, so a run cut off at a
    checkpoint ends at the last thing it noted. One user's runs in a test: any pair breaks its
    queue."""
    spans: dict[str, list[int]] = {}
    mids: dict[str, str] = {}
    for index, event in enumerate(events):
        spans.setdefault(event.run, [index, index])[1] = index
        mids[event.run] = event.mid
    ordered = sorted(spans.items(), key=lambda item: item[1][0])
    return [
        (mids[a], mids[b])
        for i, (a, (_, a_last)) in enumerate(ordered)
        for b, (b_first, _) in ordered[i + 1 :]
        if b_first < a_last
    ]


# --- deliveries ---------------------------------------------------------------------------

Message = dict[str, Any]


def text(phone: str, message_id: str, body: str, *, bsuid: str | None = None) -> Message:
    """An inbound text of the user ``phone`` (named by its BSUID too when given)."""
    message: Message = {"from": phone, "id": message_id, "timestamp": "1749416383", "type": "text"}
    if bsuid is not None:
        message["from_user_id"] = bsuid
    return {**message, "text": {"body": body}}


def click(phone: str, message_id: str, choice: str, *, bsuid: str | None = None) -> Message:
    """An inbound button reply of the user ``phone``."""
    message: Message = {"from": phone, "id": message_id, "timestamp": "1749416383"}
    if bsuid is not None:
        message["from_user_id"] = bsuid
    reply = {"type": "button_reply", "button_reply": {"id": choice, "title": choice.title()}}
    return {**message, "type": "interactive", "interactive": reply}


def delivery(*messages: Message) -> bytes:
    """One envelope of ``messages`` in the given order, with a contact per sender (its phone as
    ``wa_id``, and its BSUID as ``user_id`` when a message names one)."""
    contacts: dict[tuple[str, str | None], dict[str, str]] = {}
    for message in messages:
        phone, bsuid = message["from"], message.get("from_user_id")
        contact = {"wa_id": phone, **({"user_id": bsuid} if bsuid else {})}
        contacts[(phone, bsuid)] = contact
    value = {
        "messaging_product": "whatsapp",
        "metadata": {"display_phone_number": "15550783881", "phone_number_id": PHONE_ID},
        "contacts": [{"profile": {"name": "Rel"}, **c} for c in contacts.values()],
        "messages": list(messages),
    }
    envelope = {
        "object": "whatsapp_business_account",
        "entry": [{"id": WABA_ID, "changes": [{"field": "messages", "value": value}]}],
    }
    return json.dumps(envelope).encode()


def post(served: ServeProcess, bot: PromiseBot, *messages: Message) -> httpx.Response:
    """POST one delivery of ``messages`` to ``served``, signed; its answer."""
    return post_webhook(served, bot.app_secret, delivery(*messages))


def deliver(served: ServeProcess, bot: PromiseBot, *messages: Message) -> None:
    """POST one delivery of ``messages``; each must be recorded and handed over."""
    answer = post(served, bot, *messages)
    assert answer.status_code == 200, answer.text
    assert answer.json()["dispatched"] == len(messages), answer.text


def sent_texts(served_bodies: Sequence[bytes]) -> list[str]:
    """The text of each send the fake Graph got, in order."""
    return [json.loads(body)["text"]["body"] for body in served_bodies]
