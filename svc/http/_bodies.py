"""Request bodies of the send routes: pydantic models that validate them and feed the OpenAPI.

HTTP bodies keep the spec's camelCase names; ``to_payload`` maps each model
to the ``svc.graph`` builder that owns the field rules (lengths, phone and id
formats, media kinds...), so a rule lives once, in the graph layer. The
models check shape and JSON types strictly (no coercion, no unknown fields).
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, ClassVar, Final, Literal, TypeVar, get_args, get_origin

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    RootModel,
    TypeAdapter,
    ValidationError,
    create_model,
)
from pydantic.alias_generators import to_camel

from svc.graph import build_read_receipt, is_read_receipt_payload, with_callback_data
from svc.graph.messages import (
    CallPermissionRequestMessage,
    ContactsMessage,
    GroupMediaMessage,
    GroupPinMessage,
    GroupTextMessage,
    InteractiveButtonsMessage,
    InteractiveCarouselMessage,
    InteractiveCatalogMessage,
    InteractiveCtaUrlMessage,
    InteractiveFlowMessage,
    InteractiveListMessage,
    InteractiveLocationRequestMessage,
    InteractiveProductMessage,
    InteractiveProductsMessage,
    LocationMessage,
    MediaMessage,
    Message,
    ReactionMessage,
    RemoveReactionMessage,
    TemplateMessage,
    TextMessage,
)

from ._bodies_rich import BodyPart, CarouselCard, MediaHeaderIn, Recipient, graph_input
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


class _DeclaredBody(_SendBody):
    """A composer body derived from a ``Message`` declaration (see ``_declared``)."""

    declaration: ClassVar[type[Message]]

    def message(self) -> Message:
        """The declaration, filled from this body's fields (nested shapes in snake_case)."""
        given = type(self).model_fields
        values = {
            field.name: graph_input(getattr(self, field.name))
            for field in dataclasses.fields(self.declaration)
            if field.name in given
        }
        return self.declaration(**values, biz_opaque_callback_data=self.bizOpaqueCallbackData)


_WIRE_TYPES: Final[dict[Any, Any]] = {Sequence: list, Mapping: dict}


def _json_type(annotation: Any) -> Any:
    """The body's type for a declaration's field type: abstract containers become JSON ones."""
    origin = get_origin(annotation)
    if origin in _WIRE_TYPES:
        return _WIRE_TYPES[origin][tuple(_json_type(arg) for arg in get_args(annotation))]
    if origin is typing.Union or origin is type(int | None):
        return typing.Union[tuple(_json_type(arg) for arg in get_args(annotation))]  # noqa: UP007
    return annotation


def _declared(
    name: str,
    declaration: type[Message],
    tag: str,
    *,
    leave_out: tuple[str, ...] = (),
    **shapes: Any,
) -> type[_DeclaredBody]:
    """The composer body of ``declaration``: ``type: tag`` and its fields under camelCase names.

    ``shapes`` gives a nested field its body type (camelCase parts) or overrides a
    field's type; ``to`` is the documented ``Recipient``. ``leave_out`` names the
    fields the HTTP body does not offer.
    """
    hints = typing.get_type_hints(declaration)
    fields: dict[str, Any] = {"type": (Literal[tag], ...)}
    for field in dataclasses.fields(declaration):
        if field.name in (*leave_out, "biz_opaque_callback_data") or not field.init:
            continue
        annotation = shapes.get(field.name, Recipient if field.name == "to" else None)
        if annotation is None:
            annotation = _json_type(hints[field.name])
        required = field.default is dataclasses.MISSING
        fields[field.name] = (
            annotation,
            Field(... if required else field.default, alias=to_camel(field.name)),
        )
    declared = {field.name for field in dataclasses.fields(declaration)}
    for extra in shapes.keys() - declared:
        fields[extra] = (shapes[extra], Field(..., alias=to_camel(extra)))
    body = create_model(name, __base__=_DeclaredBody, __doc__=declaration.__doc__, **fields)
    body.declaration = declaration
    return body


