"""Request bodies of the send routes: pydantic models that validate them and feed the OpenAPI.

HTTP bodies keep the spec's camelCase names; ``to_payload`` maps each model
to the ``svc.graph`` builder that owns the field rules (lengths, phone and id
formats, media kinds...), so a rule lives once, in the graph layer. The
models check shape and JSON types strictly (no coercion, no unknown fields).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, Final, Literal, TypeVar, get_args

from pydantic import BaseModel, ConfigDict, Field, RootModel, TypeAdapter, ValidationError

from svc.graph import (
    build_call_permission_request_message,
    build_contacts_message,
    build_group_media_message,
    build_group_pin_message,
    build_group_text_message,
    build_interactive_buttons_message,
    build_interactive_catalog_message,
    build_interactive_cta_url_message,
    build_interactive_list_message,
    build_interactive_location_request_message,
    build_interactive_product_message,
    build_interactive_products_message,
    build_location_message,
    build_media_message,
    build_reaction_message,
    build_read_receipt,
    build_remove_reaction_message,
    build_template_message,
    build_text_message,
    is_read_receipt_payload,
    with_callback_data,
)

from ._bodies_rich import InteractiveCarouselBody as InteractiveCarouselBody
from ._bodies_rich import InteractiveFlowBody as InteractiveFlowBody
from ._bodies_rich import MediaHeaderIn as MediaHeaderIn
from ._bodies_rich import Recipient, carousel_payload, flow_payload, media_header
from ._bodies_rich import SendModel as _SendBody
from ._bodies_rich import StrictModel as _Body
from ._errors import HttpError, malformed_body

__all__ = [
    "GroupPinBody",
    "MessageBody",
    "SendAnswer",
    "TextSendBody",
    "chosen_number",
    "is_read_receipt",
    "parse_body",
    "parse_message_body",
    "parse_text_body",
]

Payload = dict[str, Any]
M = TypeVar("M", bound=BaseModel)


class TextSendBody(_SendBody):
    """POST ``{prefix}/messages/text``: newline and tab are allowed in ``text``."""

    to: Recipient
    text: str
    previewUrl: bool | None = None


class _GraphNativeTextObject(_Body):
    body: str
    preview_url: bool | None = None


class GraphNativeTextBody(_SendBody):
    """The platform's own text payload, accepted as is on POST ``{prefix}/messages``."""

    messaging_product: Literal["whatsapp"]
    to: Recipient
    type: Literal["text"]
    text: _GraphNativeTextObject
    recipient_type: Literal["individual"] | None = None
    biz_opaque_callback_data: str | None = None


class TextComposerBody(_SendBody):
    """A text message; ``recipientType: group`` (groups enabled) sends to a group id."""

    type: Literal["text"]
    to: Recipient
    text: str
    previewUrl: bool | None = None
    recipientType: Literal["individual", "group"] | None = None
    replyToMessageId: str | None = None


class MediaBody(_SendBody):
    """Image, video, audio, document or sticker by ``mediaId`` or ``link`` (exactly one)."""

    type: Literal["image", "video", "audio", "document", "sticker"]
    to: Recipient
    mediaId: str | None = None
    link: str | None = None
    caption: str | None = None
    filename: str | None = None
    voice: bool | None = None
    replyToMessageId: str | None = None
    recipientType: Literal["individual", "group"] | None = None


class LocationBody(_SendBody):
    type: Literal["location"]
    to: Recipient
    latitude: float
    longitude: float
    name: str | None = None
    address: str | None = None
    replyToMessageId: str | None = None


class ReactionBody(_SendBody):
    type: Literal["reaction"]
    to: Recipient
    messageId: str
    emoji: str


class RemoveReactionBody(_SendBody):
    type: Literal["removeReaction"]
    to: Recipient
    messageId: str


class ContactName(_Body):
    formattedName: str
    firstName: str | None = None
    lastName: str | None = None
    middleName: str | None = None
    suffix: str | None = None
    prefix: str | None = None


class ContactPhoneIn(_Body):
    phone: str
    type: str | None = None
    waId: str | None = None


class ContactEmailIn(_Body):
    email: str
    type: str | None = None


class ContactUrlIn(_Body):
    url: str
    type: str | None = None


class ContactAddressIn(_Body):
    street: str | None = None
    city: str | None = None
    state: str | None = None
    zip: str | None = None
    country: str | None = None
    countryCode: str | None = None
    type: str | None = None


class ContactOrgIn(_Body):
    company: str | None = None
    department: str | None = None
    title: str | None = None


