"""The user code and deliveries of the handler-runtime proofs (``svc serve --app bot:bot``).

``BOT`` is written as ``bot.py`` into a live project whose profile names an inbox
key. Its one context handler runs the steps a message's text names
(comma-separated), and appends what it does to ``runs.log`` in the project
folder, one line per event (``O_APPEND``: whole lines, in the order they
happened, across processes):

- ``start PID MESSAGE_ID USER`` and ``end PID MESSAGE_ID USER``;
- ``sent PID MESSAGE_ID WAMID``: a context reply's answer (the platform's id).

Steps: ``wait`` (until a file ``release`` exists in the folder), ``die`` (SIGKILL
its own process, the first time only: a marker file ``died-<message id>``), ``fail``
(raise, the first time only: ``failed-<message id>``),
``reply`` (``ctx.reply_text`` with a text naming this process, so a rerun would
write a different text), ``meet-<group>-<n>`` (wait, at most 20 s, until ``n`` runs
of the group are in flight: logged ``met`` or ``alone``), ``sleep-<seconds>``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tests._support import PHONE_ID, WABA_ID, Captured, Project, ServeProcess, make_project

from .conftest import post_webhook, serve_live
from .conftest import wait_until as wait_until

BOT = """
import os
import signal
import time
from pathlib import Path

import trio

from svc.webhook import DefaultFacade, HandlerContext, MessageUpdate

HERE = Path.cwd()
LOG = HERE / "runs.log"
bot = DefaultFacade()


def note(*words: str) -> None:
    fd = os.open(LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, (" ".join(words) + "\\n").encode())
    finally:
        os.close(fd)


@bot.on("message", context=True)
async def run(ctx: HandlerContext) -> None:
    update = ctx.update
    assert isinstance(update, MessageUpdate)
    pid, mid = str(os.getpid()), update.message_id
    user = update.from_ or "-"
    note("start", pid, mid, user)
    for step in (update.text or "").split(","):
        if step == "wait":
            while not (HERE / "release").exists():
                await trio.sleep(0.02)
        elif step == "die":
            marker = HERE / f"died-{mid}"
            if not marker.exists():
                marker.write_text(pid)
                note("die", pid, mid, user)
                os.kill(os.getpid(), signal.SIGKILL)
        elif step == "fail":
            marker = HERE / f"failed-{mid}"
            if not marker.exists():
                marker.write_text(pid)
                note("fail", pid, mid, user)
                raise RuntimeError("the first attempt fails")
        elif step == "reply":
            sent = await ctx.reply_text(f"reply to {mid} from process {pid}")
            note("sent", pid, mid, sent.message_id or "-")
        elif step.startswith("meet-"):
            _, group, count = step.split("-")
            (HERE / f"meet-{group}-{mid}").write_text(pid)
            met = False
            with trio.move_on_after(20):
                while len(list(HERE.glob(f"meet-{group}-*"))) < int(count):
                    await trio.sleep(0.01)
                met = True
            note("met" if met else "alone", pid, mid, user)
        elif step.startswith("sleep-"):
            await trio.sleep(float(step.removeprefix("sleep-")))
    note("end", pid, mid, user)
"""

INBOX_KEY_ENV = "SVC_INBOX_KEY"


@dataclass(frozen=True, kw_only=True)
class LiveBot:
    """A live project serving user code of its ``bot.py``, and its inbox key."""

    project: Project
    inbox_key: str

    @property
    def root(self) -> Path:
        return self.project.root

    @property
    def app_secret(self) -> str:
        return self.project.secrets["SVC_APP_SECRET"]


@dataclass(frozen=True, kw_only=True)
class BotProject(LiveBot):
    """A live project serving ``bot:bot``, its inbox key, and the log its handler writes."""

    def release(self) -> None:
        """Let every handler blocked on ``wait`` go on."""
        (self.root / "release").write_text("go")

    def events(self) -> list[Event]:
        log = self.root / "runs.log"
        if not log.exists():
            return []
        return [Event.parse(line) for line in log.read_text().splitlines() if line.strip()]


def inbox_key(project: Project) -> str:
    """The inbox key ``make_project`` wrote into ``project``'s env file (the profile names it),
    to register with a capture as a value that must never appear."""
    for line in (project.root / project.env_file).read_text().splitlines():
        name, _, value = line.partition("=")
        if name == INBOX_KEY_ENV:
            return value
    raise AssertionError(f"{project.env_file} sets no {INBOX_KEY_ENV}")


def bot_project(root: Path, graph_url: str) -> BotProject:
    """``make_project`` (its profile names an inbox key) with ``bot.py``."""
    project = make_project(root, graph_url)
    (root / "bot.py").write_text(BOT)
    return BotProject(project=project, inbox_key=inbox_key(project))


@dataclass(frozen=True, kw_only=True)
class StoreBot(BotProject):
    """A ``BotProject`` on one store: its ``svc serve`` database flags and environment, and
    the test's capture and list of processes to stop at its end."""

    database: tuple[str, ...]
    env: Mapping[str, str]
    capture: Captured
    serving: list[ServeProcess]

    def serve(self, *flags: str) -> ServeProcess:
        """A live ``svc serve --app bot:bot`` of the project on its store, with ``flags``."""
        args = (*self.database, "--app", "bot:bot", *flags)
        return serve_live(self.capture, self.serving, self.project, *args, env=self.env)


