"""Text, media, location and reaction messages: one declaration each, rendered to wire JSON."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, Literal, get_args

from ._envelope import Payload, address, envelope
from ._errors import GraphRequestValidationError
from ._message import Message, builder
from ._validate import (
    check_bool,
    check_caption,
    check_filename,
    check_id,
    check_label,
    check_latitude,
    check_longitude,
    check_media_source,
    check_text,
)

__all__ = [
    "MEDIA_KINDS",
    "AudioMessage",
    "DocumentMessage",
    "ImageMessage",
    "LocationMessage",
    "MediaKind",
    "MediaMessage",
    "ReactionMessage",
    "RemoveReactionMessage",
    "StickerMessage",
    "TextMessage",
    "VideoMessage",
    "build_audio_message",
    "build_document_message",
    "build_image_message",
    "build_location_message",
    "build_media_message",
    "build_reaction_message",
    "build_remove_reaction_message",
    "build_sticker_message",
    "build_text_message",
    "build_video_message",
    "media_object",
    "text_object",
]

MediaKind = Literal["image", "video", "audio", "document", "sticker"]
MEDIA_KINDS: Final[frozenset[str]] = frozenset(get_args(MediaKind))

_CAPTION_KINDS: Final = frozenset({"image", "video", "document"})
MAX_REACTION_EMOJI: Final = 32
MAX_LOCATION_FIELD: Final = 1024


def text_object(text: object, preview_url: object) -> Payload:
    """The ``text`` object: ``body`` and, only when given, ``preview_url``."""
    body: Payload = {"body": check_text(text)}
    if preview_url is not None:
        body["preview_url"] = check_bool(preview_url, "preview_url")
    return body


@dataclass(frozen=True, slots=True, kw_only=True)
class TextMessage(Message):
    """A text message; ``preview_url`` is sent only when given."""

    to: str
    text: str
    preview_url: bool | None = None
    reply_to_message_id: str | None = None

    def render(self) -> Payload:
        addressee = address(self.to)
        body = text_object(self.text, self.preview_url)
        return envelope(addressee, "text", body, reply_to_message_id=self.reply_to_message_id)


def media_object(
    kind: object,
    *,
    media_id: object,
    link: object,
    caption: object = None,
    filename: object = None,
    voice: object = None,
) -> tuple[str, Payload]:
    """The media kind and its wire object from exactly one of ``media_id``/``link``."""
    if not isinstance(kind, str) or kind not in MEDIA_KINDS:
        raise GraphRequestValidationError(
            "kind must be one of audio, document, image, sticker, video", field="kind"
        )
    media: Payload = check_media_source(media_id, link)
    if caption is not None:
        if kind not in _CAPTION_KINDS:
            raise GraphRequestValidationError(
                f"caption is allowed for image, video and document only, not {kind}",
                field="caption",
            )
        media["caption"] = check_caption(caption)
    if filename is not None:
        if kind != "document":
            raise GraphRequestValidationError(
                f"filename is allowed for document only, not {kind}", field="filename"
            )
        media["filename"] = check_filename(filename)
    if voice is not None:
        if kind != "audio":
            raise GraphRequestValidationError(
                f"voice is allowed for audio only, not {kind}", field="voice"
            )
        if check_bool(voice, "voice"):
            media["voice"] = True
    return kind, media


@dataclass(frozen=True, slots=True, kw_only=True)
class MediaFields(Message):
    """The fields of a media message of any kind; subclasses say where it is addressed."""

    kind: MediaKind = field(kw_only=False)
    to: str
    media_id: str | None = None
    link: str | None = None
    caption: str | None = None
    filename: str | None = None
    voice: bool | None = None
    reply_to_message_id: str | None = None

    def media(self) -> tuple[str, Payload]:
        """The message type and its checked media object (``media_object``)."""
        return media_object(
            self.kind,
            media_id=self.media_id,
            link=self.link,
            caption=self.caption,
            filename=self.filename,
            voice=self.voice,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class MediaMessage(MediaFields):
    """An image, video, audio, document or sticker message from one of ``media_id``/``link``.

    ``caption`` is for image, video and document; ``filename`` for document;
    ``voice`` for audio (``True`` adds ``audio.voice``; ``False`` keeps the standard payload).
    """

    def render(self) -> Payload:
        addressee = address(self.to)
        name, media = self.media()
        return envelope(addressee, name, media, reply_to_message_id=self.reply_to_message_id)


@dataclass(frozen=True, slots=True, kw_only=True)
class _OneKind(Message):
    """A media message of one fixed kind; subclasses add the options that kind takes."""

    kind: ClassVar[MediaKind]

    to: str
    media_id: str | None = None
    link: str | None = None
    reply_to_message_id: str | None = None

    def options(self) -> Mapping[str, Any]:
        """The kind's own fields (caption, filename, voice) by name."""
        return {}

    def render(self) -> Payload:
        return MediaMessage(
            self.kind,
            to=self.to,
            media_id=self.media_id,
            link=self.link,
            reply_to_message_id=self.reply_to_message_id,
            **self.options(),
        ).render()


