"""Resumable upload sessions, the media path-parameter rules, and the public surface."""

from __future__ import annotations

import string

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import svc.media
from svc.graph import DEFAULT_API_VERSION as VERSION
from svc.media import (
    MAX_SESSION_BYTES,
    MediaValidationError,
    create_upload_session,
    delete_media,
    download_media,
    get_upload_session,
    upload_file_to_session,
)

from ._fakes import CountingStream, Upstream, json_answer

SESSION = "upload:MTphdHRhY2htZW50OjA5YjY"
MIB = 1024 * 1024


async def test_create_session_wire() -> None:
    upstream = Upstream(json_answer({"id": SESSION}))
    async with upstream.client() as client:
        session = await create_upload_session(
            client,
            app_id="123456",
            file_name="menu.pdf",
            file_length=1000,
            file_type="application/pdf",
        )
    assert session.id == SESSION
    [(request, _)] = upstream.requests
    assert (request.method, request.url.path) == ("POST", f"/{VERSION}/123456/uploads")
    assert dict(request.url.params) == {
        "file_name": "menu.pdf",
        "file_length": "1000",
        "file_type": "application/pdf",
    }


@pytest.mark.parametrize(
    ("kwargs", "code"),
    [
        ({"file_length": MAX_SESSION_BYTES + 1}, "upload_too_large"),
        ({"file_length": 0}, "invalid_content_length"),
        ({"file_length": True}, "invalid_content_length"),
        ({"file_name": "a/b.pdf"}, "invalid_file_name"),
        ({"file_type": "pdf"}, "invalid_mime_type"),
        ({"app_id": "12:3"}, "invalid_app_id"),
    ],
)
async def test_create_session_rejections(kwargs: dict[str, object], code: str) -> None:
    upstream = Upstream(json_answer({"id": SESSION}))
    arguments: dict[str, object] = {
        "app_id": "1",
        "file_name": "f.pdf",
        "file_length": 10,
        "file_type": "application/pdf",
        **kwargs,
    }
    async with upstream.client() as client:
        with pytest.raises(MediaValidationError) as caught:
            await create_upload_session(client, **arguments)  # type: ignore[arg-type]
    assert caught.value.code == code
    assert upstream.requests == []


async def test_upload_to_session_wire_encodes_the_colon() -> None:
    upstream = Upstream(json_answer({"h": "2:c2FtcGxl"}))
    async with upstream.client() as client:
        handle = await upload_file_to_session(
            client, upload_session_id=SESSION, file=b"abcdef", file_offset=10
        )
    assert handle.handle == "2:c2FtcGxl"
    [(request, body)] = upstream.requests
    assert request.url.raw_path == f"/{VERSION}/upload%3AMTphdHRhY2htZW50OjA5YjY".encode()
    assert request.headers["file_offset"] == "10"
    assert request.headers["content-length"] == "6"
    assert body == b"abcdef"


async def test_session_status() -> None:
    upstream = Upstream(json_answer({"id": SESSION, "file_offset": 42}))
    async with upstream.client() as client:
        status = await get_upload_session(client, upload_session_id=SESSION)
    assert (status.id, status.file_offset) == (SESSION, 42)
    [(request, _)] = upstream.requests
    assert request.method == "GET"
    assert request.url.raw_path == f"/{VERSION}/upload%3AMTphdHRhY2htZW50OjA5YjY".encode()


async def test_session_stream_is_counted() -> None:
    upstream = Upstream(json_answer({"h": "h"}))
    stream = CountingStream(chunks=3, chunk_size=1000)
    async with upstream.client() as client:
        await upload_file_to_session(
            client, upload_session_id=SESSION, file=stream, content_length=3000
        )
    assert upstream.requests[0][1] == b"x" * 3000


async def test_session_stream_needs_content_length() -> None:
    upstream = Upstream(json_answer({"h": "h"}))
    async with upstream.client() as client:
        with pytest.raises(MediaValidationError) as caught:
            await upload_file_to_session(
                client, upload_session_id=SESSION, file=CountingStream(chunks=1, chunk_size=1)
            )
    assert caught.value.code == "invalid_content_length"
    assert upstream.requests == []