def store_bot(
    root: Path,
    graph_url: str,
    capture: Captured,
    serving: list[ServeProcess],
    database: Sequence[str],
    env: Mapping[str, str],
) -> StoreBot:
    """``bot_project`` on the store ``database`` and ``env`` name; the inbox key is registered
    with ``capture`` as a value that must never appear."""
    bot = bot_project(root, graph_url)
    capture.secret(bot.inbox_key)
    return StoreBot(
        project=bot.project,
        inbox_key=bot.inbox_key,
        database=tuple(database),
        env=dict(env),
        capture=capture,
        serving=serving,
    )


@dataclass(frozen=True, slots=True)
class Event:
    """One line of a bot's event log (``runs.log``, ``events.log``): ``WHAT PID ID DETAIL``."""

    what: str
    pid: str
    message_id: str
    detail: str

    @classmethod
    def parse(cls, line: str) -> Event:
        what, pid, message_id, detail = line.split(" ")
        return cls(what, pid, message_id, detail)


def ended(events: Sequence[Event]) -> list[str]:
    """The message ids whose runs ended, in the order they ended (a rerun counts again)."""
    return [e.message_id for e in events if e.what == "end"]


def check_user_order(events: Sequence[Event], expected: Mapping[str, Sequence[str]]) -> int:
    """Assert each message ran to its end once, one user's runs one at a time in ``expected``
    order (a failed attempt's retry included); return the most runs in flight at once."""
    running: dict[str, str] = {}  # message id -> its user
    most = 0
    done: dict[str, list[str]] = {}
    for event in events:
        user = event.detail
        if event.what == "start":
            assert event.message_id not in running, f"{event.message_id} ran twice at once"
            busy = [m for m, u in running.items() if u == user]
            assert not busy, f"{event.message_id} started while {busy} of its user ran"
            running[event.message_id] = user
            most = max(most, len(running))
        elif event.what in ("end", "fail"):
            del running[event.message_id]
            if event.what == "end":
                done.setdefault(user, []).append(event.message_id)
    assert running == {}, f"runs never ended: {running}"
    assert done == {user: list(ids) for user, ids in expected.items()}
    return most


def run_to_the_end(bot: BotProject, message_ids: Iterable[str], timeout: float = 90) -> None:
    """Wait until the run of every one of ``message_ids`` has ended."""
    wanted = set(message_ids)
    wait_until(lambda: wanted <= set(ended(bot.events())), "every handler to run", timeout)


def deliver(served: ServeProcess, bot: BotProject, *messages: Message) -> None:
    """POST one delivery of ``messages`` to ``served``; each must be recorded and handed over."""
    answer = post_webhook(served, bot.app_secret, delivery(*messages))
    assert answer.status_code == 200
    assert answer.json()["dispatched"] == len(messages)


def delivery(*messages: tuple[str, str, str]) -> bytes:
    """One envelope of inbound texts ``(sender, message id, text)``, in the given order."""
    senders = list(dict.fromkeys(sender for sender, _, _ in messages))
    value = {
        "messaging_product": "whatsapp",
        "metadata": {"display_phone_number": "15550783881", "phone_number_id": PHONE_ID},
        "contacts": [{"profile": {"name": "Rel"}, "wa_id": sender} for sender in senders],
        "messages": [
            {
                "from": sender,
                "id": message_id,
                "timestamp": "1749416383",
                "type": "text",
                "text": {"body": text},
            }
            for sender, message_id, text in messages
        ],
    }
    envelope = {
        "object": "whatsapp_business_account",
        "entry": [{"id": WABA_ID, "changes": [{"field": "messages", "value": value}]}],
    }
    return json.dumps(envelope).encode()


Message = tuple[str, str, str]


def interleaved(
    users: Sequence[str],
    per_user: int,
    *,
    lead: Sequence[Message] = (),
    text: str = "sleep-0.02",
    seed: int = 40,
) -> tuple[list[list[Message]], dict[str, list[str]]]:
    """Deliveries of ``per_user`` messages of each user, their order shuffled (a fixed seed),
    cut into deliveries of 1 to 4 messages, ``lead`` first; and each user's recorded order."""
    rng = random.Random(seed)
    left = dict.fromkeys(users, per_user)
    flat: list[Message] = list(lead)
    while any(left.values()):
        user = rng.choice([u for u, n in left.items() if n])
        left[user] -= 1
        flat.append((user, f"wamid.{user[-2:]}x{per_user - left[user]:03d}", text))
    deliveries: list[list[Message]] = []
    while flat:
        size = rng.randint(1, 4) if deliveries else max(len(lead), 1)
        deliveries.append(flat[:size])
        flat = flat[size:]
    expected: dict[str, list[str]] = {}
    for batch in deliveries:
        for user, message_id, _ in batch:
            expected.setdefault(user, []).append(message_id)
    return deliveries, expected