@dataclass(frozen=True, slots=True, kw_only=True)
class _Captioned(_OneKind):
    """A media message of a kind that takes a ``caption`` (image, video)."""

    caption: str | None = None

    def options(self) -> Mapping[str, Any]:
        return {"caption": self.caption}


@dataclass(frozen=True, slots=True, kw_only=True)
class ImageMessage(_Captioned):
    """An image message (see ``MediaMessage``)."""

    kind: ClassVar[MediaKind] = "image"


@dataclass(frozen=True, slots=True, kw_only=True)
class VideoMessage(_Captioned):
    """A video message (see ``MediaMessage``)."""

    kind: ClassVar[MediaKind] = "video"


@dataclass(frozen=True, slots=True, kw_only=True)
class AudioMessage(_OneKind):
    """An audio message; ``voice=True`` sends it as a voice note (see ``MediaMessage``)."""

    kind: ClassVar[MediaKind] = "audio"
    voice: bool | None = None

    def options(self) -> Mapping[str, Any]:
        return {"voice": self.voice}


@dataclass(frozen=True, slots=True, kw_only=True)
class DocumentMessage(_OneKind):
    """A document message (see ``MediaMessage``)."""

    kind: ClassVar[MediaKind] = "document"
    caption: str | None = None
    filename: str | None = None

    def options(self) -> Mapping[str, Any]:
        return {"caption": self.caption, "filename": self.filename}


@dataclass(frozen=True, slots=True, kw_only=True)
class StickerMessage(_OneKind):
    """A sticker message (see ``MediaMessage``)."""

    kind: ClassVar[MediaKind] = "sticker"


@dataclass(frozen=True, slots=True, kw_only=True)
class LocationMessage(Message):
    """A location pin: finite latitude in -90..90 and longitude in -180..180."""

    to: str
    latitude: float
    longitude: float
    name: str | None = None
    address: str | None = None
    reply_to_message_id: str | None = None

    def render(self) -> Payload:
        addressee = address(self.to)
        location: Payload = {
            "latitude": check_latitude(self.latitude),
            "longitude": check_longitude(self.longitude),
        }
        if self.name is not None:
            location["name"] = check_label(self.name, "name", max_length=MAX_LOCATION_FIELD)
        if self.address is not None:
            location["address"] = check_text(self.address, "address", max_length=MAX_LOCATION_FIELD)
        return envelope(
            addressee, "location", location, reply_to_message_id=self.reply_to_message_id
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class ReactionMessage(Message):
    """A reaction with a non-empty ``emoji`` to ``message_id``."""

    to: str
    message_id: str
    emoji: str

    def render(self) -> Payload:
        addressee = address(self.to)
        reaction = {
            "message_id": check_id(self.message_id, "message_id"),
            "emoji": check_label(self.emoji, "emoji", max_length=MAX_REACTION_EMOJI),
        }
        return envelope(addressee, "reaction", reaction)


@dataclass(frozen=True, slots=True, kw_only=True)
class RemoveReactionMessage(Message):
    """Remove an earlier reaction: the reaction payload with an empty emoji."""

    to: str
    message_id: str

    def render(self) -> Payload:
        addressee = address(self.to)
        reaction = {"message_id": check_id(self.message_id, "message_id"), "emoji": ""}
        return envelope(addressee, "reaction", reaction)


build_text_message = builder(TextMessage)
build_media_message = builder(MediaMessage)
build_image_message = builder(ImageMessage)
build_video_message = builder(VideoMessage)
build_audio_message = builder(AudioMessage)
build_document_message = builder(DocumentMessage)
build_sticker_message = builder(StickerMessage)
build_location_message = builder(LocationMessage)
build_reaction_message = builder(ReactionMessage)
build_remove_reaction_message = builder(RemoveReactionMessage)
