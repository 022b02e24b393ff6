"""The facade contract, and the default facade with typed handlers and the diagnostics flags.

``WebhookFacade`` is what the HTTP layer hands updates to: ``handles(update)``
at ingest, ``run(context)`` after the answer. ``DefaultFacade`` is the one it
builds when none is injected: library users register handlers per kind
(``facade.on("message", handler)`` or ``@facade.on("status")``), and the two
diagnostics flags turn on a privacy-safe event log and a demo echo reply.
Handler failures are counted by exception class and logged without payload
data; ``run`` raises them (the runtime retries), ``dispatch`` swallows them.

A handler registered with ``context=True`` receives a ``HandlerContext``
instead of the bare update: the update, the business number, and replies
sent through the service that runs it (this layer defines the protocol; the
HTTP layer implements it). ``typing=True`` runs such a handler inside
``ctx.typing()``: the user sees "typing..." until its first reply.
"""

from __future__ import annotations

import inspect
import logging
import re
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, overload, runtime_checkable

from svc.media import DownloadedMedia

from ._conversation import Coalesce, timed_out_wait
from ._state import UserState
from ._updates import (
    UPDATE_CLASSES,
    UPDATE_KINDS,
    AccountUpdate,
    CallConnectUpdate,
    CallStatusUpdate,
    CallTerminateUpdate,
    ChatOpenedUpdate,
    GroupLifecycleUpdate,
    GroupParticipantsUpdate,
    GroupSettingsUpdate,
    GroupStatusUpdate,
    MessageUpdate,
    MessagingHandoverUpdate,
    StandbyUpdate,
    StatusUpdate,
    SystemUpdate,
    Update,
    UpdateKind,
    UserPreferencesUpdate,
)

if TYPE_CHECKING:
    from ._delivery import Delivery

__all__ = [
    "ECHO_PREFIX",
    "MAX_ERROR_CLASSES",
    "ContextHandler",
    "DefaultFacade",
    "Dispatcher",
    "FacadeFlags",
    "FacadeStatistics",
    "Handler",
    "HandlerContext",
    "ReplyOutcomeUnknown",
    "SentMessage",
    "TextSender",
    "TypingIndicator",
    "WebhookFacade",
    "dispatch_delivery",
    "facade_flags_from_env",
    "safe_detail",
]

ECHO_PREFIX = "Echo: "
MAX_TEXT_LENGTH = 4096
MAX_ERROR_CLASSES = 10
MAX_ERROR_CLASS_NAME = 80
_TOKEN = re.compile(r"[A-Za-z_]{1,64}")

U = TypeVar("U", bound=Update)
Handler = Callable[[U], object]
"""A sync or async callable taking one update of a kind; its result is awaited if awaitable."""
Decorator = Callable[[Handler[U]], Handler[U]]
H = TypeVar("H", bound=Callable[..., object])


@dataclass(frozen=True, slots=True, kw_only=True)
class SentMessage:
    """What a send from a handler's context returns: the platform's id of the new message."""

    message_id: str | None
    """None when the platform's answer named no (safe) id."""


class TypingIndicator(Awaitable[None], AbstractAsyncContextManager[None], Protocol):
    """What ``ctx.typing()`` returns: awaited, or entered as an ``async with`` block."""


