"""Sends of ``PhoneNumberClient``: ``send(message)`` for any ``Message``, and its typed helpers.

``MessageSender`` is a mixin: the scoped client supplies ``_post_phone_edge``,
which POSTs a JSON payload to ``/{phone_number_id}/{edge}`` and returns the
parsed answer. Every send renders its ``Message`` first (bad input is refused
before the transport is touched) and returns a ``SendResult``. Each typed
``send_*`` helper is derived from its declaration by ``sends``, so it takes
exactly the declaration's keywords.
"""

from __future__ import annotations

import abc
import inspect
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Concatenate, Literal, ParamSpec

from ._builders import build_read_receipt, check_message_payload, is_read_receipt_payload
from ._contacts import ContactsMessage
from ._content_messages import (
    AudioMessage,
    DocumentMessage,
    ImageMessage,
    LocationMessage,
    MediaMessage,
    ReactionMessage,
    RemoveReactionMessage,
    StickerMessage,
    TextMessage,
    VideoMessage,
)
from ._errors import GraphSerializationError, TemplateCheckError
from ._group_messages import (
    GroupMediaMessage,
    GroupPinMessage,
    GroupTemplateMessage,
    GroupTextMessage,
)
from ._message import Message
from ._results import Template
from ._template_check import check_template_send
from ._template_messages import MarketingTemplateMessage, TemplateMessage

__all__ = [
    "MessageSender",
    "ReadReceiptResult",
    "SendResult",
    "read_receipt_result_from_answer",
    "send_result_from_answer",
    "sends",
]

P = ParamSpec("P")


@dataclass(frozen=True, slots=True, kw_only=True)
class SendResult:
    """The answer to a send: the platform message id, the resolved contacts and the raw JSON.

    ``raw`` is the upstream answer exactly as parsed, for callers (the HTTP
    layer) that pass it through unchanged. ``message_status`` is set when the
    platform reports one (marketing sends answer ``accepted``, ``held_for_quality_assessment``...).
    """

    message_id: str
    contacts: tuple[Mapping[str, Any], ...]
    message_status: str | None
    raw: Mapping[str, Any]


def send_result_from_answer(answer: object) -> SendResult:
    """Read a send answer; one without ``messages[0].id`` raises ``GraphSerializationError``."""
    if not isinstance(answer, Mapping):
        raise GraphSerializationError("send answer is not a JSON object")
    messages = answer.get("messages")
    first = messages[0] if isinstance(messages, list) and messages else None
    message_id = first.get("id") if isinstance(first, Mapping) else None
    if not isinstance(message_id, str) or not message_id:
        raise GraphSerializationError("send answer has no messages[0].id")
    assert isinstance(first, Mapping)
    status = first.get("message_status")
    contacts = answer.get("contacts", [])
    if not isinstance(contacts, list) or not all(isinstance(c, Mapping) for c in contacts):
        raise GraphSerializationError("send answer has malformed contacts")
    return SendResult(
        message_id=message_id,
        contacts=tuple(contacts),
        message_status=status if isinstance(status, str) else None,
        raw=answer,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class ReadReceiptResult:
    """The answer to a read receipt: ``{"success": true}``, kept verbatim in ``raw``.

    A read receipt creates no message, so it has no message id and is not a ``SendResult``.
    """

    success: bool
    raw: Mapping[str, Any]


def read_receipt_result_from_answer(answer: object) -> ReadReceiptResult:
    """Read a read-receipt answer; without a boolean ``success`` it is a serialization error."""
    if not isinstance(answer, Mapping):
        raise GraphSerializationError("read receipt answer is not a JSON object")
    success = answer.get("success")
    if not isinstance(success, bool):
        raise GraphSerializationError("read receipt answer has no boolean success")
    return ReadReceiptResult(success=success, raw=answer)


def _check_definition_name(definition: Template | Mapping[str, Any], name: str) -> None:
    raw = definition.raw if isinstance(definition, Template) else definition
    defined = raw.get("name") if isinstance(raw, Mapping) else None
    if isinstance(defined, str) and defined != name:
        raise TemplateCheckError(f"name: the definition is {defined}, not {name}", field="name")


def sends(
    message: Callable[P, Message],
) -> Callable[Concatenate[MessageSender, P], Coroutine[Any, Any, SendResult]]:
    """The typed ``send_*`` helper of a declaration: its keywords in, ``send(message)`` out."""

    async def send(self: MessageSender, /, *args: P.args, **kwargs: P.kwargs) -> SendResult:
        return await self.send(message(*args, **kwargs))

    signature = inspect.signature(message)
    self_parameter = inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)
    send.__doc__ = message.__doc__
    send.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[self_parameter, *signature.parameters.values()],
        return_annotation="SendResult",
    )
    return send


