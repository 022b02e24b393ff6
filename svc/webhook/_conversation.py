"""Conversations inside a handler: what a wait listens for, its timeout, and bursts.

A handler's wait (``ctx.wait_for_reply()``, ...) takes the first later update of
its own queue (the same user, group or number) that a ``Listener`` matches; the
runtimes (``svc.http``) look for it, this module only says what matches. A
``Coalesce`` is a registration's quiet window: the user's messages arriving
within it go to one call (``ctx.updates``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Final

from ._updates import MessageUpdate, StatusUpdate, Update
from ._values import ButtonContent, InteractiveContent

__all__ = [
    "DEFAULT_LISTEN_TIMEOUT",
    "MAX_COALESCE_COUNT",
    "MAX_COALESCE_WAIT",
    "MAX_LISTEN_TIMEOUT",
    "Coalesce",
    "Listener",
    "ListenerTimeout",
    "click_listener",
    "flow_listener",
    "listen_timeout",
    "reply_listener",
    "status_listener",
    "timed_out_wait",
]

DEFAULT_LISTEN_TIMEOUT: Final = 300.0
"""Seconds a wait lasts when no ``timeout`` is given."""
MAX_LISTEN_TIMEOUT: Final = 86_400.0
"""The longest wait: one day."""
MAX_COALESCE_WAIT: Final = 300.0
"""The longest a burst may be gathered (``coalesce`` and ``max_wait``), in seconds."""
MAX_COALESCE_COUNT: Final = 100
"""The most updates one burst holds."""
_DEFAULT_COALESCE_COUNT: Final = 20
_CLICKS: Final = frozenset({"button_reply", "list_reply"})


class ListenerTimeout(Exception):
    """A wait ended without a matching update. Uncaught, it ends the run as a success (logged
    ``listener timed out``): a user who never answers does not make a dead letter."""

    def __init__(self, listener: str, timeout: float) -> None:
        super().__init__(f"no {listener} within {timeout:g} s")
        self.listener = listener
        self.timeout = timeout


def timed_out_wait(exc: BaseException) -> ListenerTimeout | None:
    """The wait's timeout that ended a handler: ``exc`` itself, or the first of an exception
    group holding nothing else (a handler's own nursery wraps what its task raised); None
    for any other failure. Both the facade and the runtime read a run's end through it."""
    found = exc
    while isinstance(found, BaseExceptionGroup):
        if found.split(ListenerTimeout)[1] is not None:
            return None
        found = found.exceptions[0]
    return found if isinstance(found, ListenerTimeout) else None


def _seconds(value: object, name: str, *, high: float) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not 0 < value <= high
    ):
        raise ValueError(f"{name} must be a number of seconds above 0, at most {high:g}")
    return float(value)


def listen_timeout(value: float | None) -> float:
    """A wait's timeout: ``DEFAULT_LISTEN_TIMEOUT`` for None, else checked (0 < t <= 1 day)."""
    if value is None:
        return DEFAULT_LISTEN_TIMEOUT
    return _seconds(value, "timeout", high=MAX_LISTEN_TIMEOUT)


@dataclass(frozen=True, slots=True)
class Listener:
    """What one wait takes: ``name`` (for its log line and error) and a predicate."""

    name: str
    matches: Callable[[Update], bool]


def _inbound(update: Update) -> MessageUpdate | None:
    return update if isinstance(update, MessageUpdate) and not update.is_echo else None


def reply_listener() -> Listener:
    """The user's next message of any type (the business's own echoes never match)."""
    return Listener("reply", lambda update: _inbound(update) is not None)


def click_listener(ids: Collection[str] | None = None) -> Listener:
    """The user's next button or list choice (an interactive ``button_reply``/``list_reply``,
    or a template's quick-reply ``button``), of one of ``ids`` when given (the reply id, or
    the quick reply's payload)."""
    if ids is not None:
        if isinstance(ids, str) or not all(isinstance(value, str) for value in ids):
            raise TypeError("ids must be a collection of strings")
        wanted: frozenset[str] | None = frozenset(ids)
    else:
        wanted = None

    def matches(update: Update) -> bool:
        message = _inbound(update)
        if message is None:
            return False
        content = message.content
        if isinstance(content, InteractiveContent) and content.reply_type in _CLICKS:
            chosen = content.reply_id
        elif isinstance(content, ButtonContent):
            chosen = content.payload
        else:
            return False
        return wanted is None or chosen in wanted

    return Listener("click", matches)


def flow_listener() -> Listener:
    """The user's next Flow completion (an interactive ``nfm_reply``)."""

    def matches(update: Update) -> bool:
        message = _inbound(update)
        content = message.content if message is not None else None
        return isinstance(content, InteractiveContent) and content.reply_type == "nfm_reply"

    return Listener("flow", matches)


def status_listener(message_id: str) -> Listener:
    """The next status (sent, delivered, read, failed) of the message ``message_id``."""
    if not isinstance(message_id, str) or not message_id:
        raise ValueError("message_id must be a message id")
    return Listener(
        "status",
        lambda update: isinstance(update, StatusUpdate) and update.message_id == message_id,
    )


@dataclass(frozen=True, slots=True)
class Coalesce:
    """A quiet window: later updates of the kind join the burst until none arrived for
    ``window`` seconds, ``max_wait`` seconds passed since the first, or ``max_count`` are held.
    """

    window: float
    max_wait: float
    max_count: int

    @classmethod
    def of(
        cls, window: float, max_wait: float | None = None, max_count: int | None = None
    ) -> Coalesce:
        """Checked settings: ``window`` and ``max_wait`` (default: five windows, at most
        ``MAX_COALESCE_WAIT``) in seconds, ``max_wait >= window``; ``max_count`` 2..100
        (default 20)."""
        quiet = _seconds(window, "coalesce", high=MAX_COALESCE_WAIT)
        if max_wait is None:
            longest = min(quiet * 5, MAX_COALESCE_WAIT)
        else:
            longest = _seconds(max_wait, "max_wait", high=MAX_COALESCE_WAIT)
        if longest < quiet:
            raise ValueError("max_wait must be at least coalesce")
        count = _DEFAULT_COALESCE_COUNT if max_count is None else max_count
        if type(count) is not int or not 2 <= count <= MAX_COALESCE_COUNT:
            raise ValueError(f"max_count must be an integer in 2..{MAX_COALESCE_COUNT}")
        return cls(quiet, longest, count)