async def test_session_stream_lying_small_stops_pulling() -> None:
    upstream = Upstream(json_answer({"h": "h"}))
    stream = CountingStream(chunks=10_000, chunk_size=MIB)
    async with upstream.client() as client:
        with pytest.raises(MediaValidationError) as caught:
            await upload_file_to_session(
                client, upload_session_id=SESSION, file=stream, content_length=2 * MIB
            )
    assert caught.value.code == "invalid_content_length"
    assert stream.pulled == 3


async def test_session_stream_past_the_64_mib_cap() -> None:
    upstream = Upstream(json_answer({"h": "h"}))
    stream = CountingStream(chunks=10_000, chunk_size=MIB)
    async with upstream.client() as client:
        with pytest.raises(MediaValidationError) as caught:
            await upload_file_to_session(
                client, upload_session_id=SESSION, file=stream, content_length=MAX_SESSION_BYTES
            )
    assert caught.value.code == "upload_too_large"
    assert stream.pulled == 65


@pytest.mark.parametrize(
    ("kwargs", "code"),
    [
        ({"content_length": MAX_SESSION_BYTES + 1}, "upload_too_large"),
        ({"file_offset": MAX_SESSION_BYTES - 1, "content_length": 2}, "upload_too_large"),
        ({"file_offset": -1}, "invalid_file_offset"),
        ({"file_offset": "0"}, "invalid_file_offset"),
        ({"file_offset": True}, "invalid_file_offset"),
        ({"content_length": -5}, "invalid_content_length"),
        ({"content_length": 0}, "invalid_content_length"),
        ({"file": b"abc", "content_length": 4}, "invalid_content_length"),
        ({"file": "abc"}, "invalid_file"),
        ({"max_bytes": MAX_SESSION_BYTES + 1}, "invalid_max_bytes"),
    ],
)
async def test_session_upload_rejections(kwargs: dict[str, object], code: str) -> None:
    upstream = Upstream(json_answer({"h": "h"}))
    arguments: dict[str, object] = {
        "upload_session_id": SESSION,
        "file": CountingStream(chunks=1, chunk_size=1),
        "content_length": 1,
        **kwargs,
    }
    async with upstream.client() as client:
        with pytest.raises(MediaValidationError) as caught:
            await upload_file_to_session(client, **arguments)  # type: ignore[arg-type]
    assert caught.value.code == code
    assert upstream.requests == []


# --- path-parameter rules

UNSAFE = [
    "",
    " ",
    "\t",
    "..",
    ".",
    "a/b",
    "a\\b",
    "a?b",
    "a#b",
    "a%2Fb",
    "%2e%2e",
    "%252e%252e",
    "a b",
    "a\x00b",
    "a\x1fb",
    "a\x7fb",
    "http://x",
    "../etc",
    "a\nb",
    "١٢٣",
]


@pytest.mark.parametrize("value", [*UNSAFE, "abc", "12 3", "1.2", "1:2", None, 12])
async def test_digit_ids_reject_everything_but_ascii_digits(value: object) -> None:
    upstream = Upstream(json_answer({"id": SESSION}))
    async with upstream.client() as client:
        with pytest.raises(MediaValidationError) as caught:
            await create_upload_session(
                client,
                app_id=value,
                file_name="f",
                file_length=1,
                file_type="a/b",  # type: ignore[arg-type]
            )
    assert caught.value.code == "invalid_app_id"
    assert upstream.requests == []


@pytest.mark.parametrize("value", [*UNSAFE, "a:b", None, 5])
async def test_media_id_rules(value: object) -> None:
    upstream = Upstream(json_answer({"success": True}))
    async with upstream.client() as client:
        with pytest.raises(MediaValidationError) as caught:
            await delete_media(client, media_id=value)  # type: ignore[arg-type]
    assert caught.value.code == "invalid_media_id"
    assert upstream.requests == []


