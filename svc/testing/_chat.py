"""``BotTest``: a bot served in process for its author's tests, with scripted users.

The harness builds the service with ``create_app`` over a capturing dry-run transport
(nothing leaves the process), runs the app's lifespan (the handler runtime) in the test's
task, and posts each scripted user's action as a signed delivery through the app's own
webhook path. The runtime, the store's record times and the deliveries' timestamps all
read trio's clock (``TrioClock``), so under trio's ``MockClock(autojump_threshold=0)``
(pytest-trio's ``autojump_clock``) waits, bursts and retries take no real time.
"""

from __future__ import annotations

import io
import json
import secrets
import tempfile
from collections import deque
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Literal

import httpx
import trio
import trio.testing

from svc.crypto import InboxKeyring
from svc.graph import FAILURES, CapturedRequest, CapturingTransport
from svc.http import LogOptions, Profile, ServiceSecrets, create_app
from svc.runtime import (
    HandlerOptions,
    RunEnded,
    RunStarted,
    RuntimeEvent,
    StateWritten,
    TrioClock,
    UpdateQueued,
    UpdateTaken,
    WaitEnded,
    WaitStarted,
)
from svc.store import PersistenceStore, SqliteStore
from svc.webhook import (
    SIGNATURE_HEADER,
    DevUser,
    WebhookFacade,
    action_message,
    message_delivery,
    new_message_id,
    normalize,
    queue_key,
    sign_body,
)

from ._held import HeldStore
from ._messages import BotMessage, Choice

__all__ = ["DEFAULT_START", "SETTLE_LIMIT", "BotTest", "ScriptedUser"]

DEFAULT_START: Final = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
"""The wall time at trio's time 0 (``BotTest(start=...)``): record times are reproducible."""
SETTLE_LIMIT: Final = 86_400.0
"""Virtual seconds ``idle()`` lets pass at most before it fails (a runtime that never settles)."""
PHONE_NUMBER_ID: Final = "106540352242922"
DISPLAY_PHONE_NUMBER: Final = "15550783881"
WABA_ID: Final = "102290129340398"
_METADATA: Final = {
    "display_phone_number": DISPLAY_PHONE_NUMBER,
    "phone_number_id": PHONE_NUMBER_ID,
}


