"""The one declaration of a send type: a frozen ``Message`` that renders its own Graph payload.

A send type is a ``Message`` subclass whose fields are its keywords; ``to_payload()``
validates them (``GraphRequestValidationError`` on the first rejected one, no I/O)
and returns the exact wire JSON. The public ``build_*`` functions are derived from
the declaration by ``builder``, the ``send_*`` helpers by ``_send.sends`` and the
HTTP bodies by ``svc.http``; none restates the keywords.
"""

from __future__ import annotations

import abc
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, ParamSpec

from ._callback_data import with_callback_data
from ._envelope import Payload

__all__ = ["Message", "builder"]

P = ParamSpec("P")


@dataclass(frozen=True, slots=True, kw_only=True)
class Message(abc.ABC):
    """A message to send: its fields are checked and rendered by ``to_payload()``.

    ``biz_opaque_callback_data`` (<= 512) is echoed by the platform on the
    message's status updates; ``edge`` is the phone-number edge it is POSTed to.
    """

    edge: ClassVar[str] = "messages"

    biz_opaque_callback_data: str | None = None

    @abc.abstractmethod
    def render(self) -> Payload:
        """The validated wire payload, without ``biz_opaque_callback_data``."""

    def to_payload(self) -> Payload:
        """The validated wire payload, with ``biz_opaque_callback_data`` when given."""
        return with_callback_data(self.render(), self.biz_opaque_callback_data)


def builder(message: Callable[P, Message]) -> Callable[P, Payload]:
    """The ``build_*`` function of a declaration: its keywords in, its ``to_payload()`` out."""

    def build(*args: P.args, **kwargs: P.kwargs) -> Payload:
        return message(*args, **kwargs).to_payload()

    build.__doc__ = message.__doc__
    build.__signature__ = inspect.signature(message).replace(  # type: ignore[attr-defined]
        return_annotation="Payload"
    )
    return build