class TextSendBody(_SendBody):
    """POST ``{prefix}/messages/text``: newline and tab are allowed in ``text``."""

    to: Recipient
    text: str
    previewUrl: bool | None = None

    def message(self) -> Message:
        """The ``TextMessage`` of this body."""
        return TextMessage(
            to=self.to,
            text=self.text,
            preview_url=self.previewUrl,
            biz_opaque_callback_data=self.bizOpaqueCallbackData,
        )


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

    def message(self) -> Message:
        """The ``TextMessage`` of this body (``bizOpaqueCallbackData`` wins over the native key)."""
        native = TextMessage(
            to=self.to,
            text=self.text.body,
            preview_url=self.text.preview_url,
            biz_opaque_callback_data=self.biz_opaque_callback_data,
        )
        if self.bizOpaqueCallbackData is None:
            return native
        with_callback_data({}, self.biz_opaque_callback_data)  # both keys are checked
        return dataclasses.replace(native, biz_opaque_callback_data=self.bizOpaqueCallbackData)


class TextComposerBody(_SendBody):
    """A text message; ``recipientType: group`` (groups enabled) sends to a group id."""

    type: Literal["text"]
    to: Recipient
    text: str
    previewUrl: bool | None = None
    recipientType: Literal["individual", "group"] | None = None
    replyToMessageId: str | None = None

    def message(self) -> Message:
        """A ``TextMessage``, or a ``GroupTextMessage`` for ``recipientType: group``."""
        declaration = GroupTextMessage if self.recipientType == "group" else TextMessage
        return declaration(
            to=self.to,
            text=self.text,
            preview_url=self.previewUrl,
            reply_to_message_id=self.replyToMessageId,
            biz_opaque_callback_data=self.bizOpaqueCallbackData,
        )


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

    def message(self) -> Message:
        """A ``MediaMessage`` of kind ``type``, or a ``GroupMediaMessage`` for groups."""
        declaration = GroupMediaMessage if self.recipientType == "group" else MediaMessage
        return declaration(
            self.type,
            to=self.to,
            media_id=self.mediaId,
            link=self.link,
            caption=self.caption,
            filename=self.filename,
            voice=self.voice,
            reply_to_message_id=self.replyToMessageId,
            biz_opaque_callback_data=self.bizOpaqueCallbackData,
        )


class ContactName(BodyPart):
    formattedName: str
    firstName: str | None = None
    lastName: str | None = None
    middleName: str | None = None
    suffix: str | None = None
    prefix: str | None = None


class ContactPhoneIn(BodyPart):
    phone: str
    type: str | None = None
    waId: str | None = None


class ContactEmailIn(BodyPart):
    email: str
    type: str | None = None


class ContactUrlIn(BodyPart):
    url: str
    type: str | None = None


class ContactAddressIn(BodyPart):
    street: str | None = None
    city: str | None = None
    state: str | None = None
    zip: str | None = None
    country: str | None = None
    countryCode: str | None = None
    type: str | None = None


class ContactOrgIn(BodyPart):
    company: str | None = None
    department: str | None = None
    title: str | None = None


class ContactIn(BodyPart):
    name: ContactName
    phones: list[ContactPhoneIn]
    emails: list[ContactEmailIn] | None = None
    urls: list[ContactUrlIn] | None = None
    addresses: list[ContactAddressIn] | None = None
    org: ContactOrgIn | None = None
    birthday: str | None = None


class ReplyButton(BodyPart):
    id: str
    title: str


class ListRow(BodyPart):
    id: str
    title: str
    description: str | None = None


class ListSection(BodyPart):
    title: str
    rows: list[ListRow]


class ProductSection(BodyPart):
    title: str
    productRetailerIds: list[str]


class ReadBody(_SendBody):
    """Mark an inbound message read (optionally showing a typing indicator); never projected."""

    type: Literal["read"]
    messageId: str
    typingIndicator: bool | None = None

    def receipt(self) -> Payload:
        """The read-receipt payload (``build_read_receipt``); it is not a ``Message``."""
        payload = build_read_receipt(
            message_id=self.messageId, typing_indicator=bool(self.typingIndicator)
        )
        return with_callback_data(payload, self.bizOpaqueCallbackData)


