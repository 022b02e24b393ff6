"""Upload a local file and send it as a message: exactly two upstream requests.

Every rejection happens before the first request: the path's shape, its
extension, the message fields, then (on the opened file) its type and size.
Error messages never echo the path; neither does the wire (the multipart file
name is ``<kind><extension>``).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import AsyncIterator, Mapping
from dataclasses import replace
from typing import Any, Final

import anyio
import anyio.to_thread

from svc._text import has_control
from svc.graph import GraphClient, send_result_from_answer
from svc.graph.messages import (
    AudioMessage,
    DocumentMessage,
    ImageMessage,
    StickerMessage,
    VideoMessage,
)

from ._bodies import FILE_CHUNK_SIZE, ByteSource
from ._checks import MAX_UPLOAD_BYTES, MIB, check_cap, check_phone_number_id
from ._errors import MediaValidationError
from ._models import MediaSendResult
from ._operations import _send_upload

__all__ = [
    "KIND_MAX_BYTES",
    "SUPPORTED_EXTENSIONS",
    "upload_and_send_audio",
    "upload_and_send_document",
    "upload_and_send_image",
    "upload_and_send_sticker",
    "upload_and_send_video",
]

SUPPORTED_EXTENSIONS: Final[Mapping[str, Mapping[str, str]]] = {
    "image": {".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".png": "image/png"},
    "video": {".mp4": "video/mp4", ".3gp": "video/3gpp"},
    "audio": {
        ".aac": "audio/aac",
        ".amr": "audio/amr",
        ".mp3": "audio/mpeg",
        ".m4a": "audio/mp4",
        ".ogg": "audio/ogg",
        ".opus": "audio/ogg",
    },
    "document": {
        ".txt": "text/plain",
        ".pdf": "application/pdf",
        ".doc": "application/msword",
        ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        ".xls": "application/vnd.ms-excel",
        ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        ".ppt": "application/vnd.ms-powerpoint",
        ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    },
    "sticker": {".webp": "image/webp"},
}
"""Extensions each kind accepts (case-insensitive) and the MIME type sent for them."""

KIND_MAX_BYTES: Final[Mapping[str, int]] = {
    "image": 5 * MIB,
    "video": MAX_UPLOAD_BYTES,
    "audio": MAX_UPLOAD_BYTES,
    "document": MAX_UPLOAD_BYTES,
    "sticker": 500 * 1024,
}
"""The largest file of each kind, the default and maximum of ``max_bytes``: the platform's limit
(images 5 MiB, stickers 500 KiB), or the upload cap where the platform allows more."""
STATIC_STICKER_MAX_BYTES: Final = 100 * 1024
"""A sticker without WebP's animation flag is held to this (the 500 KiB are for animated ones)."""

_PLACEHOLDER_MEDIA_ID: Final = "0"

_FileMessage = ImageMessage | VideoMessage | AudioMessage | DocumentMessage | StickerMessage
"""The declarations a local file is sent with (one kind each)."""


async def upload_and_send_image(
    client: GraphClient,
    *,
    phone_number_id: str,
    path: str | os.PathLike[str],
    to: str,
    caption: str | None = None,
    reply_to_message_id: str | None = None,
    max_bytes: int | None = None,
) -> MediaSendResult:
    """Upload a .jpg/.jpeg/.png file, then send it as an image message."""
    message = ImageMessage(to=to, caption=caption, reply_to_message_id=reply_to_message_id)
    return await _upload_and_send(
        client, message, phone_number_id=phone_number_id, path=path, max_bytes=max_bytes
    )


async def upload_and_send_video(
    client: GraphClient,
    *,
    phone_number_id: str,
    path: str | os.PathLike[str],
    to: str,
    caption: str | None = None,
    reply_to_message_id: str | None = None,
    max_bytes: int | None = None,
) -> MediaSendResult:
    """Upload a .mp4/.3gp file, then send it as a video message."""
    message = VideoMessage(to=to, caption=caption, reply_to_message_id=reply_to_message_id)
    return await _upload_and_send(
        client, message, phone_number_id=phone_number_id, path=path, max_bytes=max_bytes
    )


async def upload_and_send_audio(
    client: GraphClient,
    *,
    phone_number_id: str,
    path: str | os.PathLike[str],
    to: str,
    voice: bool | None = None,
    reply_to_message_id: str | None = None,
    max_bytes: int | None = None,
) -> MediaSendResult:
    """Upload an .aac/.amr/.mp3/.m4a/.ogg/.opus file, then send it as an audio message."""
    message = AudioMessage(to=to, voice=voice, reply_to_message_id=reply_to_message_id)
    return await _upload_and_send(
        client, message, phone_number_id=phone_number_id, path=path, max_bytes=max_bytes
    )


async def upload_and_send_document(
    client: GraphClient,
    *,
    phone_number_id: str,
    path: str | os.PathLike[str],
    to: str,
    caption: str | None = None,
    filename: str | None = None,
    reply_to_message_id: str | None = None,
    max_bytes: int | None = None,
) -> MediaSendResult:
    """Upload a document (.pdf, .txt, office formats), then send it; ``filename`` is shown."""
    message = DocumentMessage(
        to=to, caption=caption, filename=filename, reply_to_message_id=reply_to_message_id
    )
    return await _upload_and_send(
        client, message, phone_number_id=phone_number_id, path=path, max_bytes=max_bytes
    )


