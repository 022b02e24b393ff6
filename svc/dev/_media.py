"""Files the developer uploads from the page, and the dry-run transport that serves them.

An upload is kept in the dev folder (``uploads/<media id>`` and its ``.json``) under a
media id, so the delivery of the user's image or document names it as the platform
would (id, mime type, SHA-256 of the bytes). ``DevTransport`` is the session's
capturing transport that also answers the platform's two media requests for those ids:
``GET /{media-id}`` (url, mime type, sha256, file size) and the download of that url,
so ``svc.media.download_media`` and ``download_media_bytes`` work in ``svc dev`` as they
do in production.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Final

import httpx

from svc import crypto
from svc.graph import CapturedRequest, CapturingTransport

__all__ = ["MAX_UPLOAD", "DevTransport", "DevUploads", "Upload"]

MAX_UPLOAD: Final = 16 * 1024 * 1024
"""The largest file the page may upload (the platform's cap on a downloaded media)."""
MEDIA_HOST: Final = "lookaside.fbsbx.com"
_MEDIA_ID: Final = re.compile(r"dev-media-[0-9a-f]{16}")
_MIME: Final = re.compile(r"[a-z0-9][a-z0-9!#$&^_.+-]{0,126}/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}")
_FILENAME_LIMIT: Final = 240


@dataclass(frozen=True, slots=True, kw_only=True)
class Upload:
    """One uploaded file's media fields (its bytes stay in the dev folder)."""

    media_id: str
    mime_type: str
    sha256: str
    file_size: int
    filename: str

    @property
    def url(self) -> str:
        """The download URL ``GET /{media-id}`` answers, on the platform's media host."""
        return f"https://{MEDIA_HOST}/whatsapp_business/attachments/?mid={self.media_id}"


def _clean_filename(name: str) -> str:
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    kept = "".join(ch for ch in base if ch.isprintable())[:_FILENAME_LIMIT].strip()
    return kept or "file"


class DevUploads:
    """The uploads of a dev folder, by media id (``uploads/`` is made on the first one)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder / "uploads"

    def add(self, content: bytes, *, mime_type: str, filename: str) -> Upload:
        """Keep ``content`` under a new media id; ``ValueError`` for a bad type or size."""
        mime = mime_type.split(";", 1)[0].strip().lower()
        if not _MIME.fullmatch(mime):
            raise ValueError("the file's type must be a MIME type such as image/png")
        if not content or len(content) > MAX_UPLOAD:
            raise ValueError(f"a file must hold 1 to {MAX_UPLOAD} bytes")
        upload = Upload(
            media_id=f"dev-media-{secrets.token_hex(8)}",
            mime_type=mime,
            sha256=crypto.sha256_hex(content),
            file_size=len(content),
            filename=_clean_filename(filename),
        )
        self.folder.mkdir(mode=0o700, exist_ok=True)
        (self.folder / upload.media_id).write_bytes(content)
        (self.folder / f"{upload.media_id}.json").write_text(json.dumps(asdict(upload)))
        return upload

    def get(self, media_id: str) -> Upload | None:
        """The upload with this id, or None (an id of another shape is never looked up)."""
        if not _MEDIA_ID.fullmatch(media_id):
            return None
        try:
            fields = json.loads((self.folder / f"{media_id}.json").read_text())
            return Upload(**fields)
        except (OSError, ValueError, TypeError):
            return None

    def content(self, upload: Upload) -> bytes:
        """The uploaded bytes."""
        return (self.folder / upload.media_id).read_bytes()


class DevTransport(CapturingTransport):
    """The capturing dry run that also answers the media lookup and download of uploads."""

    def __init__(
        self, on_request: Callable[[CapturedRequest], None], uploads: DevUploads
    ) -> None:
        super().__init__(on_request)
        self._tell = on_request
        self.uploads = uploads

    def _upload_of(self, request: httpx.URL) -> Upload | None:
        if request.host == MEDIA_HOST:
            return self.uploads.get(request.params.get("mid", ""))
        return self.uploads.get(request.path.rsplit("/", 1)[-1])

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        upload = self._upload_of(request.url) if request.method == "GET" else None
        if upload is None:
            return await super().handle_async_request(request)
        if request.url.host == MEDIA_HOST:
            content = self.uploads.content(upload)
            response = httpx.Response(
                200, content=content, headers={"content-type": upload.mime_type}, request=request
            )
            answer: object = {"bytes": len(content), "sha256": upload.sha256}
        else:
            answer = {
                "messaging_product": "whatsapp",
                "url": upload.url,
                "mime_type": upload.mime_type,
                "sha256": upload.sha256,
                "file_size": upload.file_size,
                "id": upload.media_id,
            }
            response = httpx.Response(200, json=answer, request=request)
        self._tell(
            CapturedRequest(
                method="GET", path=request.url.path, payload=None, status=200, answer=answer
            )
        )
        return response