class ContactIn(_Body):
    name: ContactName
    phones: list[ContactPhoneIn]
    emails: list[ContactEmailIn] | None = None
    urls: list[ContactUrlIn] | None = None
    addresses: list[ContactAddressIn] | None = None
    org: ContactOrgIn | None = None
    birthday: str | None = None


class ContactsBody(_SendBody):
    type: Literal["contacts"]
    to: Recipient
    contacts: list[ContactIn]
    replyToMessageId: str | None = None


class ReplyButton(_Body):
    id: str
    title: str


class InteractiveButtonsBody(_SendBody):
    type: Literal["interactiveButtons"]
    to: Recipient
    bodyText: str
    buttons: list[ReplyButton]
    headerText: str | None = None
    header: MediaHeaderIn | None = None
    footerText: str | None = None
    replyToMessageId: str | None = None


class ListRow(_Body):
    id: str
    title: str
    description: str | None = None


class ListSection(_Body):
    title: str
    rows: list[ListRow]


class InteractiveListBody(_SendBody):
    type: Literal["interactiveList"]
    to: Recipient
    bodyText: str
    buttonText: str
    sections: list[ListSection]
    headerText: str | None = None
    footerText: str | None = None
    replyToMessageId: str | None = None


class InteractiveCtaUrlBody(_SendBody):
    type: Literal["interactiveCtaUrl"]
    to: Recipient
    bodyText: str
    displayText: str
    url: str
    headerText: str | None = None
    header: MediaHeaderIn | None = None
    footerText: str | None = None
    replyToMessageId: str | None = None


class InteractiveProductBody(_SendBody):
    type: Literal["interactiveProduct"]
    to: Recipient
    catalogId: str
    productRetailerId: str
    bodyText: str | None = None
    footerText: str | None = None
    replyToMessageId: str | None = None


class ProductSection(_Body):
    title: str
    productRetailerIds: list[str]


class InteractiveProductsBody(_SendBody):
    type: Literal["interactiveProducts"]
    to: Recipient
    catalogId: str
    headerText: str
    bodyText: str
    sections: list[ProductSection]
    footerText: str | None = None
    replyToMessageId: str | None = None


class InteractiveCatalogBody(_SendBody):
    type: Literal["interactiveCatalog"]
    to: Recipient
    bodyText: str
    thumbnailProductRetailerId: str | None = None
    footerText: str | None = None
    replyToMessageId: str | None = None


class InteractiveLocationRequestBody(_SendBody):
    type: Literal["interactiveLocationRequest"]
    to: Recipient
    bodyText: str
    replyToMessageId: str | None = None


class CallPermissionRequestBody(_SendBody):
    type: Literal["callPermissionRequest"]
    to: Recipient
    bodyText: str
    footerText: str | None = None
    replyToMessageId: str | None = None


class TemplateBody(_SendBody):
    """Components are in the platform's structure and checked by the graph builder."""

    type: Literal["template"]
    to: Recipient
    name: str
    languageCode: str
    components: list[dict[str, Any]] | None = None
    replyToMessageId: str | None = None


class GroupPinBody(_SendBody):
    """Pin or unpin a message in a group (groups enabled); ``expirationDays`` 1..30 to pin."""

    type: Literal["pin"]
    recipientType: Literal["group"]
    to: str = Field(description="The group id.")
    pinType: Literal["pin", "unpin"]
    messageId: str
    expirationDays: int | None = None


class ReadBody(_SendBody):
    """Mark an inbound message read (optionally showing a typing indicator); never projected."""

    type: Literal["read"]
    messageId: str
    typingIndicator: bool | None = None


ComposerBody = Annotated[
    TextComposerBody
    | MediaBody
    | LocationBody
    | ReactionBody
    | RemoveReactionBody
    | ContactsBody
    | InteractiveButtonsBody
    | InteractiveListBody
    | InteractiveCtaUrlBody
    | InteractiveFlowBody
    | InteractiveCarouselBody
    | InteractiveProductBody
    | InteractiveProductsBody
    | InteractiveCatalogBody
    | InteractiveLocationRequestBody
    | CallPermissionRequestBody
    | TemplateBody
    | GroupPinBody
    | ReadBody,
    Field(discriminator="type"),
]


class MessageBody(RootModel[GraphNativeTextBody | ComposerBody]):
    """Every body POST ``{prefix}/messages`` accepts: Graph-native text or a composer body."""


class SendAnswer(BaseModel):
    """The upstream Graph answer, passed through unchanged (documented shape, not enforced)."""

    model_config = ConfigDict(extra="allow")

    messaging_product: str | None = None
    contacts: list[dict[str, Any]] | None = None
    messages: list[dict[str, Any]] | None = None


