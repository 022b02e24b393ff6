"""Media operations on a GraphClient: upload, metadata, download, delete, resumable sessions.

Every input is checked before the transport is touched; caps are enforced
while bytes move, never only from a declared size.
"""

from __future__ import annotations

import io
import re
from collections.abc import AsyncGenerator, Collection, Mapping
from contextlib import aclosing
from typing import Any, Final

import httpx

from svc import crypto
from svc._text import decimal_int, has_control
from svc.graph import GraphClient, GraphNetworkError

from ._bodies import ByteSource, CountedBody, UploadFile, byte_source, multipart_envelope
from ._checks import (
    HEX64,
    MAX_DOWNLOAD_BYTES,
    MAX_SESSION_BYTES,
    MAX_UPLOAD_BYTES,
    check_app_id,
    check_cap,
    check_media_id,
    check_phone_number_id,
    parse_expected_sha256,
    session_id_segment,
)
from ._errors import MediaHostError, MediaIntegrityError, MediaValidationError
from ._models import (
    DownloadedMedia,
    MediaInfo,
    UploadedFileHandle,
    UploadedMedia,
    UploadSession,
    UploadSessionStatus,
)

__all__ = [
    "MEDIA_HOSTS",
    "create_upload_session",
    "delete_media",
    "download_media",
    "download_media_bytes",
    "get_upload_session",
    "upload_file_to_session",
    "upload_media",
]

MAX_URL_LENGTH: Final = 8192
MEDIA_HOSTS: Final = frozenset({"lookaside.fbsbx.com", "mmg.whatsapp.net"})
"""The hosts the platform serves media from: ``GET /{media_id}`` answers
``lookaside.fbsbx.com`` URLs, Flow media (``cdn_url``) comes from ``mmg.whatsapp.net``.
``download_media_bytes`` sends the access token to these only, over https."""
MAX_FILE_NAME_LENGTH: Final = 255
_MIME = re.compile(r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}")


async def upload_media(
    client: GraphClient,
    *,
    phone_number_id: str,
    file: UploadFile,
    mime_type: str,
    filename: str = "upload",
    file_size: int | None = None,
    messaging_product: str = "whatsapp",
    max_bytes: int | None = None,
) -> UploadedMedia:
    """Upload one file as ``multipart/form-data`` to ``POST /{phone_number_id}/media``.

    ``file`` is bytes, bytearray, a memoryview of bytes, a binary file-like
    (read from its current position) or an async stream of bytes;
    ``file_size`` is required for streams and file-likes that cannot seek.
    The size is checked against the cap (16 MiB, lowerable with ``max_bytes``)
    before sending and the bytes are counted while sending.
    """
    phone_number_id = check_phone_number_id(phone_number_id)
    cap = check_cap(max_bytes, maximum=MAX_UPLOAD_BYTES)
    mime_type = _check_mime_type(mime_type, field="mime_type")
    filename = _check_file_name(filename, field="filename")
    if messaging_product != "whatsapp":
        raise MediaValidationError(
            "invalid_messaging_product", "messaging_product must be 'whatsapp'"
        )
    source = byte_source(file, size=file_size, code="invalid_file", size_code="invalid_file")
    return await _send_upload(
        client,
        phone_number_id=phone_number_id,
        body_source=source,
        cap=cap,
        mime_type=mime_type,
        filename=filename,
    )


async def _send_upload(
    client: GraphClient,
    *,
    phone_number_id: str,
    body_source: ByteSource,
    cap: int,
    mime_type: str,
    filename: str,
) -> UploadedMedia:
    """The one upload request, shared with the local-path helpers (inputs already checked)."""
    if body_source.size == 0:
        raise MediaValidationError("invalid_file", "file is empty")
    if body_source.size > cap:
        raise MediaValidationError("upload_too_large", f"file exceeds {cap} bytes")
    prefix, suffix, content_type = multipart_envelope(
        fields={"messaging_product": "whatsapp", "type": mime_type},
        file_field="file",
        filename=filename,
        content_type=mime_type,
    )
    body = CountedBody(
        body_source,
        cap=cap,
        too_large_code="upload_too_large",
        mismatch_code="invalid_file",
        prefix=prefix,
        suffix=suffix,
    )
    request = client.build_request(
        "POST",
        client.url_for(f"/{phone_number_id}/media"),
        content=body,
        headers={"Content-Type": content_type, "Content-Length": str(body.content_length)},
    )
    answer = _object(client.parse_json(await client.send(request)))
    return UploadedMedia(id=_string(answer, "id"))


async def download_media(
    client: GraphClient, *, media_id: str, phone_number_id: str | None = None
) -> MediaInfo:
    """Read a media object's metadata (``GET /{media_id}``): ``url``, ``mime_type``, ``sha256``...

    ``phone_number_id``, when given, asks the platform to check the media
    belongs to that number.
    """
    media_id = check_media_id(media_id)
    query = None
    if phone_number_id is not None:
        query = {"phone_number_id": check_phone_number_id(phone_number_id)}
    answer = _object(await client.request("GET", f"/{media_id}", query=query))
    url = _string(answer, "url")
    _check_download_url(url, code="invalid_response")
    sha256 = _string(answer, "sha256")
    if not HEX64.fullmatch(sha256):
        raise MediaValidationError("invalid_response", "media sha256 is not 64 hex digits")
    product = answer.get("messaging_product")
    return MediaInfo(
        id=_string(answer, "id"),
        url=url,
        mime_type=_string(answer, "mime_type"),
        sha256=sha256.lower(),
        file_size=_size(answer.get("file_size")),
        messaging_product=product if isinstance(product, str) else None,
    )