class BotTest:
    """``async with BotTest(bot) as chat:``: ``bot`` served in process (module docstring).

    ``store="memory"`` (the default) runs the handlers from the in-memory queue;
    ``store="sqlite"`` from a temporary SQLite store's sealed inbox, each store call
    holding the autojump clock still (``HeldStore``). ``handler_options`` are
    ``create_app``'s (a ``HandlerOptions``); the harness adds its observer.
    """

    def __init__(
        self,
        bot: WebhookFacade,
        *,
        store: Literal["memory", "sqlite"] = "memory",
        handler_options: HandlerOptions | None = None,
        start: datetime = DEFAULT_START,
    ) -> None:
        if store not in ("memory", "sqlite"):
            raise ValueError('store must be "memory" or "sqlite"')
        if handler_options is not None and not isinstance(handler_options, HandlerOptions):
            raise TypeError("handler_options must be a HandlerOptions")
        self._bot = bot
        self._mode = store
        self._profile = Profile(phone_number_id=PHONE_NUMBER_ID, waba_id=WABA_ID)
        self._options = HandlerOptions() if handler_options is None else handler_options
        self._clock = TrioClock(lambda: start)
        self._app_secret = secrets.token_urlsafe(24)
        self.transport = CapturingTransport(self._captured)
        """The capturing dry run the bot's client sends through."""
        self.sends: list[CapturedRequest] = []
        """Every request the bot made, in order (read marks and failed sends included)."""
        self.events: list[RuntimeEvent] = []
        """Every step the handler runtime told its observer, in order."""
        self.runs: list[RunEnded] = []
        """Every handler run's end, in order."""
        self.log = io.StringIO()
        """The service's log lines."""
        self._inboxes: dict[str, deque[BotMessage]] = {}
        self._received: dict[str, list[BotMessage]] = {}
        self._states: dict[str, bytes | None] = {}
        self._open: dict[str, str] = {}
        self._own: dict[str, str] = {}
        """Update key -> the queue its own identifiers name (what ``UpdateQueued`` says)."""
        self._alias: dict[str, str] = {}
        """A queue its identifiers name -> the queue the runtime runs it in (with a store,
        the person's queue of the identity map; learned from ``RunStarted``)."""
        self._waiting: set[str] = set()
        self._changed = trio.Event()
        self._store: HeldStore | None = None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._client: httpx.AsyncClient | None = None
        self._lifespan: Any = None
        self.app: Any = None
        """The service's ASGI app (``create_app``'s)."""

    # --- the service's life -----------------------------------------------------------

    async def __aenter__(self) -> BotTest:
        self._clock()  # anchored now: the service's time is ``start`` plus trio's since
        clock = trio.lowlevel.current_clock()
        mock = clock if isinstance(clock, trio.testing.MockClock) else None
        options = self._options
        chained = options.observer
        observers = [self._observe] + ([chained] if chained is not None else [])

        def observe(event: RuntimeEvent) -> None:
            for observer in observers:
                observer(event)

        kwargs: dict[str, Any] = {}
        if self._mode == "sqlite":
            self._tmp = tempfile.TemporaryDirectory(prefix="svc-testing-")
            opened = SqliteStore(str(Path(self._tmp.name) / "bot.db"))
            self._store = HeldStore(opened, mock)
            await self._store.migrate()
            store: PersistenceStore = self._store  # mypy checks the wrapper keeps the contract
            kwargs["store"] = store
            kwargs["inbox_keyring"] = InboxKeyring([secrets.token_bytes(32)])
        self.app = create_app(
            profile=self._profile,
            secrets=ServiceSecrets(
                access_token="dryrun-access-test",  # noqa: S106 - a dry run's placeholder
                webhook_verify_token=secrets.token_urlsafe(24),
                webhook_app_secret=self._app_secret,
                service_bearer_token=secrets.token_urlsafe(32),
            ),
            transport=self.transport,
            facade=self._bot,
            handler_options=replace(options, observer=observe),
            now=self._clock,
            log=LogOptions(log_stream=self.log),
            **kwargs,
        )
        self._lifespan = self.app.test_app()
        await self._lifespan.__aenter__()
        self._client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=self.app), base_url="http://127.0.0.1"
        )
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        try:
            if self._client is not None:
                await self._client.aclose()
            if self._lifespan is not None:
                # The test's own exception is not handed to the lifespan's nursery: it
                # would come out wrapped in an ExceptionGroup. The app shuts down alike.
                await self._lifespan.__aexit__(None, None, None)
        finally:
            if self._store is not None:
                await self._store.close()
            if self._tmp is not None:
                self._tmp.cleanup()

    # --- users and their deliveries ---------------------------------------------------

    def user(
        self,
        *,
        phone: str | None = None,
        bsuid: str | None = None,
        username: str | None = None,
        name: str = "Tester",
    ) -> ScriptedUser:
        """A user to script: by ``phone`` (digits), or by ``bsuid`` (with a ``username``)."""
        fields = {"name": name, "phone": phone, "bsuid": bsuid, "username": username}
        return ScriptedUser(self, DevUser.from_json(fields))

    async def deliver(self, user: DevUser, action: Mapping[str, Any]) -> Any:
        """Post the signed delivery of one action of ``user`` (``svc.webhook.action_message``'s
        ``kind`` and fields) through the webhook path; the service's JSON answer."""
        assert self._client is not None, "use BotTest inside `async with`"
        message = action_message(action, DISPLAY_PHONE_NUMBER)
        body = message_delivery(
            user,
            message,
            message_id=new_message_id(),
            now=int(self._clock().timestamp()),
            metadata=_METADATA,
            waba_id=WABA_ID,
        )
        raw = json.dumps(body, separators=(",", ":")).encode("utf-8")
        response = await self._client.post(
            self._profile.webhook_path,
            content=raw,
            headers={
                "Content-Type": "application/json",
                SIGNATURE_HEADER: sign_body(raw, self._app_secret),
            },
        )
        if response.status_code != 200:
            raise AssertionError(
                f"the webhook refused the delivery: {response.status_code} {response.text}"
            )
        return response.json()

    # --- what the bot and its runtime did ---------------------------------------------

    def _captured(self, request: CapturedRequest) -> None:
        self.sends.append(request)
        payload = request.payload
        if request.status >= 400 or not isinstance(payload, dict) or "status" in payload:
            return  # a refused send or a read mark: nothing reached the user
        address = str(payload.get("to") or payload.get("recipient") or "").lstrip("+")
        message = BotMessage(payload=payload, message_id=request.message_id)
        self._inboxes.setdefault(address, deque()).append(message)
        self._received.setdefault(address, []).append(message)
        self._changed.set()

    def _observe(self, event: RuntimeEvent) -> None:
        self.events.append(event)
        if isinstance(event, UpdateQueued):
            self._own[event.update_key] = event.queue
            self._open[event.update_key] = self._alias.get(event.queue, event.queue)
        elif isinstance(event, RunStarted):
            own = self._own.get(event.update_key)
            if own is not None and own != event.queue:
                self._alias[own] = event.queue
                for key, queue in list(self._open.items()):
                    if queue == own:
                        self._open[key] = event.queue
        elif isinstance(event, WaitStarted):
            self._waiting.add(event.queue)
        elif isinstance(event, WaitEnded):
            self._waiting.discard(event.queue)
        elif isinstance(event, UpdateTaken):
            self._open.pop(event.update_key, None)
        elif isinstance(event, RunEnded):
            self.runs.append(event)
            self._waiting.discard(event.queue)
            if event.outcome in ("success", "dead"):
                self._open.pop(event.update_key, None)
        elif isinstance(event, StateWritten):
            self._states[event.queue] = event.document
        self._changed.set()

    @property
    def last_run(self) -> RunEnded | None:
        """The latest handler run's end (``outcome``, ``error``: the exception), if any."""
        return self.runs[-1] if self.runs else None

    @property
    def failures(self) -> list[RunEnded]:
        """The runs that did not succeed (``error``, ``timeout``, ``dead``), in order."""
        return [run for run in self.runs if run.outcome != "success"]

    def state(self, user: ScriptedUser) -> dict[str, Any]:
        """The user's ``ctx.state`` as the last run that wrote it left it (``{}``: none)."""
        document = self._states.get(self._alias.get(user.queue, user.queue))
        if document is None:
            return {}
        found: dict[str, Any] = json.loads(document)
        return found

    def fail_next_send(self, *, code: int = 131047) -> None:
        """Answer the bot's next send with the platform's error ``code`` (131047: outside
        the 24-hour window; 130429: rate limited; 131026: undeliverable; 2: HTTP 503)."""
        names = [name for name, failure in FAILURES.items() if failure.code == code]
        if not names:
            known = ", ".join(str(failure.code) for failure in FAILURES.values())
            raise ValueError(f"no platform error {code}; known codes: {known}")
        self.transport.fail_next(names[0])

    # --- waiting in virtual time ------------------------------------------------------

    def _settled(self) -> bool:
        """Nothing left the runtime would do by itself: every update not done belongs to a
        queue whose run waits for its user (a retry due later is not settled)."""
        return all(queue in self._waiting for queue in self._open.values())

    async def _settle(self, done: Any = None) -> bool:
        """Let the runtime work (and virtual time pass) until ``done()`` or it settles;
        whether ``done()`` held."""
        with trio.move_on_after(SETTLE_LIMIT):
            while True:
                if done is not None and done():
                    return True
                await trio.testing.wait_all_tasks_blocked()
                if self._store is not None and self._store.busy:
                    await self._store.wait_quiet()
                    continue
                if done is not None and done():
                    return True
                if self._settled():
                    return False
                self._changed = trio.Event()
                await self._changed.wait()
        raise AssertionError(f"the handler runtime did not settle in {SETTLE_LIMIT:g} s")

    async def idle(self) -> None:
        """Return once the runtime has nothing left to do but wait for a user: runs,
        bursts and retries done (in virtual time), every store call finished."""
        await self._settle()

    async def next_message(self, user: ScriptedUser) -> BotMessage:
        """The bot's next send to ``user`` (see ``ScriptedUser.next_message``)."""
        inbox = self._inboxes.setdefault(user.address, deque())
        if not await self._settle(lambda: bool(inbox)):
            raise AssertionError(
                f"the bot sent {user.address} no further message; the runtime is idle "
                f"(last run: {_run_line(self.last_run)})"
            )
        return inbox.popleft()

    def received(self, user: ScriptedUser) -> list[BotMessage]:
        """Every message the bot sent ``user`` so far, read or not."""
        return list(self._received.get(user.address, []))


