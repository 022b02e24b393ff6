"""The facade contract, and the default facade with typed handlers and the diagnostics flags.

``WebhookFacade`` is what the HTTP layer hands each normalized update to.
``DefaultFacade`` is the one it builds when none is injected: library users
register handlers per kind (``facade.on("message", handler)`` or
``@facade.on("status")``), and the two diagnostics flags turn on a
privacy-safe event log and a demo echo reply. Handler failures are caught,
counted by exception class and logged without payload data.
"""

from __future__ import annotations

import inspect
import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, overload, runtime_checkable

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
    "DefaultFacade",
    "FacadeFlags",
    "FacadeStatistics",
    "Handler",
    "TextSender",
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


class _Register(Protocol):
    """The decorator ``on(kind)`` returns: registers a handler and gives it back unchanged."""

    def __call__(self, handler: H, /) -> H: ...


def _kind_of(cls: type[Any]) -> UpdateKind:
    """The kind of an update class, refused when the class is not one of ``UPDATE_CLASSES``."""
    for kind, known in UPDATE_CLASSES.items():
        if known is cls:
            return kind
    raise ValueError(f"unknown update class; expected one of {', '.join(UPDATE_KINDS)}")


@runtime_checkable
class WebhookFacade(Protocol):
    """What normalized updates are handed to; ``dispatch`` may be sync or async.

    A facade may also define ``needs_run(self, update: Update) -> bool``: False
    says dispatching that update does no work that must finish, so the store
    records it finished with the delivery (one store trip) and a crash before its
    dispatch does not run it again. Without the method every update needs a run.
    """

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
    facade: WebhookFacade,
    delivery: Delivery,
    *,
    on_error: Callable[[Update, Exception], object],
) -> None:
    """Hand every update of ``delivery`` to ``facade``, in payload order.

    A synchronous ``dispatch`` result is not awaited (no coroutine per update
    for sync facades); an ``Exception`` from a handler goes to ``on_error``
    with its update and the next update still runs. Cancellation
    (``BaseException``) is not caught.
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


class DefaultFacade:
    """Typed handlers per update kind, plus the optional event log and echo reply.

    ``dispatch`` runs every handler registered for the update's kind, in
    registration order; an exception is caught, counted by class and logged
    (class name only), and never reaches the caller. Cancellation
    (``BaseException``) is not caught.
    """

    def __init__(
        self,
        *,
        log_webhook_events: bool = False,
        echo_reply: bool = False,
        echo_client: TextSender | None = None,
        logger: logging.Logger | None = None,
    ) -> None:
        if echo_reply and echo_client is None:
            raise ValueError("echo_reply needs an echo_client (a PhoneNumberClient)")
        self._log_events = log_webhook_events
        self._echo_client = echo_client if echo_reply else None
        self._logger = logger if logger is not None else logging.getLogger("svc.webhook")
        self._handlers: dict[str, list[Handler[Any]]] = {}
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
    def on(self, kind: type[U], handler: Handler[U]) -> Handler[U]: ...
    @overload
    def on(self, kind: type[U], handler: None = None) -> Decorator[U]: ...
    @overload
    def on(self, kind: UpdateKind, handler: H) -> H: ...
    @overload
    def on(self, kind: UpdateKind, handler: None = None) -> _Register: ...
    def on(self, kind: UpdateKind | type[Any], handler: Handler[Any] | None = None) -> Any:
        """Register ``handler`` for ``kind``; without ``handler``, return a decorator that does.

        ``kind`` is a kind name (``"message"``) or an update class
        (``MessageUpdate``); with the class, mypy checks the handler's
        parameter against it.
        """
        if isinstance(kind, type):
            kind = _kind_of(kind)
        elif kind not in UPDATE_KINDS:
            raise ValueError(f"unknown update kind; expected one of {', '.join(UPDATE_KINDS)}")
        if handler is None:

            def register(func: Handler[Any]) -> Handler[Any]:
                self._add(kind, func)
                return func

            return register
        self._add(kind, handler)
        return handler

    def _add(self, kind: str, handler: Handler[Any]) -> None:
        if not callable(handler):
            raise TypeError("handler must be callable")
        self._handlers.setdefault(kind, []).append(handler)

    def handlers(self, kind: UpdateKind) -> tuple[Handler[Any], ...]:
        """The handlers registered for ``kind``, in call order."""
        return tuple(self._handlers.get(kind, ()))

    def needs_run(self, update: Update) -> bool:
        """True when a handler is registered for the update's kind, or it is a message and
        the echo reply is on: work a crash must not lose.

        The event log is not such work: it is diagnostics, written at dispatch, and a
        line lost to a crash is not re-run for (``docs/webhook-guarantees.md``).
        """
        if update.kind in self._handlers:
            return True
        return self._echo_client is not None and isinstance(update, MessageUpdate)

    def statistics(self) -> FacadeStatistics:
        """An immutable snapshot of the counters."""
        return FacadeStatistics(
            dispatched=self._dispatched,
            handler_errors=MappingProxyType(dict(self._handler_errors)),
            echo_sent=self._echo_sent,
            echo_errors=self._echo_errors,
        )

    async def dispatch(self, update: Update) -> None:
        """Log (when enabled), run the kind's handlers, then echo (when enabled)."""
        self._dispatched += 1
        kind = update.kind
        if self._log_events:
            self._logger.info("webhook update kind=%s detail=%s", kind, safe_detail(update))
        for handler in self._handlers.get(kind, ()):
            try:
                result = handler(update)
                if inspect.isawaitable(result):
                    await result
            except Exception as exc:  # noqa: BLE001 - isolated, counted and logged by class
                self._count_error(kind, exc)
        if self._echo_client is not None and isinstance(update, MessageUpdate):
            await self._echo(update)

    def _count_error(self, kind: str, exc: Exception) -> None:
        name = type(exc).__name__[:MAX_ERROR_CLASS_NAME]
        errors = self._handler_errors
        if name not in errors and len(errors) >= MAX_ERROR_CLASSES:
            del errors[next(iter(errors))]  # drop the oldest class
        errors[name] = errors.get(name, 0) + 1
        # The class name only: a message or traceback could carry payload data.
        self._logger.warning("webhook handler failed kind=%s error=%s", kind, name)

    async def _echo(self, update: MessageUpdate) -> None:
        """Reply to an inbound 1:1 text with ``Echo: <text>``.

        Group messages are not echoed, and neither are echoes of the business's
        own messages (``is_echo``): answering those would message the business.
        """
        text = update.text
        sender = update.from_
        if text is None or sender is None or update.group_id is not None or update.is_echo:
            return
        assert self._echo_client is not None
        reply = (ECHO_PREFIX + text)[:MAX_TEXT_LENGTH]
        try:
            await self._echo_client.send_text(
                to=sender, text=reply, reply_to_message_id=update.message_id
            )
        except Exception as exc:  # noqa: BLE001 - a failed demo reply never fails the webhook
            self._echo_errors += 1
            self._logger.warning("webhook echo reply failed error=%s", type(exc).__name__[:80])
        else:
            self._echo_sent += 1