async def download_media_bytes(
    client: GraphClient,
    *,
    url: str,
    expected_sha256: str | None = None,
    max_bytes: int | None = None,
    media_hosts: Collection[str] = MEDIA_HOSTS,
) -> DownloadedMedia:
    """Download a media URL with the client's authorization, capped while reading.

    ``url`` is https on one of ``media_hosts`` (exact host names, by default
    the platform's ``MEDIA_HOSTS``); anything else raises ``MediaHostError``
    before any request, so the access token goes nowhere else. The cap
    (16 MiB, lowerable with ``max_bytes``) is checked against Content-Length
    first and then against the bytes actually read, so a missing or lying
    header cannot push the buffer past
    it. ``expected_sha256`` is 64 hex digits or base64 of the 32-byte digest.
    """
    target = _check_download_url(url, code="invalid_url")
    # The host as written on the wire (ASCII, IDNA-encoded), compared with the allowed names:
    # .host would decode it, and a malformed "xn--" label raises idna's own error there.
    host = target.raw_host.decode("ascii").lower()
    if target.scheme != "https" or host not in _host_set(media_hosts):
        raise MediaHostError(
            "untrusted_media_url", "the media URL is not https on an allowed media host"
        )
    cap = check_cap(max_bytes, maximum=MAX_DOWNLOAD_BYTES)
    expected = None if expected_sha256 is None else parse_expected_sha256(expected_sha256)
    request = client.build_request("GET", target, headers={"Accept-Encoding": "identity"})
    response = await client.send(request, stream=True)
    try:
        declared = _declared_length(response)
        if declared is not None and declared > cap:
            raise MediaValidationError("download_too_large", f"media exceeds {cap} bytes")
        if response.headers.get("content-encoding", "identity").lower() != "identity":
            raise MediaValidationError("invalid_response", "media arrived content-encoded")
        buffer = io.BytesIO()
        try:
            # The raw stream, not aiter_raw(): it also serves an already-read body,
            # and closing our iterator early releases httpx's wrapper at once.
            async with aclosing(_chunks_of(response)) as chunks:
                async for chunk in chunks:
                    if buffer.tell() + len(chunk) > cap:
                        raise MediaValidationError(
                            "download_too_large", f"media exceeds {cap} bytes"
                        )
                    buffer.write(chunk)
        except httpx.TransportError as exc:
            raise GraphNetworkError(f"media download failed: {type(exc).__name__}") from None
        content_type = response.headers.get("content-type")
    finally:
        await response.aclose()
    if declared is not None and buffer.tell() != declared:
        raise MediaValidationError("invalid_response", "media body differs from its Content-Length")
    content = buffer.getvalue()  # the buffer's own bytes, no copy in CPython
    if expected is not None and not crypto.constant_time_equal(
        crypto.sha256_digest(content), expected
    ):
        raise MediaIntegrityError("sha256_mismatch", "downloaded media does not match its sha256")
    return DownloadedMedia(content=content, content_type=content_type)


async def delete_media(
    client: GraphClient, *, media_id: str, phone_number_id: str | None = None
) -> bool:
    """Delete a media object (``DELETE /{media_id}``); returns the platform's ``success`` flag."""
    media_id = check_media_id(media_id)
    query = None
    if phone_number_id is not None:
        query = {"phone_number_id": check_phone_number_id(phone_number_id)}
    answer = _object(await client.request("DELETE", f"/{media_id}", query=query))
    success = answer.get("success")
    if not isinstance(success, bool):
        raise MediaValidationError("invalid_response", "delete answer has no boolean success")
    return success


async def create_upload_session(
    client: GraphClient,
    *,
    app_id: str,
    file_name: str,
    file_length: int,
    file_type: str,
) -> UploadSession:
    """Open a resumable upload session (``POST /{app_id}/uploads``) for a file of up to 64 MiB."""
    app_id = check_app_id(app_id)
    file_name = _check_file_name(file_name, field="file_name")
    if isinstance(file_length, bool) or not isinstance(file_length, int) or file_length <= 0:
        raise MediaValidationError(
            "invalid_content_length", "file_length must be a positive integer"
        )
    if file_length > MAX_SESSION_BYTES:
        raise MediaValidationError("upload_too_large", f"file exceeds {MAX_SESSION_BYTES} bytes")
    file_type = _check_mime_type(file_type, field="file_type")
    answer = _object(
        await client.request(
            "POST",
            f"/{app_id}/uploads",
            query={"file_name": file_name, "file_length": file_length, "file_type": file_type},
        )
    )
    return UploadSession(id=_string(answer, "id"))