class ScriptedUser:
    """A user of a ``BotTest``: each action is a signed delivery through the webhook path."""

    def __init__(self, chat: BotTest, identity: DevUser) -> None:
        self.chat = chat
        self.identity = identity
        probe = message_delivery(
            identity,
            action_message({"kind": "text", "text": "."}, DISPLAY_PHONE_NUMBER),
            message_id="wamid.probe",
            now=0,
            metadata=_METADATA,
            waba_id=WABA_ID,
        )
        self.queue: str = queue_key(normalize(probe).updates[0])
        """The key of the user's queue (a hash: the runtime's events name it)."""

    @property
    def address(self) -> str:
        """What the bot replies to: the BSUID when the user has one, else the phone."""
        return self.identity.key

    async def _act(self, action: Mapping[str, Any]) -> Any:
        return await self.chat.deliver(self.identity, action)

    async def says(self, text: str) -> Any:
        """The user sends ``text``; the service's answer to the delivery."""
        return await self._act({"kind": "text", "text": text})

    async def taps(self, choice: str) -> Any:
        """The user taps a reply button, list row or quick reply of the bot's latest message
        that has one named ``choice`` (its id or title)."""
        for message in reversed(self.chat.received(self)):
            for found in message.choices:
                if choice in (found.id, found.title):
                    return await self._act(_tap(found, message))
        offered = [c.title for m in self.chat.received(self) for c in m.choices]
        raise AssertionError(f"nothing to tap named {choice!r}; the bot offered {offered}")

    async def shares_location(
        self,
        latitude: float,
        longitude: float,
        *,
        name: str | None = None,
        address: str | None = None,
    ) -> Any:
        """The user shares a location."""
        action: dict[str, Any] = {"kind": "location", "latitude": latitude, "longitude": longitude}
        action.update({k: v for k, v in (("name", name), ("address", address)) if v})
        return await self._act(action)

    async def shares_contact(self, name: str, phone: str) -> Any:
        """The user shares a contact card."""
        return await self._act({"kind": "contact", "name": name, "phone": phone})

    async def reacts(self, emoji: str, to: BotMessage | None = None) -> Any:
        """The user reacts with ``emoji`` to ``to`` (default: the bot's latest message)."""
        target = to or next(iter(reversed(self.chat.received(self))), None)
        if target is None or target.message_id is None:
            raise AssertionError("the bot sent this user nothing to react to")
        return await self._act(
            {"kind": "reaction", "emoji": emoji, "message_id": target.message_id}
        )

    async def answers_flow(self, response: Mapping[str, Any]) -> Any:
        """The user completes a Flow with ``response`` (the ``nfm_reply``'s JSON)."""
        return await self._act({"kind": "flow", "response_json": json.dumps(dict(response))})

    async def next_message(self) -> BotMessage:
        """The bot's next send to this user, letting the runtime work in virtual time until
        one arrives or nothing is left to do (then ``AssertionError``)."""
        return await self.chat.next_message(self)


def _tap(choice: Choice, message: BotMessage) -> dict[str, Any]:
    action: dict[str, Any]
    if choice.kind == "quick_reply":
        action = {"kind": "quick_reply", "payload": choice.id, "text": choice.title}
    else:
        action = {"kind": choice.kind, "id": choice.id, "title": choice.title}
        if choice.description:
            action["description"] = choice.description
    if message.message_id is not None:
        action["context"] = message.message_id
    return action


def _run_line(run: RunEnded | None) -> str:
    if run is None:
        return "none"
    error = f", {type(run.error).__name__}: {run.error}" if run.error is not None else ""
    return f"{run.kind} {run.outcome}{error}"