_COMPOSER: TypeAdapter[Any] = TypeAdapter(ComposerBody)
_NATIVE: TypeAdapter[GraphNativeTextBody] = TypeAdapter(GraphNativeTextBody)


def _composer_types() -> tuple[str, ...]:
    members = get_args(get_args(ComposerBody)[0])
    return tuple(t for m in members for t in get_args(m.model_fields["type"].annotation))


COMPOSER_TYPES: Final = _composer_types()
"""Every ``type`` a composer body may have, in the union's order (named by a refusal)."""


def _malformed(error: ValidationError) -> HttpError:
    """400 ``malformed_body`` naming the first bad field (never its value)."""
    first = error.errors(include_url=False, include_input=False, include_context=False)[0]
    kind = str(first.get("type", "invalid"))
    if kind == "union_tag_invalid":
        accepted = ", ".join(COMPOSER_TYPES)
        return malformed_body(
            f"The request body's 'type' is not a message type (union_tag_invalid); "
            f"accepted: {accepted}."
        )
    location = ".".join(str(part) for part in first.get("loc", ()) if part != "function-after")
    where = f" at '{location}'" if location else ""
    return malformed_body(f"The request body is invalid{where} ({kind}).")


def _require_object(data: object) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise malformed_body("The request body must be a JSON object.")
    return data


def parse_body(model: type[M], data: object) -> M:
    """Validate a JSON body against ``model`` or raise 400 ``malformed_body`` naming the field."""
    try:
        return model.model_validate(_require_object(data))
    except ValidationError as exc:
        raise _malformed(exc) from None


def parse_text_body(data: object) -> TextSendBody:
    """Validate the text-route body (a JSON object) or raise 400 ``malformed_body``."""
    return parse_body(TextSendBody, data)


def parse_message_body(data: object) -> BaseModel:
    """Validate a generic-route body: Graph-native text when it has ``messaging_product``."""
    data = _require_object(data)
    try:
        if "messaging_product" in data:
            return _NATIVE.validate_python(data)
        if not isinstance(data.get("type"), str):
            raise malformed_body("The request body needs a string 'type'.")
        body: BaseModel = _COMPOSER.validate_python(data)
        return body
    except ValidationError as exc:
        raise _malformed(exc) from None


def is_read_receipt(body: BaseModel) -> bool:
    """Whether the body is a read receipt (sent like a message, never projected).

    Judged on the payload the body builds, by the graph layer's one predicate.
    """
    return is_read_receipt_payload(to_payload(body))


def chosen_number(body: BaseModel) -> str | None:
    """The ``phoneNumberId`` a send body names, if any."""
    value = getattr(body, "phoneNumberId", None)
    return value if isinstance(value, str) else None


def is_group_body(body: BaseModel) -> bool:
    """Whether the body addresses a group (allowed only with group routes enabled)."""
    return getattr(body, "recipientType", None) == "group"


def _contact(contact: ContactIn) -> Payload:
    out: Payload = {
        "name": _snake(contact.name.model_dump(exclude_none=True)),
        "phones": [_snake(p.model_dump(exclude_none=True)) for p in contact.phones],
    }
    for key in ("emails", "urls", "addresses"):
        items = getattr(contact, key)
        if items is not None:
            out[key] = [_snake(item.model_dump(exclude_none=True)) for item in items]
    if contact.org is not None:
        out["org"] = contact.org.model_dump(exclude_none=True)
    if contact.birthday is not None:
        out["birthday"] = contact.birthday
    return out


_SNAKE = {
    "formattedName": "formatted_name",
    "firstName": "first_name",
    "lastName": "last_name",
    "middleName": "middle_name",
    "waId": "wa_id",
    "countryCode": "country_code",
}


def _snake(data: Mapping[str, Any]) -> Payload:
    return {_SNAKE.get(key, key): value for key, value in data.items()}


def _media(body: MediaBody) -> Payload:
    fields: dict[str, Any] = {
        "to": body.to,
        "media_id": body.mediaId,
        "link": body.link,
        "caption": body.caption,
        "filename": body.filename,
        "voice": body.voice,
        "reply_to_message_id": body.replyToMessageId,
    }
    if body.recipientType == "group":
        return build_group_media_message(body.type, **fields)
    return build_media_message(body.type, **fields)


def _text(body: TextComposerBody) -> Payload:
    build = build_group_text_message if body.recipientType == "group" else build_text_message
    return build(
        to=body.to,
        text=body.text,
        preview_url=body.previewUrl,
        reply_to_message_id=body.replyToMessageId,
    )


