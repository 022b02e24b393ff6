"""The ``HandlerContext`` the service gives a context handler: its update and sends through it.

A send from a context goes through ``Service.send`` like a send route's: the
payload is checked by ``svc.graph``'s rules, the Graph call is counted, the
outbound message is recorded when there is a store, and one log line names
its message id (never its text or recipient). With a store each send is a
keyed send: its key is derived from the update's key and the send's position
in the run (``send_key``), so a rerun of the update replays the first answer
instead of sending again. Waits (``wait_for_reply``, ...), the call's updates and the
user's state come from the runtime's ``Conversation`` of the run; the sends after a
wait keep counting positions, so they replay too.

``typing()`` marks the user's message read and shows "typing..." (one read receipt with
``typing_indicator``, sent through the same ``Service.send`` unkeyed: it takes no send
position), renewed every ``TYPING_RENEWAL`` seconds by a task of the run (the
conversation's ``start_soon``) until the run's first send after it (the platform hides
the indicator when the business sends), the run's end, or the end of the ``async with``
block. A typing request that fails is logged by class, never raised.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Collection, Generator, Mapping, Sequence
from types import TracebackType
from typing import Any

import trio

from svc import crypto, media
from svc.graph import (
    build_group_text_message,
    build_read_receipt,
    build_text_message,
    check_message_payload,
)
from svc.runtime import Conversation, Detached
from svc.webhook import (
    MessageUpdate,
    SentMessage,
    StatusUpdate,
    Update,
    UserState,
    click_listener,
    flow_listener,
    is_safe_id,
    listen_timeout,
    reply_listener,
    status_listener,
)

from ._numbers import ServedNumber
from ._replies import Reply

__all__ = [
    "TYPING_RENEWAL",
    "SendFromNumber",
    "ServiceContext",
    "Typing",
    "reply_address",
    "send_key",
]

SendFromNumber = Callable[[Mapping[str, Any], ServedNumber, "str | None"], Awaitable[Reply]]
"""The service's send of one checked payload from one business number, keyed by the given
idempotency key (None: unkeyed)."""


def send_key(update_key: str, position: int) -> str:
    """The idempotency key of a run's ``position``-th send (from 0): SHA-256 hex of
    ``update_key NUL "reply" NUL position``; the same at every rerun of the update."""
    return crypto.sha256_hex(f"{update_key}\x00reply\x00{position}".encode())


_MAX_LOGGED_ID = 256
TYPING_RENEWAL = 20.0
"""Seconds between the typing requests of a ``typing()`` block: the platform shows the
indicator for 25 seconds at most, so it is renewed before it lapses."""


def reply_address(update: Update) -> tuple[str, bool]:
    """Where a reply to ``update`` goes: ``(group id, True)`` for a group message, else
    ``(user key, False)`` (BSUID, parent BSUID or phone). ``ValueError`` when it names no one."""
    if isinstance(update, MessageUpdate) and update.group_id is not None:
        return update.group_id, True
    user = getattr(update, "user", None)  # message, status and user-id updates name a user
    key = user.key if user is not None else None
    if not key:
        raise ValueError(f"a {update.kind} update names no user to reply to")
    return key, False


def _message_id(reply: Reply) -> str | None:
    """The new message's id from the platform's answer, when it names a safe one."""
    try:
        answer = json.loads(reply.body)
        found = answer["messages"][0]["id"]
    except (ValueError, TypeError, KeyError, IndexError):
        return None
    if isinstance(found, str) and len(found) <= _MAX_LOGGED_ID and is_safe_id(found):
        return found
    return None


def _typed_message(updates: Sequence[Update]) -> MessageUpdate | None:
    """The message a typing indicator answers: the call's last inbound message (marking it
    read marks the earlier ones); None when the call has none (the business's echoes are
    not the user's)."""
    for update in reversed(updates):
        if isinstance(update, MessageUpdate) and not update.is_echo:
            return update
    return None


class Typing:
    """What ``ServiceContext.typing()`` returns: awaited, the indicator stays until the run's
    first send or its end; entered as a block, its exit also stops the renewal."""

    __slots__ = ("_context", "_scope")

    def __init__(self, context: ServiceContext) -> None:
        self._context = context
        self._scope: trio.CancelScope | None = None

    async def _start(self) -> None:
        self._scope = await self._context._start_typing()

    def __await__(self) -> Generator[Any, None, None]:
        return self._start().__await__()

    async def __aenter__(self) -> None:
        await self._start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._scope is not None:
            self._scope.cancel()


class ServiceContext:
    """One update's context: ``update``, the business number, and sends from that number."""

    __slots__ = (
        "_conversation",
        "_key",
        "_logger",
        "_number",
        "_send",
        "_sends",
        "_typing_sent",
        "update",
    )

    def __init__(
        self,
        update: Update,
        *,
        number: ServedNumber,
        send: SendFromNumber,
        logger: logging.Logger,
        update_key: str | None = None,
        conversation: Conversation | None = None,
    ) -> None:
        self.update = update
        self._number = number
        self._send = send
        self._logger = logger
        self._key = update_key
        self._sends = 0
        self._typing_sent: trio.Event | None = None  # unset while a typing request is out
        self._conversation = conversation if conversation is not None else Detached(update)

    @property
    def updates(self) -> Sequence[Update]:
        """The call's updates in order (a burst, or the one update)."""
        return self._conversation.updates

    @property
    def state(self) -> UserState:
        """The user's state, kept between runs (written when the run succeeds)."""
        return self._conversation.state

    async def wait_for_reply(self, *, timeout: float | None = None) -> MessageUpdate:
        """The user's next message; ``ListenerTimeout`` after ``timeout`` seconds."""
        found = await self._conversation.listen(reply_listener(), listen_timeout(timeout))
        assert isinstance(found, MessageUpdate)
        return found

    async def wait_for_click(
        self, *, timeout: float | None = None, ids: Collection[str] | None = None
    ) -> MessageUpdate:
        """The user's next button or list choice (of one of ``ids`` when given)."""
        found = await self._conversation.listen(click_listener(ids), listen_timeout(timeout))
        assert isinstance(found, MessageUpdate)
        return found

    async def wait_for_flow(self, *, timeout: float | None = None) -> MessageUpdate:
        """The user's next Flow completion."""
        found = await self._conversation.listen(flow_listener(), listen_timeout(timeout))
        assert isinstance(found, MessageUpdate)
        return found

    async def wait_for_status(
        self, message_id: str, *, timeout: float | None = None
    ) -> StatusUpdate:
        """The next status of the message ``message_id``."""
        listener = status_listener(message_id)
        found = await self._conversation.listen(listener, listen_timeout(timeout))
        assert isinstance(found, StatusUpdate)
        return found

    @property
    def phone_number_id(self) -> str:
        """The business number the update came to (the default one for WABA-level updates)."""
        return self._number.phone_number_id

    async def reply_text(
        self, text: str, *, preview_url: bool | None = None, quote: bool = False
    ) -> SentMessage:
        """Send ``text`` to the update's user (or group); ``quote`` replies to its message."""
        to, group = reply_address(self.update)
        quoted = (
            self.update.message_id if quote and isinstance(self.update, MessageUpdate) else None
        )
        build = build_group_text_message if group else build_text_message
        return await self.send(
            build(to=to, text=text, preview_url=preview_url, reply_to_message_id=quoted)
        )

    def typing(self) -> Typing:
        """Show the user "typing...": ``await ctx.typing()`` until the run's first send or
        its end, ``async with ctx.typing():`` until the block ends or the first send. The
        message is marked read with the indicator at once, renewed every
        ``TYPING_RENEWAL`` seconds by a task of the run; a no-op without a user's message."""
        return Typing(self)

    async def _start_typing(self) -> trio.CancelScope | None:
        """The indicator now, and its renewal started in the run's nursery; the scope that
        stops the renewal (None without a user's message)."""
        message = _typed_message(self.updates)
        if message is None:
            return None
        sends = self._sends
        await self._show_typing(message.message_id)
        scope = trio.CancelScope()

        async def renew() -> None:
            with scope:
                while True:
                    await trio.sleep(TYPING_RENEWAL)
                    if self._sends != sends:
                        return  # a send hid the indicator; renewing would show it again
                    await self._show_typing(message.message_id)

        self._conversation.start_soon(renew)
        return scope

    async def _show_typing(self, message_id: str) -> None:
        """One read receipt with the typing indicator; a failure is logged by class only."""
        done = self._typing_sent = trio.Event()
        try:
            receipt = build_read_receipt(message_id=message_id, typing_indicator=True)
            await self._send(receipt, self._number, None)
        except Exception as exc:  # noqa: BLE001 - the indicator is a courtesy, never the run's
            self._logger.warning("handler typing failed error=%s", type(exc).__name__[:80])
        finally:
            done.set()

    async def download_media(self, media_id: str) -> media.DownloadedMedia:
        """The bytes of a media the user sent, through the business number's client: its
        metadata (``GET /{media-id}``), then its URL, checked against its SHA-256."""
        client = self._number.client
        info = await media.download_media(
            client, media_id=media_id, phone_number_id=self.phone_number_id
        )
        return await media.download_media_bytes(
            client, url=info.url, expected_sha256=info.sha256
        )

    async def send(self, message: Mapping[str, Any]) -> SentMessage:
        """Send a ``svc.graph`` message payload from the context's business number.

        Raises ``svc.graph.GraphRequestValidationError`` for a payload the
        builders' rules refuse, ``svc.http.HttpError`` when the platform refuses
        the send or cannot be reached (the send routes' answer), and
        ``svc.webhook.ReplyOutcomeUnknown`` when the send may or may not have
        gone out (it is never made again).
        """
        payload = check_message_payload(message)
        key = send_key(self._key, self._sends) if self._key is not None else None
        self._sends += 1
        if self._typing_sent is not None:
            await self._typing_sent.wait()  # a typing request going out lands before the send
        reply = await self._send(payload, self._number, key)
        message_id = _message_id(reply)
        kind = payload.get("type")
        replayed = reply.headers.get("Idempotent-Replayed") == "true"
        self._logger.info(
            "handler reply %s type=%s message_id=%s",
            "replayed" if replayed else "sent",
            kind if isinstance(kind, str) and kind.isidentifier() else "other",
            message_id or "unknown",
        )
        # A send held to completion may finish past the run's deadline; the run ends here.
        await trio.lowlevel.checkpoint_if_cancelled()
        return SentMessage(message_id=message_id)
