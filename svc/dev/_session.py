"""One ``svc dev`` serving process's state: the chats, the inspector's records, the statuses.

The session builds each delivery the developer's action asks for, signs it with the
dev profile's app secret and posts it through the app's own webhook path (in process,
through the ASGI app); it hears every request the bot makes (the capturing transport),
every step of the handler runtime (``observe``) and every replayed send (the telemetry
sink), keeps them as numbered records for the page's event stream (a send with the Flow
JSON or template definition the dev folder holds for it), and posts the statuses of the
bot's sends back as the platform would (sent, delivered, and read when that user's chat
is open on the page).
"""

from __future__ import annotations

import json
import math
import secrets
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import httpx
import trio

from svc.graph import FAILURES, CapturedRequest
from svc.runtime import RuntimeEvent
from svc.store import PersistenceStore
from svc.webhook import (
    SIGNATURE_HEADER,
    DevActionError,
    DevUser,
    action_message,
    message_delivery,
    new_message_id,
    sign_body,
    status_delivery,
)

from ._definitions import definition_of
from ._media import DevTransport, DevUploads, Upload
from ._render import describe, terminal_line

__all__ = ["DevSession"]

KEEP_RECORDS: Final = 2000
"""Records a session keeps for a page that connects later (the oldest go first)."""
SUBSCRIBER_BUFFER: Final = 1000