_BUILDERS: dict[type[BaseModel], Callable[[Any], Payload]] = {
    InteractiveFlowBody: flow_payload,
    InteractiveCarouselBody: carousel_payload,
    TextSendBody: lambda b: build_text_message(to=b.to, text=b.text, preview_url=b.previewUrl),
    GraphNativeTextBody: lambda b: with_callback_data(
        build_text_message(to=b.to, text=b.text.body, preview_url=b.text.preview_url),
        b.biz_opaque_callback_data,
    ),
    TextComposerBody: _text,
    MediaBody: _media,
    LocationBody: lambda b: build_location_message(
        to=b.to,
        latitude=b.latitude,
        longitude=b.longitude,
        name=b.name,
        address=b.address,
        reply_to_message_id=b.replyToMessageId,
    ),
    ReactionBody: lambda b: build_reaction_message(to=b.to, message_id=b.messageId, emoji=b.emoji),
    RemoveReactionBody: lambda b: build_remove_reaction_message(to=b.to, message_id=b.messageId),
    ContactsBody: lambda b: build_contacts_message(
        to=b.to,
        contacts=[_contact(c) for c in b.contacts],
        reply_to_message_id=b.replyToMessageId,
    ),
    InteractiveButtonsBody: lambda b: build_interactive_buttons_message(
        to=b.to,
        body_text=b.bodyText,
        buttons=[button.model_dump() for button in b.buttons],
        header_text=b.headerText,
        header=media_header(b.header),
        footer_text=b.footerText,
        reply_to_message_id=b.replyToMessageId,
    ),
    InteractiveListBody: lambda b: build_interactive_list_message(
        to=b.to,
        body_text=b.bodyText,
        button_text=b.buttonText,
        sections=[section.model_dump(exclude_none=True) for section in b.sections],
        header_text=b.headerText,
        footer_text=b.footerText,
        reply_to_message_id=b.replyToMessageId,
    ),
    InteractiveCtaUrlBody: lambda b: build_interactive_cta_url_message(
        to=b.to,
        body_text=b.bodyText,
        display_text=b.displayText,
        url=b.url,
        header_text=b.headerText,
        header=media_header(b.header),
        footer_text=b.footerText,
        reply_to_message_id=b.replyToMessageId,
    ),
    InteractiveProductBody: lambda b: build_interactive_product_message(
        to=b.to,
        catalog_id=b.catalogId,
        product_retailer_id=b.productRetailerId,
        body_text=b.bodyText,
        footer_text=b.footerText,
        reply_to_message_id=b.replyToMessageId,
    ),
    InteractiveProductsBody: lambda b: build_interactive_products_message(
        to=b.to,
        catalog_id=b.catalogId,
        header_text=b.headerText,
        body_text=b.bodyText,
        sections=[
            {"title": s.title, "product_retailer_ids": list(s.productRetailerIds)}
            for s in b.sections
        ],
        footer_text=b.footerText,
        reply_to_message_id=b.replyToMessageId,
    ),
    InteractiveCatalogBody: lambda b: build_interactive_catalog_message(
        to=b.to,
        body_text=b.bodyText,
        thumbnail_product_retailer_id=b.thumbnailProductRetailerId,
        footer_text=b.footerText,
        reply_to_message_id=b.replyToMessageId,
    ),
    InteractiveLocationRequestBody: lambda b: build_interactive_location_request_message(
        to=b.to, body_text=b.bodyText, reply_to_message_id=b.replyToMessageId
    ),
    CallPermissionRequestBody: lambda b: build_call_permission_request_message(
        to=b.to,
        body_text=b.bodyText,
        footer_text=b.footerText,
        reply_to_message_id=b.replyToMessageId,
    ),
    TemplateBody: lambda b: build_template_message(
        to=b.to,
        name=b.name,
        language_code=b.languageCode,
        components=b.components,
        reply_to_message_id=b.replyToMessageId,
    ),
    ReadBody: lambda b: build_read_receipt(
        message_id=b.messageId, typing_indicator=bool(b.typingIndicator)
    ),
    GroupPinBody: lambda b: build_group_pin_message(
        to=b.to, pin_type=b.pinType, message_id=b.messageId, expiration_days=b.expirationDays
    ),
}


def to_payload(body: BaseModel) -> Payload:
    """The platform wire payload of a validated body, built by the graph layer's builders.

    A builder's ``GraphRequestValidationError`` propagates; the caller turns
    it into 400 ``malformed_body``. ``bizOpaqueCallbackData`` is checked and
    added at the payload's top level by the graph layer.
    """
    payload = _BUILDERS[type(body)](body)
    callback_data = getattr(body, "bizOpaqueCallbackData", None)
    return payload if callback_data is None else with_callback_data(payload, callback_data)