class MessageSender(abc.ABC):
    """Message sends for one business phone number (mixed into ``PhoneNumberClient``)."""

    @abc.abstractmethod
    async def _post_phone_edge(self, edge: str, payload: Mapping[str, Any]) -> Any:
        """POST ``payload`` as JSON to ``/{phone_number_id}/{edge}``; return the parsed answer."""

    async def send(self, message: Message) -> SendResult:
        """Send any ``Message`` to its edge (``/messages``; marketing: ``/marketing_messages``)."""
        payload = message.to_payload()
        return send_result_from_answer(await self._post_phone_edge(message.edge, payload))

    async def send_message(self, payload: Mapping[str, Any]) -> SendResult | ReadReceiptResult:
        """Send a prebuilt payload (checked by ``check_message_payload``) to ``/messages``.

        A message payload answers a ``SendResult``; a read receipt (``build_read_receipt``)
        answers a ``ReadReceiptResult``. Both keep the upstream JSON in ``raw``.
        """
        checked = check_message_payload(payload)
        answer = await self._post_phone_edge("messages", checked)
        if is_read_receipt_payload(checked):
            return read_receipt_result_from_answer(answer)
        return send_result_from_answer(answer)

    async def mark_as_read(
        self, *, message_id: str, typing_indicator: bool = False
    ) -> ReadReceiptResult:
        """Mark ``message_id`` as read; ``typing_indicator=True`` also shows the user "typing"."""
        payload = build_read_receipt(message_id=message_id, typing_indicator=typing_indicator)
        return read_receipt_result_from_answer(await self._post_phone_edge("messages", payload))

    async def send_template(
        self,
        *,
        to: str,
        name: str,
        language_code: str,
        components: Sequence[Mapping[str, Any]] | None = None,
        reply_to_message_id: str | None = None,
        definition: Template | Mapping[str, Any] | None = None,
        biz_opaque_callback_data: str | None = None,
        language_policy: Literal["deterministic"] | None = None,
    ) -> SendResult:
        """Send an approved template (``TemplateMessage``).

        With ``definition`` (a ``Template`` the caller already fetched), ``name``,
        ``language_code`` and ``components`` are first checked against it by
        ``check_template_send``; no extra request is ever made. ``language_policy``
        is sent as ``language.policy`` when given.
        """
        if definition is not None:
            _check_definition_name(definition, name)
            check_template_send(definition, language_code, components, to=to)
        message = TemplateMessage(
            to=to,
            name=name,
            language_code=language_code,
            components=components,
            reply_to_message_id=reply_to_message_id,
            biz_opaque_callback_data=biz_opaque_callback_data,
            language_policy=language_policy,
        )
        return await self.send(message)

    send_text = sends(TextMessage)
    send_media = sends(MediaMessage)
    send_image = sends(ImageMessage)
    send_video = sends(VideoMessage)
    send_audio = sends(AudioMessage)
    send_document = sends(DocumentMessage)
    send_sticker = sends(StickerMessage)
    send_location = sends(LocationMessage)
    send_reaction = sends(ReactionMessage)
    send_remove_reaction = sends(RemoveReactionMessage)
    send_contacts = sends(ContactsMessage)
    send_marketing_template = sends(MarketingTemplateMessage)
    send_group_text = sends(GroupTextMessage)
    send_group_media = sends(GroupMediaMessage)
    send_group_template = sends(GroupTemplateMessage)
    send_group_pin = sends(GroupPinMessage)