@pytest.mark.parametrize("value", [*UNSAFE, "upload:a?sig=1", None])
async def test_session_id_rules(value: object) -> None:
    upstream = Upstream(json_answer({"id": "x", "file_offset": 0}))
    async with upstream.client() as client:
        with pytest.raises(MediaValidationError) as caught:
            await get_upload_session(client, upload_session_id=value)  # type: ignore[arg-type]
    assert caught.value.code == "invalid_upload_session_id"
    assert upstream.requests == []


MEDIA_ALPHABET = string.ascii_letters + string.digits + "_-"


@settings(max_examples=150, deadline=None)
@given(value=st.text(min_size=1, max_size=40))
async def test_media_id_accepts_exactly_its_alphabet(value: str) -> None:
    upstream = Upstream(json_answer({"success": True}))
    expected_ok = all(ch in MEDIA_ALPHABET for ch in value)
    async with upstream.client() as client:
        if expected_ok:
            assert await delete_media(client, media_id=value) is True
            [(request, _)] = upstream.requests
            assert request.url.raw_path == f"/{VERSION}/{value}".encode()
        else:
            with pytest.raises(MediaValidationError):
                await delete_media(client, media_id=value)
            assert upstream.requests == []


@settings(max_examples=150, deadline=None)
@given(value=st.text(alphabet=st.sampled_from(MEDIA_ALPHABET + ":./%?#\\ \x00"), min_size=1))
async def test_session_id_segment_encodes_only_the_colon(value: str) -> None:
    upstream = Upstream(json_answer({"id": "x", "file_offset": 0}))
    safe = all(ch in MEDIA_ALPHABET + ":" for ch in value) and len(value) <= 2048
    async with upstream.client() as client:
        if safe:
            await get_upload_session(client, upload_session_id=value)
            [(request, _)] = upstream.requests
            segment = value.replace(":", "%3A")
            assert request.url.raw_path == f"/{VERSION}/{segment}".encode()
        else:
            with pytest.raises(MediaValidationError):
                await get_upload_session(client, upload_session_id=value)
            assert upstream.requests == []


async def test_ids_longer_than_2048_are_rejected() -> None:
    upstream = Upstream(json_answer({}))
    async with upstream.client() as client:
        with pytest.raises(MediaValidationError):
            await download_media(client, media_id="a" * 2049)
    assert upstream.requests == []


async def test_download_media_checks_the_phone_number_id() -> None:
    upstream = Upstream(json_answer({}))
    async with upstream.client() as client:
        with pytest.raises(MediaValidationError) as caught:
            await download_media(client, media_id="1", phone_number_id="12/3")
    assert caught.value.code == "invalid_phone_number_id"


# --- public surface


def test_all_is_complete() -> None:
    public = {name for name in vars(svc.media) if not name.startswith("_")}
    assert set(svc.media.__all__) == public
    assert sorted(svc.media.__all__, key=str.casefold) == sorted(
        svc.media.__all__, key=str.casefold
    )
    for name in svc.media.__all__:
        assert getattr(svc.media, name) is not None


def test_error_tree() -> None:
    from svc.media import MediaCryptoError, MediaError, MediaIntegrityError

    for cls in (MediaValidationError, MediaCryptoError, MediaIntegrityError):
        assert issubclass(cls, MediaError)
    assert not issubclass(MediaIntegrityError, MediaCryptoError)
    assert MediaValidationError("c", "m").code == "c"


def test_httpx_is_the_multipart_encoder() -> None:
    from svc.media._bodies import multipart_envelope

    prefix, suffix, header = multipart_envelope(
        fields={"a": "1"}, file_field="file", filename='x"y.jpg', content_type="image/jpeg"
    )
    boundary = header.split("boundary=")[1]
    assert suffix == f"\r\n--{boundary}--\r\n".encode()
    assert b'filename="x%22y.jpg"' in prefix
    request = httpx.Request(
        "POST", "https://x.test", headers={"Content-Type": header}, content=prefix + suffix
    )
    assert request.content.count(boundary.encode()) == 3
