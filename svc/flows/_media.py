"""Media a user uploaded through a Flow (PhotoPicker, DocumentPicker): download capped, decrypt.

A Flow request carries each file as ``{"media_id", "cdn_url", "file_name",
"encryption_metadata": {...}}``; the bytes at ``cdn_url`` are encrypted with
the scheme ``svc.media.decrypt_encrypted_media`` verifies (AES-256-CBC,
truncated HMAC-SHA256, SHA-256 of both sides).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from svc._text import has_control
from svc.graph import GraphClient
from svc.media import (
    BUNDLE_FIELDS,
    MAX_DOWNLOAD_BYTES,
    MEDIA_HOSTS,
    decrypt_encrypted_media_async,
    download_media_bytes,
)

from ._errors import FlowMediaError

__all__ = ["MAX_FILE_NAME_LENGTH", "FlowMedia", "download_flow_media"]

MAX_FILE_NAME_LENGTH: Final = 255
_MAX_URL_LENGTH: Final = 8192


@dataclass(frozen=True, slots=True, kw_only=True)
class FlowMedia:
    """One decrypted Flow upload; the repr shows the size only (name and bytes are user content)."""

    media_id: str | None = field(repr=False)
    file_name: str = field(repr=False)
    """As the user's device named it: not a safe local path."""
    content: bytes = field(repr=False)

    @property
    def size(self) -> int:
        return len(self.content)

    def __repr__(self) -> str:
        return f"FlowMedia(size={self.size})"


async def download_flow_media(
    client: GraphClient,
    item: Mapping[str, Any],
    *,
    max_bytes: int | None = None,
    media_hosts: Collection[str] = MEDIA_HOSTS,
) -> FlowMedia:
    """Download one PhotoPicker/DocumentPicker item (https only, capped) and decrypt it.

    The download goes through ``svc.media.download_media_bytes`` on
    ``client`` (its transport and bearer token, sent only to ``media_hosts``;
    16 MiB cap lowerable with ``max_bytes``); decryption through
    ``decrypt_encrypted_media_async``, so large files are worked on a
    thread. A malformed item raises ``FlowMediaError``; download and
    integrity failures keep their ``svc.media`` / ``svc.graph`` types.
    """
    if not isinstance(item, Mapping):
        raise FlowMediaError("invalid_media_item", "a Flow media item must be a JSON object")
    url = item.get("cdn_url")
    if not isinstance(url, str) or not url.startswith("https://") or len(url) > _MAX_URL_LENGTH:
        raise FlowMediaError("invalid_cdn_url", "cdn_url must be an https URL")
    file_name = item.get("file_name")
    if (
        not isinstance(file_name, str)
        or not file_name
        or len(file_name) > MAX_FILE_NAME_LENGTH
        or has_control(file_name)
    ):
        raise FlowMediaError(
            "invalid_file_name",
            f"file_name must be 1 to {MAX_FILE_NAME_LENGTH} characters without control characters",
        )
    media_id = item.get("media_id")
    if media_id is not None and not isinstance(media_id, str):
        raise FlowMediaError("invalid_media_id", "media_id must be a string")
    metadata = item.get("encryption_metadata")
    if not isinstance(metadata, Mapping) or not all(
        isinstance(metadata.get(name), str) for name in BUNDLE_FIELDS
    ):
        raise FlowMediaError(
            "invalid_encryption_metadata",
            "encryption_metadata must hold the base64 strings " + ", ".join(BUNDLE_FIELDS),
        )
    bundle = {name: metadata[name] for name in BUNDLE_FIELDS}
    downloaded = await download_media_bytes(
        client,
        url=url,
        max_bytes=MAX_DOWNLOAD_BYTES if max_bytes is None else max_bytes,
        media_hosts=media_hosts,
    )
    content = await decrypt_encrypted_media_async(bundle, downloaded.content)
    return FlowMedia(media_id=media_id, file_name=file_name, content=content)