class DevSession:
    """The dev state of one serving process (see the module docstring)."""

    def __init__(
        self,
        *,
        token: str,
        app_secret: str,
        webhook_path: str,
        phone_number_id: str,
        display_phone_number: str,
        waba_id: str,
        folder: Path,
        say: Callable[[str], None] = lambda line: None,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.token = token
        """The page's token (``/dev/?token=...``)."""
        self._app_secret = app_secret
        self.webhook_path = webhook_path
        self.metadata = {
            "display_phone_number": display_phone_number,
            "phone_number_id": phone_number_id,
        }
        self.waba_id = waba_id
        self._say = say
        self._now = now
        self.boot = secrets.token_hex(6)
        self.folder = folder
        """The dev folder: its ``uploads/``, ``flows/`` and ``templates/``."""
        self.uploads = DevUploads(folder)
        self.transport = DevTransport(self._captured, self.uploads)
        self.app: Any = None
        self.store: PersistenceStore | None = None
        self._records: deque[dict[str, Any]] = deque(maxlen=KEEP_RECORDS)
        self._counter = 0
        self._subscribers: set[trio.MemorySendChannel[dict[str, Any]]] = set()
        self._users: dict[str, DevUser] = {}
        self._inbound: dict[str, str] = {}
        self._unread: dict[str, list[str]] = {}
        self._open_chat: str | None = None
        send, receive = trio.open_memory_channel[tuple[str, DevUser, str]](math.inf)
        self._statuses_send = send
        self._statuses_receive = receive

    # --- the record stream ------------------------------------------------------------

    def _publish(self, kind: str, record: Mapping[str, Any]) -> dict[str, Any]:
        self._counter += 1
        full = {"id": self._counter, "boot": self.boot, "type": kind, **record}
        self._records.append(full)
        for channel in list(self._subscribers):
            try:
                channel.send_nowait(full)
            except (trio.WouldBlock, trio.BrokenResourceError, trio.ClosedResourceError):
                self._subscribers.discard(channel)  # a page too slow to follow: it reconnects
                channel.close()
        return full

    @contextmanager
    def subscribe(
        self, after: int = 0
    ) -> Iterator[tuple[list[dict[str, Any]], trio.MemoryReceiveChannel[dict[str, Any]]]]:
        """The records after ``after`` and a channel of the ones to come (closed on ``close``)."""
        send, receive = trio.open_memory_channel[dict[str, Any]](SUBSCRIBER_BUFFER)
        backlog = [record for record in self._records if record["id"] > after]
        self._subscribers.add(send)
        try:
            yield backlog, receive
        finally:
            self._subscribers.discard(send)
            send.close()

    def close(self) -> None:
        """End every event stream (the process is stopping; the pages reconnect)."""
        for channel in list(self._subscribers):
            channel.close()
        self._subscribers.clear()

    def records(self) -> list[dict[str, Any]]:
        """Every record kept, oldest first."""
        return list(self._records)

    # --- what the bot and its runtime do ----------------------------------------------

    def observe(self, event: RuntimeEvent) -> None:
        """The handler runtime's observer (``HandlerOptions.observer``)."""
        record = describe(event)
        self._publish("runtime", record)
        self._say(terminal_line(record))

    def telemetry_sink(self) -> _ReplaySink:
        """The sink that turns the service's replayed sends into records."""
        return _ReplaySink(self)

    def note_replayed(self) -> None:
        """A send answered from the store (an earlier run's), with no request upstream."""
        self._publish("send", {"outcome": "replayed", "chat": None})
        self._say("dev: a send was replayed (an earlier run's answer; nothing went out)")

    def _chat_of(self, payload: Any) -> str | None:
        if not isinstance(payload, dict):
            return None
        if payload.get("status") == "read":
            found = self._inbound.get(str(payload.get("message_id")))
            return found
        for field in ("recipient", "to"):
            value = payload.get(field)
            if isinstance(value, str) and value:
                user = self._users.get(value.lstrip("+"))
                return user.key if user is not None else value.lstrip("+")
        return None

    def _captured(self, request: CapturedRequest) -> None:
        chat = self._chat_of(request.payload)
        outcome = "sent" if request.status < 400 else "failed"
        self._publish(
            "send",
            {
                "chat": chat,
                "outcome": outcome,
                "method": request.method,
                "path": request.path,
                "payload": request.payload,
                "status": request.status,
                "answer": request.answer,
                "message_id": request.message_id,
                "failure": request.failure,
                "definition": definition_of(self.folder, request.payload),
            },
        )
        self._say(f"dev: bot -> {chat or '?'} {_summary(request.payload)} {outcome} "
                  f"({request.status})")
        if request.failure is not None:
            self._publish("failure", {"armed": self.transport.next_failure})
        if outcome == "sent" and request.message_id is not None and chat is not None:
            user = self._users.get(chat) or _user_for(chat)
            self._statuses_send.send_nowait((request.message_id, user, "sent"))
            self._statuses_send.send_nowait((request.message_id, user, "delivered"))
            if self._open_chat == chat:
                self._statuses_send.send_nowait((request.message_id, user, "read"))
            else:
                self._unread.setdefault(chat, []).append(request.message_id)

    # --- what the developer does ------------------------------------------------------

    def fail_next(self, name: str | None) -> None:
        """Make the next send answer the platform error ``name`` (``FAILURES``); None: not."""
        if name is not None and name not in FAILURES:
            raise DevActionError("failure must name one of the listed platform errors")
        self.transport.fail_next(name)
        self._publish("failure", {"armed": name})

    def open_chat(self, chat: str | None) -> None:
        """The chat the page shows (None: none, or the page is hidden): its sends get read."""
        self._open_chat = chat
        if chat is None:
            return
        user = self._users.get(chat) or _user_for(chat)
        for message_id in self._unread.pop(chat, []):
            self._statuses_send.send_nowait((message_id, user, "read"))

    def upload(self, content: bytes, *, mime_type: str, filename: str) -> Upload:
        """Keep a file the page uploads (``ValueError`` for a bad type or size)."""
        upload = self.uploads.add(content, mime_type=mime_type, filename=filename)
        self._say(f"dev: upload {upload.media_id} {upload.mime_type} {upload.file_size} bytes")
        return upload

    def _with_upload(self, action: Mapping[str, Any]) -> Mapping[str, Any]:
        """An image or document action naming an upload, with the upload's media fields."""
        media_id = action.get("media_id")
        if action.get("kind") not in ("image", "document") or media_id is None:
            return action
        upload = self.uploads.get(media_id) if isinstance(media_id, str) else None
        if upload is None:
            raise DevActionError("media_id must name a file uploaded to this dev folder")
        return {
            **action,
            "mime_type": upload.mime_type,
            "sha256": upload.sha256,
            "filename": action.get("filename") or upload.filename,
        }

    async def act(self, user_json: object, action: Mapping[str, Any]) -> dict[str, Any]:
        """Post the delivery of one action of the page; its record (with the answer)."""
        user = DevUser.from_json(user_json)
        message = action_message(self._with_upload(action), self.metadata["display_phone_number"])
        for key in (user.phone, user.bsuid):
            if key is not None:
                self._users[key] = user
        message_id = new_message_id()
        self._inbound[message_id] = user.key
        body = message_delivery(
            user,
            message,
            message_id=message_id,
            now=int(self._now()),
            metadata=self.metadata,
            waba_id=self.waba_id,
        )
        self._say(f"dev: {user.name} ({user.key}) -> bot {_summary(message)}")
        return await self._deliver(body, chat=user.key, origin="user", message_id=message_id)

    async def _deliver(
        self, body: dict[str, Any], *, chat: str, origin: str, message_id: str
    ) -> dict[str, Any]:
        raw = json.dumps(body, separators=(",", ":")).encode("utf-8")
        signature = sign_body(raw, self._app_secret)
        assert self.app is not None, "the session is mounted on the app before it serves"
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=self.app), base_url="http://127.0.0.1"
        ) as client:
            response = await client.post(
                self.webhook_path,
                content=raw,
                headers={"Content-Type": "application/json", SIGNATURE_HEADER: signature},
            )
        try:
            answer: Any = response.json()
        except ValueError:
            answer = response.text
        return self._publish(
            "delivery",
            {
                "chat": chat,
                "origin": origin,
                "message_id": message_id,
                "raw": body,
                "answer": {"status": response.status_code, "body": answer},
            },
        )

    async def run_statuses(self, *, task_status: trio.TaskStatus[None]) -> None:
        """Post the statuses of the bot's sends, in order, until cancelled."""
        task_status.started()
        async for message_id, user, status in self._statuses_receive:
            body = status_delivery(
                user,
                message_id=message_id,
                status=status,
                now=int(self._now()),
                metadata=self.metadata,
                waba_id=self.waba_id,
            )
            await self._deliver(body, chat=user.key, origin="status", message_id=message_id)

    # --- dead letters -----------------------------------------------------------------

    async def dead_letters(self) -> list[dict[str, Any]]:
        """The store's dead inbox items (id, update key, kind, attempts, reason)."""
        if self.store is None:
            return []
        items = await self.store.list_inbox_items(status="dead", limit=100)
        return [
            {
                "id": item.id,
                "update": item.update_key,
                "kind": item.kind,
                "attempts": item.attempts,
                "reason": item.last_error,
            }
            for item in items
        ]

    async def retry_dead(self, item_id: int) -> bool:
        """Put a dead item back to pending (``retry_inbox_item``); False if it is not dead."""
        if self.store is None:
            return False
        found = await self.store.retry_inbox_item(id=item_id, now=datetime.now(UTC))
        self._publish("dead", {"action": "retry", "item": item_id, "done": found is not None})
        return found is not None

    async def drop_dead(self, item_id: int) -> bool:
        """Delete an inbox item (``drop_inbox_item``); False if it did not exist."""
        if self.store is None:
            return False
        found = await self.store.drop_inbox_item(id=item_id)
        self._publish("dead", {"action": "drop", "item": item_id, "done": found})
        return found


