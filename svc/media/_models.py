"""Results of the media operations: frozen, keyword-only value objects."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from svc.graph import SendResult

__all__ = [
    "DownloadedMedia",
    "MediaInfo",
    "MediaSendResult",
    "UploadSession",
    "UploadSessionStatus",
    "UploadedFileHandle",
    "UploadedMedia",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class UploadedMedia:
    """An uploaded media object; ``id`` is what sends reference as ``media_id``."""

    id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class MediaInfo:
    """Metadata of a media object (``GET /{media_id}``); ``url`` is short-lived and authorized."""

    id: str
    url: str = field(repr=False)
    mime_type: str
    sha256: str
    """64 lowercase hex digits."""
    file_size: int
    messaging_product: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DownloadedMedia:
    """The bytes of a media object and the content type the server declared."""

    content: bytes = field(repr=False)
    content_type: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class UploadSession:
    """A resumable upload session (``upload:...``)."""

    id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class UploadSessionStatus:
    """How far a resumable upload got: resume with ``file_offset``."""

    id: str
    file_offset: int


@dataclass(frozen=True, slots=True, kw_only=True)
class UploadedFileHandle:
    """The handle (``h``) a finished resumable upload answers, used in templates and profiles."""

    handle: str


@dataclass(frozen=True, slots=True, kw_only=True)
class MediaSendResult:
    """A local file uploaded then sent: the new media id and the send answer."""

    media_id: str
    send: SendResult
    raw: Mapping[str, Any] = field(repr=False, default_factory=dict)