class HandlerContext(Protocol):
    """What a handler registered with ``context=True`` receives (one per update it runs for).

    Its sends go through the service that runs the handler: they are checked
    like the service's send routes, counted in its Graph metrics, recorded as
    outbound rows when it has a store, and logged by message id (never text).
    A refused send raises the service's error.
    """

    @property
    def update(self) -> Update:
        """The update the handler runs for."""
        ...

    @property
    def phone_number_id(self) -> str:
        """The business number the update came to, which the context's sends come from."""
        ...

    async def reply_text(
        self, text: str, *, preview_url: bool | None = None, quote: bool = False
    ) -> SentMessage:
        """Send ``text`` to where the update came from: the user, or the group of a group
        message; ``quote=True`` shows it as a reply to the update's message."""
        ...

    async def send(self, message: Mapping[str, Any]) -> SentMessage:
        """Send a message payload built by ``svc.graph``'s builders (``build_image_message``,
        ``build_interactive_buttons_message``, ...), from the context's business number."""
        ...

    def typing(self) -> TypingIndicator:
        """Marks the user's message read and shows "typing..." (renewed before the
        platform's 25 s lapse) until the first send: ``await ctx.typing()`` also stops at
        the end of the run, ``async with ctx.typing():`` at the end of the block. A no-op
        without a user's message; a failed typing request is logged, never raised."""
        ...

    async def download_media(self, media_id: str) -> DownloadedMedia:
        """The bytes of a media the user sent (its ``id``), through the context's business
        number: ``GET /{media-id}``, then its URL, checked against the media's SHA-256
        (``svc.media.download_media`` and ``download_media_bytes``, and their errors)."""
        ...

    @property
    def updates(self) -> Sequence[Update]:
        """The updates of this call, in order: the burst of a handler registered with
        ``coalesce=``, else the one update (``update`` is always the first)."""
        ...

    @property
    def state(self) -> UserState:
        """The user's state (per queue: the user, the group or the number): JSON values kept
        between runs, written when the run succeeds and only if changed."""
        ...

    async def wait_for_reply(self, *, timeout: float | None = None) -> MessageUpdate:
        """The user's next message (any type), received by any worker or instance; raises
        ``ListenerTimeout`` after ``timeout`` seconds (default ``DEFAULT_LISTEN_TIMEOUT``)."""
        ...

    async def wait_for_click(
        self, *, timeout: float | None = None, ids: Collection[str] | None = None
    ) -> MessageUpdate:
        """The user's next button or list choice (of one of ``ids`` when given)."""
        ...

    async def wait_for_flow(self, *, timeout: float | None = None) -> MessageUpdate:
        """The user's next Flow completion (an interactive ``nfm_reply``)."""
        ...

    async def wait_for_status(
        self, message_id: str, *, timeout: float | None = None
    ) -> StatusUpdate:
        """The next status of the message ``message_id`` (one this run sent, say)."""
        ...


BurstHandler = Callable[[list[U]], object]
"""A plain handler registered with ``coalesce=``: it receives the burst's updates, in order."""
ContextHandler = Callable[[HandlerContext], object]
"""A sync or async callable taking the ``HandlerContext`` of one update (``context=True``)."""
C = TypeVar("C", bound=Callable[[HandlerContext], object])


@dataclass(frozen=True, slots=True, kw_only=True)
class _Entry:
    """How a registered handler is called: with the context or the update, inside
    ``ctx.typing()`` or not."""

    context: bool
    typing: bool = False


class NoHandlerContext(Exception):
    """Counted when a context handler's update is dispatched without a context."""


class _Register(Protocol):
    """The decorator ``on(kind)`` returns: registers a handler and gives it back unchanged."""

    def __call__(self, handler: H, /) -> H: ...


class _RegisterContext(Protocol):
    """The decorator ``on(kind, context=True)`` returns, for handlers of a ``HandlerContext``."""

    def __call__(self, handler: C, /) -> C: ...


def _kind_of(cls: type[Any]) -> UpdateKind:
    """The kind of an update class, refused when the class is not one of ``UPDATE_CLASSES``."""
    for kind, known in UPDATE_CLASSES.items():
        if known is cls:
            return kind
    raise ValueError(f"unknown update class; expected one of {', '.join(UPDATE_KINDS)}")


class ReplyOutcomeUnknown(Exception):
    """A context send whose outcome cannot be known: the platform may have sent it or not.

    Raised by ``HandlerContext.reply_text``/``send`` when the send's answer was
    lost (a 5xx, a broken connection, a timeout) or when a rerun finds the same
    send claimed and never completed (the process died during it). The send is
    never made again: the handler runtime buries the update as a dead letter
    (``send_outcome_unknown``) instead of retrying it.
    """