class _ReplaySink:
    """A ``TelemetrySink`` that sees only the replayed sends (the rest is the metrics' job)."""

    def __init__(self, session: DevSession) -> None:
        self._session = session

    def increment_counter(self, name: str, value: float, attributes: Mapping[str, str]) -> None:
        if name == "send_outcomes_total" and attributes.get("svc.operation.outcome") == "replayed":
            self._session.note_replayed()

    def record_histogram(
        self, name: str, value_seconds: float, attributes: Mapping[str, str]
    ) -> None:
        return None


def _user_for(address: str) -> DevUser:
    """A user the bot wrote to first: named by its address."""
    if address.isdigit():
        return DevUser(name=address, phone=address)
    return DevUser(name=address, bsuid=address)


def _summary(message: Any) -> str:
    """A message (the user's or the bot's) in a few words, for the terminal."""
    if not isinstance(message, Mapping):
        return "request"
    if message.get("status") == "read":
        return "read mark" + (" + typing" if message.get("typing_indicator") else "")
    kind = str(message.get("type"))
    body = message.get(kind)
    if kind == "text" and isinstance(body, Mapping):
        return f"text {json.dumps(body.get('body'), ensure_ascii=False)}"
    return f"{kind} {json.dumps(body, ensure_ascii=False)[:200]}"
