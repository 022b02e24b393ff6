"""Send helpers shared by ``PhoneNumberClient``: every message type of the spec, validated first.

``MessageSender`` is a mixin: the scoped client supplies ``_post_phone_edge``,
which POSTs a JSON payload to ``/{phone_number_id}/{edge}`` and returns the
parsed answer. Every helper builds its payload with ``_builders`` (which
rejects bad input before the transport is touched) and returns a ``SendResult``.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from . import _builders as b
from ._callback_data import with_callback_data
from ._errors import GraphSerializationError, TemplateCheckError
from ._results import Template
from ._template_check import check_template_send

__all__ = [
    "MessageSender",
    "ReadReceiptResult",
    "SendResult",
    "read_receipt_result_from_answer",
    "send_result_from_answer",
]


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


class MessageSender(abc.ABC):
    """Message sends for one business phone number (mixed into ``PhoneNumberClient``)."""

    @abc.abstractmethod
    async def _post_phone_edge(self, edge: str, payload: Mapping[str, Any]) -> Any:
        """POST ``payload`` as JSON to ``/{phone_number_id}/{edge}``; return the parsed answer."""

    async def _send(
        self,
        payload: Mapping[str, Any],
        *,
        edge: str = "messages",
        biz_opaque_callback_data: str | None = None,
    ) -> SendResult:
        """POST a built payload, adding ``biz_opaque_callback_data`` when given."""
        sent = with_callback_data(payload, biz_opaque_callback_data)
        return send_result_from_answer(await self._post_phone_edge(edge, sent))

    async def send_message(self, payload: Mapping[str, Any]) -> SendResult | ReadReceiptResult:
        """Send a prebuilt payload (checked by ``check_message_payload``) to ``/messages``.

        A message payload answers a ``SendResult``; a read receipt (``build_read_receipt``)
        answers a ``ReadReceiptResult``. Both keep the upstream JSON in ``raw``.
        """
        checked = b.check_message_payload(payload)
        if b.is_read_receipt_payload(checked):
            answer = await self._post_phone_edge("messages", checked)
            return read_receipt_result_from_answer(answer)
        return await self._send(checked)

    async def mark_as_read(
        self, *, message_id: str, typing_indicator: bool = False
    ) -> ReadReceiptResult:
        """Mark ``message_id`` as read; ``typing_indicator=True`` also shows the user "typing"."""
        payload = b.build_read_receipt(message_id=message_id, typing_indicator=typing_indicator)
        return read_receipt_result_from_answer(await self._post_phone_edge("messages", payload))

    # --- text, media, location, reactions, contacts

    async def send_text(
        self,
        *,
        to: str,
        text: str,
        preview_url: bool | None = None,
        reply_to_message_id: str | None = None,
        biz_opaque_callback_data: str | None = None,
    ) -> SendResult:
        """Send a text message."""
        return await self._send(
            b.build_text_message(
                to=to, text=text, preview_url=preview_url, reply_to_message_id=reply_to_message_id
            ),
            biz_opaque_callback_data=biz_opaque_callback_data,
        )

    async def send_media(
        self,
        kind: b.MediaKind,
        *,
        to: str,
        media_id: str | None = None,
        link: str | None = None,
        caption: str | None = None,
        filename: str | None = None,
        voice: bool | None = None,
        reply_to_message_id: str | None = None,
        biz_opaque_callback_data: str | None = None,
    ) -> SendResult:
        """Send an image, video, audio, document or sticker (see ``build_media_message``)."""
        return await self._send(
            b.build_media_message(
                kind,
                to=to,
                media_id=media_id,
                link=link,
                caption=caption,
                filename=filename,
                voice=voice,
                reply_to_message_id=reply_to_message_id,
            ),
            biz_opaque_callback_data=biz_opaque_callback_data,
        )

    async def send_image(
        self,
        *,
        to: str,
        media_id: str | None = None,
        link: str | None = None,
        caption: str | None = None,
        reply_to_message_id: str | None = None,
        biz_opaque_callback_data: str | None = None,
    ) -> SendResult:
        """Send an image by media id or link."""
        return await self._send(
            b.build_image_message(
                to=to,
                media_id=media_id,
                link=link,
                caption=caption,
                reply_to_message_id=reply_to_message_id,
            ),
            biz_opaque_callback_data=biz_opaque_callback_data,
        )

    async def send_video(
        self,
        *,
        to: str,
        media_id: str | None = None,
        link: str | None = None,
        caption: str | None = None,
        reply_to_message_id: str | None = None,
        biz_opaque_callback_data: str | None = None,
    ) -> SendResult:
        """Send a video by media id or link."""
        return await self._send(
            b.build_video_message(
                to=to,
                media_id=media_id,
                link=link,
                caption=caption,
                reply_to_message_id=reply_to_message_id,
            ),
            biz_opaque_callback_data=biz_opaque_callback_data,
        )

    async def send_audio(
        self,
        *,
        to: str,
        media_id: str | None = None,
        link: str | None = None,
        voice: bool | None = None,
        reply_to_message_id: str | None = None,
        biz_opaque_callback_data: str | None = None,
    ) -> SendResult:
        """Send audio by media id or link; ``voice=True`` marks a voice note."""
        return await self._send(
            b.build_audio_message(
                to=to,
                media_id=media_id,
                link=link,
                voice=voice,
                reply_to_message_id=reply_to_message_id,
            ),
            biz_opaque_callback_data=biz_opaque_callback_data,
        )

    async def send_document(
        self,
        *,
        to: str,
        media_id: str | None = None,
        link: str | None = None,
        caption: str | None = None,
        filename: str | None = None,
        reply_to_message_id: str | None = None,
        biz_opaque_callback_data: str | None = None,
    ) -> SendResult:
        """Send a document by media id or link."""
        return await self._send(
            b.build_document_message(
                to=to,
                media_id=media_id,
                link=link,
                caption=caption,
                filename=filename,
                reply_to_message_id=reply_to_message_id,
            ),
            biz_opaque_callback_data=biz_opaque_callback_data,
        )

    async def send_sticker(
        self,
        *,
        to: str,
        media_id: str | None = None,
        link: str | None = None,
        reply_to_message_id: str | None = None,
        biz_opaque_callback_data: str | None = None,
    ) -> SendResult:
        """Send a sticker by media id or link."""
        return await self._send(
            b.build_sticker_message(
                to=to, media_id=media_id, link=link, reply_to_message_id=reply_to_message_id
            ),
            biz_opaque_callback_data=biz_opaque_callback_data,
        )

    async def send_location(
        self,
        *,
        to: str,
        latitude: float,
        longitude: float,
        name: str | None = None,
        address: str | None = None,
        reply_to_message_id: str | None = None,
        biz_opaque_callback_data: str | None = None,
    ) -> SendResult:
        """Send a location pin."""
        return await self._send(
            b.build_location_message(
                to=to,
                latitude=latitude,
                longitude=longitude,
                name=name,
                address=address,
                reply_to_message_id=reply_to_message_id,
            ),
            biz_opaque_callback_data=biz_opaque_callback_data,
        )

    async def send_reaction(
        self, *, to: str, message_id: str, emoji: str, biz_opaque_callback_data: str | None = None
    ) -> SendResult:
        """React to ``message_id`` with ``emoji``."""
        return await self._send(
            b.build_reaction_message(to=to, message_id=message_id, emoji=emoji),
            biz_opaque_callback_data=biz_opaque_callback_data,
        )

    async def send_remove_reaction(
        self, *, to: str, message_id: str, biz_opaque_callback_data: str | None = None
    ) -> SendResult:
        """Remove an earlier reaction to ``message_id``."""
        return await self._send(
            b.build_remove_reaction_message(to=to, message_id=message_id),
            biz_opaque_callback_data=biz_opaque_callback_data,
        )

    async def send_contacts(
        self,
        *,
        to: str,
        contacts: Sequence[Mapping[str, Any]],
        reply_to_message_id: str | None = None,
        biz_opaque_callback_data: str | None = None,
    ) -> SendResult:
        """Send contact cards (snake_case inputs, see ``build_contacts_message``)."""
        return await self._send(
            b.build_contacts_message(
                to=to, contacts=contacts, reply_to_message_id=reply_to_message_id
            ),
            biz_opaque_callback_data=biz_opaque_callback_data,
        )

    # --- templates

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
        """Send an approved template.

        With ``definition`` (a ``Template`` the caller already fetched), ``name``,
        ``language_code`` and ``components`` are first checked against it by
        ``check_template_send``; no extra request is ever made. ``language_policy``
        is sent as ``language.policy`` when given.
        """
        if definition is not None:
            _check_definition_name(definition, name)
            check_template_send(definition, language_code, components, to=to)
        return await self._send(
            b.build_template_message(
                to=to,
                name=name,
                language_code=language_code,
                components=components,
                reply_to_message_id=reply_to_message_id,
                language_policy=language_policy,
            ),
            biz_opaque_callback_data=biz_opaque_callback_data,
        )

    async def send_marketing_template(
        self,
        *,
        name: str,
        language_code: str,
        to: str | None = None,
        recipient: str | None = None,
        components: Sequence[Mapping[str, Any]] | None = None,
        product_policy: Literal["CLOUD_API_FALLBACK", "STRICT"] | None = None,
        message_activity_sharing: bool | None = None,
        biz_opaque_callback_data: str | None = None,
    ) -> SendResult:
        """Send a marketing template through ``/marketing_messages``."""
        payload = b.build_marketing_template_message(
            name=name,
            language_code=language_code,
            to=to,
            recipient=recipient,
            components=components,
            product_policy=product_policy,
            message_activity_sharing=message_activity_sharing,
        )
        return await self._send(
            payload,
            edge="marketing_messages",
            biz_opaque_callback_data=biz_opaque_callback_data,
        )

    # --- groups

    async def send_group_text(
        self,
        *,
        to: str,
        text: str,
        preview_url: bool | None = None,
        reply_to_message_id: str | None = None,
        biz_opaque_callback_data: str | None = None,
    ) -> SendResult:
        """Send text to a group (``to`` is the group id)."""
        return await self._send(
            b.build_group_text_message(
                to=to, text=text, preview_url=preview_url, reply_to_message_id=reply_to_message_id
            ),
            biz_opaque_callback_data=biz_opaque_callback_data,
        )

    async def send_group_media(
        self,
        kind: b.MediaKind,
        *,
        to: str,
        media_id: str | None = None,
        link: str | None = None,
        caption: str | None = None,
        filename: str | None = None,
        voice: bool | None = None,
        reply_to_message_id: str | None = None,
        biz_opaque_callback_data: str | None = None,
    ) -> SendResult:
        """Send media to a group."""
        return await self._send(
            b.build_group_media_message(
                kind,
                to=to,
                media_id=media_id,
                link=link,
                caption=caption,
                filename=filename,
                voice=voice,
                reply_to_message_id=reply_to_message_id,
            ),
            biz_opaque_callback_data=biz_opaque_callback_data,
        )

    async def send_group_template(
        self,
        *,
        to: str,
        name: str,
        language_code: str,
        template_category: Literal["UTILITY", "MARKETING"],
        components: Sequence[Mapping[str, Any]] | None = None,
        biz_opaque_callback_data: str | None = None,
    ) -> SendResult:
        """Send a UTILITY or MARKETING template to a group."""
        return await self._send(
            b.build_group_template_message(
                to=to,
                name=name,
                language_code=language_code,
                template_category=template_category,
                components=components,
            ),
            biz_opaque_callback_data=biz_opaque_callback_data,
        )

    async def send_group_pin(
        self,
        *,
        to: str,
        pin_type: Literal["pin", "unpin"],
        message_id: str,
        expiration_days: int | None = None,
        biz_opaque_callback_data: str | None = None,
    ) -> SendResult:
        """Pin (for 1..30 days) or unpin a message in a group."""
        return await self._send(
            b.build_group_pin_message(
                to=to, pin_type=pin_type, message_id=message_id, expiration_days=expiration_days
            ),
            biz_opaque_callback_data=biz_opaque_callback_data,
        )