async def upload_file_to_session(
    client: GraphClient,
    *,
    upload_session_id: str,
    file: UploadFile,
    file_offset: int = 0,
    content_length: int | None = None,
    max_bytes: int | None = None,
) -> UploadedFileHandle:
    """Send the bytes of a session from ``file_offset`` on (``POST /{upload_session_id}``).

    Streams need ``content_length``; their bytes are counted, and more than
    declared fails (``invalid_content_length``, or ``upload_too_large`` past
    the 64 MiB cap, lowerable with ``max_bytes``).
    """
    segment = session_id_segment(upload_session_id)
    cap = check_cap(max_bytes, maximum=MAX_SESSION_BYTES)
    if (
        isinstance(file_offset, bool)
        or not isinstance(file_offset, int)
        or not 0 <= file_offset < cap
    ):
        raise MediaValidationError(
            "invalid_file_offset", f"file_offset must be an integer from 0 to {cap - 1}"
        )
    source = byte_source(
        file, size=content_length, code="invalid_file", size_code="invalid_content_length"
    )
    if source.size == 0:
        raise MediaValidationError("invalid_content_length", "content_length must be positive")
    if file_offset + source.size > cap:
        raise MediaValidationError("upload_too_large", f"file exceeds {cap} bytes")
    body = CountedBody(
        source,
        cap=cap - file_offset,
        too_large_code="upload_too_large",
        mismatch_code="invalid_content_length",
    )
    request = client.build_request(
        "POST",
        client.url_for(f"/{segment}"),
        content=body,
        headers={
            "Content-Type": "application/octet-stream",
            "Content-Length": str(body.content_length),
            "file_offset": str(file_offset),
        },
    )
    answer = _object(client.parse_json(await client.send(request)))
    return UploadedFileHandle(handle=_string(answer, "h"))


async def get_upload_session(client: GraphClient, *, upload_session_id: str) -> UploadSessionStatus:
    """Read a session's progress (``GET /{upload_session_id}``) to resume at ``file_offset``."""
    segment = session_id_segment(upload_session_id)
    answer = _object(await client.request("GET", f"/{segment}"))
    return UploadSessionStatus(
        id=_string(answer, "id"), file_offset=_size(answer.get("file_offset"))
    )


# --- helpers


def _host_set(media_hosts: Collection[str]) -> frozenset[str]:
    if isinstance(media_hosts, str) or not all(isinstance(h, str) for h in media_hosts):
        raise TypeError("media_hosts must be a collection of host names")
    return frozenset(host.lower().rstrip(".") for host in media_hosts)


def _check_download_url(url: object, *, code: str) -> httpx.URL:
    if (
        not isinstance(url, str)
        or not url
        or len(url) > MAX_URL_LENGTH
        or has_control(url)
        or any(ch.isspace() for ch in url)
    ):
        raise MediaValidationError(code, "url must be an http or https URL")
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:
        raise MediaValidationError(code, "url must be an http or https URL") from None
    if parsed.scheme not in ("http", "https") or not parsed.raw_host:
        raise MediaValidationError(code, "url must be an http or https URL")
    if parsed.userinfo:
        raise MediaValidationError(code, "url must not carry credentials")
    return parsed


def _check_mime_type(value: object, *, field: str) -> str:
    if not isinstance(value, str) or not _MIME.fullmatch(value):
        raise MediaValidationError("invalid_mime_type", f"{field} must look like 'image/jpeg'")
    return value


def _check_file_name(value: object, *, field: str) -> str:
    if (
        not isinstance(value, str)
        or not value.strip()
        or len(value) > MAX_FILE_NAME_LENGTH
        or has_control(value)
        or "/" in value
        or "\\" in value
        or value in (".", "..")
    ):
        raise MediaValidationError(
            "invalid_file_name",
            f"{field} must be a plain file name of 1 to {MAX_FILE_NAME_LENGTH} characters",
        )
    return value


async def _chunks_of(response: httpx.Response) -> AsyncGenerator[bytes, None]:
    stream = response.stream
    if not isinstance(stream, httpx.AsyncByteStream):
        raise MediaValidationError("invalid_response", "media body is not an async stream")
    iterator = aiter(stream)
    try:
        async for chunk in iterator:
            yield chunk
    finally:
        close = getattr(iterator, "aclose", None)
        if close is not None:
            await close()


def _declared_length(response: httpx.Response) -> int | None:
    raw = response.headers.get("content-length")
    if raw is None:
        return None
    length = decimal_int(raw)
    if length is None:
        raise MediaValidationError("invalid_response", "media has a malformed Content-Length")
    return length


def _object(answer: object) -> Mapping[str, Any]:
    if not isinstance(answer, Mapping):
        raise MediaValidationError("invalid_response", "answer is not a JSON object")
    return answer


def _string(answer: Mapping[str, Any], key: str) -> str:
    value = answer.get(key)
    if not isinstance(value, str) or not value:
        raise MediaValidationError("invalid_response", f"answer has no string {key!r}")
    return value


def _size(value: object) -> int:
    if isinstance(value, str):
        value = decimal_int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise MediaValidationError("invalid_response", "answer has a malformed size")
    return value