@runtime_checkable
class WebhookFacade(Protocol):
    """What the service hands updates to: which it handles, and the run of one of them.

    ``handles(update)`` is asked at ingest, in the request: True hands the
    update to the handler runtime (it counts in the answer's ``queued``),
    False records it without a run. ``run(context)`` runs the handlers of
    ``context.update`` after the answer; it raises when a handler failed, and
    the runtime retries the update (``docs/handlers.md``). ``coalesce_for(update)``
    is asked before the run: a window gathers the user's burst first.
    """

    def handles(self, update: Update) -> bool: ...

    def run(self, context: HandlerContext) -> Awaitable[None]: ...

    def coalesce_for(self, update: Update) -> Coalesce | None:
        """The quiet window the runtime gathers a burst of the update's kind in before the
        run (``on(..., coalesce=)``); None for a kind (or a facade) without bursts."""
        ...


class Dispatcher(Protocol):
    """What ``dispatch_delivery`` hands updates to (``DefaultFacade`` is one); sync or async."""

    def dispatch(self, update: Update) -> Awaitable[None] | None: ...


class TextSender(Protocol):
    """The one Graph call the echo reply needs (``svc.graph.PhoneNumberClient`` has it)."""

    async def send_text(
        self,
        *,
        to: str,
        text: str,
        preview_url: bool | None = None,
        reply_to_message_id: str | None = None,
    ) -> Any: ...


async def dispatch_delivery(
    facade: Dispatcher,
    delivery: Delivery,
    *,
    on_error: Callable[[Update, Exception], object],
) -> None:
    """Hand every update of ``delivery`` to ``facade.dispatch``, in payload order (library use).

    A synchronous result is not awaited (no coroutine per update for sync
    facades); an ``Exception`` from a handler goes to ``on_error`` with its
    update and the next update still runs. Cancellation (``BaseException``) is
    not caught. The service does not use it: it runs updates after its answer.
    """
    dispatch = facade.dispatch
    for update in delivery.updates:
        try:
            handled = dispatch(update)
            if inspect.isawaitable(handled):
                await handled
        except Exception as exc:  # noqa: BLE001 - handler failures are reported, never raised
            on_error(update, exc)


@dataclass(frozen=True, slots=True, kw_only=True)
class FacadeFlags:
    """The default facade's flags (``SVC_LOG_WEBHOOK_EVENTS``, ``SVC_ECHO_REPLY``)."""

    log_webhook_events: bool = False
    echo_reply: bool = False