async def upload_and_send_sticker(
    client: GraphClient,
    *,
    phone_number_id: str,
    path: str | os.PathLike[str],
    to: str,
    reply_to_message_id: str | None = None,
    max_bytes: int | None = None,
) -> MediaSendResult:
    """Upload a .webp file, then send it as a sticker message."""
    message = StickerMessage(to=to, reply_to_message_id=reply_to_message_id)
    return await _upload_and_send(
        client, message, phone_number_id=phone_number_id, path=path, max_bytes=max_bytes
    )


async def _upload_and_send(
    client: GraphClient,
    message: _FileMessage,
    *,
    phone_number_id: str,
    path: object,
    max_bytes: int | None,
) -> MediaSendResult:
    kind = message.kind
    phone_number_id = check_phone_number_id(phone_number_id)
    cap = check_cap(max_bytes, maximum=KIND_MAX_BYTES[kind])
    local = _check_local_path(path)
    extension = os.path.splitext(local)[1].lower()
    mime_type = SUPPORTED_EXTENSIONS[kind].get(extension)
    if mime_type is None:
        raise MediaValidationError(
            "unsupported_extension",
            f"{kind} files must end in one of {', '.join(SUPPORTED_EXTENSIONS[kind])}",
        )
    # Validate the message fields now, so a bad recipient costs no upload.
    replace(message, media_id=_PLACEHOLDER_MEDIA_ID).to_payload()
    static_cap = min(cap, STATIC_STICKER_MAX_BYTES) if kind == "sticker" else None
    with await anyio.to_thread.run_sync(_open_regular_file, local, cap, static_cap) as opened:
        handle, size = opened
        async_file = anyio.wrap_file(handle)
        source = ByteSource(size=size, stream=_file_chunks(async_file, size))
        uploaded = await _send_upload(
            client,
            phone_number_id=phone_number_id,
            body_source=source,
            cap=cap,
            mime_type=mime_type,
            filename=f"{kind}{extension}",
        )
    payload = replace(message, media_id=uploaded.id).to_payload()
    answer = await client.request("POST", f"/{phone_number_id}/messages", json=payload)
    return MediaSendResult(media_id=uploaded.id, send=send_result_from_answer(answer), raw=answer)


def _check_local_path(path: object) -> str:
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if not isinstance(path, str):
        raise MediaValidationError("invalid_path", "path must be a string or os.PathLike[str]")
    if not path.strip():
        raise MediaValidationError("invalid_path", "path must not be empty")
    if has_control(path):
        raise MediaValidationError("invalid_path", "path must not contain control characters")
    if ".." in re.split(r"[\\/]", path):
        raise MediaValidationError("invalid_path", "path must not contain '..' segments")
    return path


class _OpenedFile:
    """An opened regular file and its size; closes the descriptor on exit."""

    def __init__(self, handle: Any, size: int) -> None:
        self._handle = handle
        self._size = size

    def __enter__(self) -> tuple[Any, int]:
        return self._handle, self._size

    def __exit__(self, *exc_info: object) -> None:
        self._handle.close()


def _open_regular_file(path: str, cap: int, static_cap: int | None = None) -> _OpenedFile:
    """Open without blocking on FIFOs, then judge the opened file (no stat/open race).

    ``static_cap``, for stickers, holds a WebP without the animation flag to a smaller size.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise MediaValidationError("invalid_file", "file does not exist") from None
    except IsADirectoryError:
        raise MediaValidationError("invalid_file", "path is a directory") from None
    except OSError as exc:
        raise MediaValidationError(
            "invalid_file", f"file cannot be opened ({type(exc).__name__})"
        ) from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise MediaValidationError("invalid_file", "path is a directory")
        if not stat.S_ISREG(info.st_mode):
            raise MediaValidationError("invalid_file", "path is not a regular file")
        if info.st_size == 0:
            raise MediaValidationError("invalid_file", "file is empty")
        if static_cap is not None and not _animated_webp(fd):
            cap = static_cap
        if info.st_size > cap:
            raise MediaValidationError("upload_too_large", f"file exceeds {cap} bytes")
        handle = os.fdopen(fd, "rb", buffering=0)
    except BaseException:
        os.close(fd)
        raise
    return _OpenedFile(handle, info.st_size)


def _animated_webp(fd: int) -> bool:
    """Whether the file starts as an animated WebP: RIFF, WEBP, a VP8X chunk with flag 0x02."""
    header = os.read(fd, 21)
    os.lseek(fd, 0, os.SEEK_SET)
    return (
        header[:4] == b"RIFF"
        and header[8:16] == b"WEBPVP8X"
        and len(header) == 21
        and bool(header[20] & 0x02)
    )


async def _file_chunks(file: anyio.AsyncFile[bytes], size: int) -> AsyncIterator[bytes]:
    """Read at most ``size + 1`` bytes (the extra byte exposes a file that grew)."""
    remaining = size + 1
    while remaining > 0:
        chunk = await file.read(min(FILE_CHUNK_SIZE, remaining))
        if not chunk:
            return
        remaining -= len(chunk)
        yield chunk