# One line per composer type: its declaration, its ``type`` and its nested shapes.
LocationBody = _declared("LocationBody", LocationMessage, "location")
ReactionBody = _declared("ReactionBody", ReactionMessage, "reaction")
RemoveReactionBody = _declared("RemoveReactionBody", RemoveReactionMessage, "removeReaction")
ContactsBody = _declared("ContactsBody", ContactsMessage, "contacts", contacts=list[ContactIn])
InteractiveButtonsBody = _declared(
    "InteractiveButtonsBody",
    InteractiveButtonsMessage,
    "interactiveButtons",
    buttons=list[ReplyButton],
    header=MediaHeaderIn | None,
)
InteractiveListBody = _declared(
    "InteractiveListBody", InteractiveListMessage, "interactiveList", sections=list[ListSection]
)
InteractiveCtaUrlBody = _declared(
    "InteractiveCtaUrlBody",
    InteractiveCtaUrlMessage,
    "interactiveCtaUrl",
    header=MediaHeaderIn | None,
)
InteractiveFlowBody = _declared(
    "InteractiveFlowBody", InteractiveFlowMessage, "interactiveFlow", header=MediaHeaderIn | None
)
InteractiveCarouselBody = _declared(
    "InteractiveCarouselBody",
    InteractiveCarouselMessage,
    "interactiveCarousel",
    cards=list[CarouselCard],
)
InteractiveProductBody = _declared(
    "InteractiveProductBody", InteractiveProductMessage, "interactiveProduct"
)
InteractiveProductsBody = _declared(
    "InteractiveProductsBody",
    InteractiveProductsMessage,
    "interactiveProducts",
    sections=list[ProductSection],
)
InteractiveCatalogBody = _declared(
    "InteractiveCatalogBody", InteractiveCatalogMessage, "interactiveCatalog"
)
InteractiveLocationRequestBody = _declared(
    "InteractiveLocationRequestBody",
    InteractiveLocationRequestMessage,
    "interactiveLocationRequest",
)
CallPermissionRequestBody = _declared(
    "CallPermissionRequestBody", CallPermissionRequestMessage, "callPermissionRequest"
)
TemplateBody = _declared(
    "TemplateBody", TemplateMessage, "template", leave_out=("language_policy",)
)
GroupPinBody = _declared(
    "GroupPinBody",
    GroupPinMessage,
    "pin",
    to=Annotated[str, Field(description="The group id.")],
    recipient_type=Literal["group"],
)

_COMPOSER_BODIES: Final = (
    TextComposerBody,
    MediaBody,
    LocationBody,
    ReactionBody,
    RemoveReactionBody,
    ContactsBody,
    InteractiveButtonsBody,
    InteractiveListBody,
    InteractiveCtaUrlBody,
    InteractiveFlowBody,
    InteractiveCarouselBody,
    InteractiveProductBody,
    InteractiveProductsBody,
    InteractiveCatalogBody,
    InteractiveLocationRequestBody,
    CallPermissionRequestBody,
    TemplateBody,
    GroupPinBody,
    ReadBody,
)
# Built from the tuple above, so mypy sees it as a value, not a type.
ComposerBody: Any = Annotated[typing.Union[_COMPOSER_BODIES], Field(discriminator="type")]  # noqa: UP007


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
    return isinstance(body, GroupPinBody) or getattr(body, "recipientType", None) == "group"


def to_payload(body: BaseModel) -> Payload:
    """The platform wire payload of a validated body, rendered by its graph declaration.

    A declaration's ``GraphRequestValidationError`` propagates; the caller turns
    it into 400 ``malformed_body``. ``bizOpaqueCallbackData`` is checked and
    added at the payload's top level by the graph layer.
    """
    match body:
        case ReadBody():
            return body.receipt()
        case (
            _DeclaredBody()
            | TextSendBody()
            | GraphNativeTextBody()
            | TextComposerBody()
            | MediaBody()
        ):
            return body.message().to_payload()
    raise TypeError(f"not a send body: {type(body).__name__}")