def facade_flags_from_env(env: Mapping[str, str]) -> FacadeFlags:
    """Read the flags from an environment-like mapping; only the value ``1`` turns a flag on.

    Pure: the caller passes the mapping (the CLI its environment), this layer
    never reads the process environment.
    """
    return FacadeFlags(
        log_webhook_events=env.get("SVC_LOG_WEBHOOK_EVENTS") == "1",
        echo_reply=env.get("SVC_ECHO_REPLY") == "1",
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class FacadeStatistics:
    """A snapshot of the default facade's counters."""

    dispatched: int
    handler_errors: Mapping[str, int]
    echo_sent: int
    echo_errors: int


def _token(value: object) -> str:
    return value if isinstance(value, str) and _TOKEN.fullmatch(value) else "other"


def safe_detail(update: Update) -> str:
    """A coarse label of an update that is safe to log: a platform enum word, never data.

    Message type, status name, account field and event, call direction or
    status, group event type, preference value, system type, standby item and
    its type or status, handover event, or unknown field;
    anything that is not 1-64 ASCII letters or underscores reads ``other``, so
    no digits (phone numbers, ids) and no free text can pass.
    """
    if isinstance(update, MessageUpdate):
        return _token(update.type)
    if isinstance(update, StatusUpdate | CallTerminateUpdate | CallStatusUpdate):
        return _token(update.status)
    if isinstance(update, AccountUpdate):
        return f"{_token(update.field)}:{_token(update.event)}"
    if isinstance(update, CallConnectUpdate):
        return _token(update.direction)
    if isinstance(
        update,
        GroupLifecycleUpdate | GroupParticipantsUpdate | GroupSettingsUpdate | GroupStatusUpdate,
    ):
        return _token(update.event_type)
    if isinstance(update, UserPreferencesUpdate):
        return _token(update.value)
    if isinstance(update, SystemUpdate):
        return _token(update.system_type)
    if isinstance(update, ChatOpenedUpdate):
        return "request_welcome"
    if isinstance(update, StandbyUpdate):
        return f"{update.item}:{_token(update.status or update.type)}"
    if isinstance(update, MessagingHandoverUpdate):
        return _token(update.event)
    return _token(update.field)


async def _finish(result: object) -> None:
    """Await a handler's result when it is awaitable (an async handler's coroutine)."""
    if inspect.isawaitable(result):
        await result


class DefaultFacade:
    """Typed handlers per update kind, plus the optional event log and echo reply.

    ``run(context)`` (the ``WebhookFacade`` contract) runs every handler
    registered for the update's kind, in registration order; the handlers
    registered with ``context=True`` receive the context, the others the
    update. A failure is counted by class and logged (class name only) and
    raised. ``dispatch(update)`` (library use, no context) runs them too but
    never raises a handler's exception. Cancellation (``BaseException``) is not
    caught.
    """

    def __init__(
        self,
        *,
        log_webhook_events: bool = False,
        echo_reply: bool = False,
        echo_client: TextSender | None = None,
        logger: logging.Logger | None = None,
    ) -> None:
        self._log_events = log_webhook_events
        self._echo_reply = echo_reply
        self._echo_client = echo_client if echo_reply else None
        self._logger = logger if logger is not None else logging.getLogger("svc.webhook")
        self._handlers: dict[str, list[tuple[Callable[[Any], object], _Entry]]] = {}
        self._coalesce: dict[str, Coalesce] = {}
        self._dispatched = 0
        self._handler_errors: dict[str, int] = {}
        self._echo_sent = 0
        self._echo_errors = 0

    @classmethod
    def from_flags(
        cls,
        flags: FacadeFlags,
        *,
        echo_client: TextSender | None = None,
        logger: logging.Logger | None = None,
    ) -> DefaultFacade:
        """Build the facade the service uses when none is injected."""
        return cls(
            log_webhook_events=flags.log_webhook_events,
            echo_reply=flags.echo_reply,
            echo_client=echo_client,
            logger=logger,
        )

    @overload
    def on(
        self,
        kind: type[U],
        handler: Handler[U],
        *,
        context: Literal[False] = False,
        coalesce: None = None,
    ) -> Handler[U]: ...
    @overload
    def on(
        self,
        kind: type[U],
        handler: None = None,
        *,
        context: Literal[False] = False,
        coalesce: None = None,
    ) -> Decorator[U]: ...
    @overload
    def on(
        self,
        kind: UpdateKind,
        handler: H,
        *,
        context: Literal[False] = False,
        coalesce: None = None,
    ) -> H: ...
    @overload
    def on(
        self,
        kind: UpdateKind,
        handler: None = None,
        *,
        context: Literal[False] = False,
        coalesce: None = None,
    ) -> _Register: ...
    @overload
    def on(
        self,
        kind: UpdateKind | type[Any],
        handler: C,
        *,
        context: Literal[True],
        typing: bool = False,
        coalesce: float | None = None,
        max_wait: float | None = None,
        max_count: int | None = None,
    ) -> C: ...
    @overload
    def on(
        self,
        kind: UpdateKind | type[Any],
        handler: None = None,
        *,
        context: Literal[True],
        typing: bool = False,
        coalesce: float | None = None,
        max_wait: float | None = None,
        max_count: int | None = None,
    ) -> _RegisterContext: ...
    @overload
    def on(
        self,
        kind: type[U],
        handler: BurstHandler[U],
        *,
        context: Literal[False] = False,
        coalesce: float,
        max_wait: float | None = None,
        max_count: int | None = None,
    ) -> BurstHandler[U]: ...
    @overload
    def on(
        self,
        kind: UpdateKind | type[Any],
        handler: None = None,
        *,
        context: Literal[False] = False,
        coalesce: float,
        max_wait: float | None = None,
        max_count: int | None = None,
    ) -> _Register: ...
    @overload
    def on(
        self,
        kind: UpdateKind,
        handler: H,
        *,
        context: Literal[False] = False,
        coalesce: float,
        max_wait: float | None = None,
        max_count: int | None = None,
    ) -> H: ...
    def on(
        self,
        kind: UpdateKind | type[Any],
        handler: Callable[[Any], object] | None = None,
        *,
        context: bool = False,
        typing: bool = False,
        coalesce: float | None = None,
        max_wait: float | None = None,
        max_count: int | None = None,
    ) -> Any:
        """Register ``handler`` for ``kind``; without ``handler``, return a decorator that does.

        ``kind`` is a kind name (``"message"``) or an update class
        (``MessageUpdate``); with the class, mypy checks the handler's
        parameter against it. With ``context=True`` the handler receives a
        ``HandlerContext`` (``ctx.update``, ``ctx.reply_text(...)``) instead of
        the update: the choice is made here, never read from the handler's signature.
        ``typing=True`` (a context handler of messages) runs it inside ``ctx.typing()``:
        the message is marked read and the user sees "typing..." until its first reply.

        ``coalesce=SECONDS`` makes the kind's handler answer a burst once: the
        user's updates of the kind arriving until none came for that long
        (``max_wait`` seconds at most, default five windows; ``max_count`` updates
        at most, default 20) go to one call, in order: ``ctx.updates`` for a
        context handler, a list for a plain one. The handlers of a kind are all
        coalesced alike, or none (``ValueError``).
        """
        if coalesce is None:
            if max_wait is not None or max_count is not None:
                raise ValueError("max_wait and max_count go with coalesce")
            burst = None
        else:
            burst = Coalesce.of(coalesce, max_wait, max_count)
        if isinstance(kind, type):
            kind = _kind_of(kind)
        elif kind not in UPDATE_KINDS:
            raise ValueError(f"unknown update kind; expected one of {', '.join(UPDATE_KINDS)}")
        if not isinstance(context, bool) or not isinstance(typing, bool):
            raise TypeError("context and typing must be True or False")
        if typing and not (context and kind == "message"):
            raise ValueError("typing goes with a context handler of messages")
        entry = _Entry(context=context, typing=typing)
        if handler is None:

            def register(func: Callable[[Any], object]) -> Callable[[Any], object]:
                self._add(kind, func, entry, burst)
                return func

            return register
        self._add(kind, handler, entry, burst)
        return handler

    def _add(
        self, kind: str, handler: Callable[[Any], object], entry: _Entry, burst: Coalesce | None
    ) -> None:
        if not callable(handler):
            raise TypeError("handler must be callable")
        if kind in self._handlers and self._coalesce.get(kind) != burst:
            raise ValueError("the handlers of a kind are all coalesced alike, or none")
        self._handlers.setdefault(kind, []).append((handler, entry))
        if burst is not None:
            self._coalesce[kind] = burst

    def coalesce_for(self, update: Update) -> Coalesce | None:
        """The quiet window of the update's kind (``on(..., coalesce=)``), None if it has none:
        the runtime gathers the burst before the run."""
        return self._coalesce.get(update.kind)

    def handlers(self, kind: UpdateKind) -> tuple[Callable[[Any], object], ...]:
        """The handlers registered for ``kind``, in call order (both forms)."""
        return tuple(handler for handler, _ in self._handlers.get(kind, ()))

    def handles(self, update: Update) -> bool:
        """True when a handler is registered for the update's kind, or it is a message and
        the echo reply is on: work the service's handler runtime runs after its answer.

        The event log is not such work: it is diagnostics (the service writes its
        own line at ingest when ``SVC_LOG_WEBHOOK_EVENTS=1``).
        """
        if update.kind in self._handlers:
            return True
        return self._echo_reply and isinstance(update, MessageUpdate)

    def statistics(self) -> FacadeStatistics:
        """An immutable snapshot of the counters."""
        return FacadeStatistics(
            dispatched=self._dispatched,
            handler_errors=MappingProxyType(dict(self._handler_errors)),
            echo_sent=self._echo_sent,
            echo_errors=self._echo_errors,
        )

    async def dispatch(self, update: Update) -> None:
        """Log (when enabled), run the kind's handlers, then echo (when enabled).

        A handler registered with ``context=True`` has no context here: it is
        counted as a handler error (``NoHandlerContext``) and not called.
        """
        await self._run(update, None)

    async def run(self, context: HandlerContext) -> None:
        """Run ``context.update``'s handlers in registration order, then the echo (when on);
        context handlers receive ``context``, and the echo reply goes through it.

        The first handler (or echo) that raises is counted and logged by class, and its
        exception propagates, so the service's runtime retries the update (the handlers
        after it have not run; the ones before it run again, and their context sends
        replay their first answers).
        """
        await self._run(context.update, context, propagate=True)

    async def _run(
        self, update: Update, context: HandlerContext | None, *, propagate: bool = False
    ) -> None:
        self._dispatched += 1
        kind = update.kind
        if self._log_events:
            self._logger.info("webhook update kind=%s detail=%s", kind, safe_detail(update))
        burst = kind in self._coalesce
        for handler, entry in self._handlers.get(kind, ()):
            try:
                if not entry.context:
                    if burst:
                        result = handler(list(context.updates) if context else [update])
                    else:
                        result = handler(update)
                elif context is None:
                    raise NoHandlerContext
                elif entry.typing:
                    async with context.typing():
                        await _finish(handler(context))
                    result = None
                else:
                    result = handler(context)
                if inspect.isawaitable(result):
                    await result
            except Exception as exc:
                if timed_out_wait(exc) is not None:
                    raise  # not a failure: the runtime ends the run as a success
                self._count_error(kind, exc)
                if propagate:
                    raise
        if self._echo_reply and isinstance(update, MessageUpdate):
            await self._echo(update, context, propagate=propagate)

    def _count_error(self, kind: str, exc: Exception) -> None:
        name = type(exc).__name__[:MAX_ERROR_CLASS_NAME]
        errors = self._handler_errors
        if name not in errors and len(errors) >= MAX_ERROR_CLASSES:
            del errors[next(iter(errors))]  # drop the oldest class
        errors[name] = errors.get(name, 0) + 1
        # The class name only: a message or traceback could carry payload data.
        self._logger.warning("webhook handler failed kind=%s error=%s", kind, name)

    async def _echo(
        self, update: MessageUpdate, context: HandlerContext | None, *, propagate: bool = False
    ) -> None:
        """Reply to an inbound 1:1 text with ``Echo: <text>``, through the context when there
        is one (the service's send: counted, recorded, logged by id), else the echo client.

        Group messages are not echoed, and neither are echoes of the business's
        own messages (``is_echo``): answering those would message the business.
        """
        text = update.text
        user = update.user
        sender = user.key if user is not None else None  # a BSUID, else a phone
        if text is None or not sender or update.group_id is not None or update.is_echo:
            return
        reply = (ECHO_PREFIX + text)[:MAX_TEXT_LENGTH]
        try:
            if context is not None:
                await context.reply_text(reply, quote=True)
            elif self._echo_client is not None:
                await self._echo_client.send_text(
                    to=sender, text=reply, reply_to_message_id=update.message_id
                )
            else:
                raise NoHandlerContext
        except Exception as exc:
            self._echo_errors += 1
            name = type(exc).__name__[:MAX_ERROR_CLASS_NAME]
            self._logger.warning("webhook echo reply failed error=%s", name)
            if propagate:
                raise
        else:
            self._echo_sent += 1
