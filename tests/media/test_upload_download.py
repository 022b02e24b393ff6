"""upload_media, download_media, download_media_bytes, delete_media on httpx.MockTransport."""

from __future__ import annotations

import base64
import hashlib
import io
import mmap
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from svc.graph import DEFAULT_API_VERSION, GraphApiError, GraphClient
from svc.media import (
    MAX_DOWNLOAD_BYTES,
    MAX_SESSION_BYTES,
    MAX_UPLOAD_BYTES,
    MEDIA_HOSTS,
    MediaHostError,
    MediaIntegrityError,
    MediaValidationError,
    delete_media,
    download_media,
    download_media_bytes,
    upload_media,
)

from ._fakes import TOKEN, CountingReader, CountingStream, Upstream, json_answer

PHONE = "106540352242922"
MIB = 1024 * 1024


def multipart_parts(request: httpx.Request, body: bytes) -> dict[str, tuple[bytes, bytes]]:
    """Split a multipart body by the boundary of its Content-Type: name -> (headers, data)."""
    content_type = request.headers["content-type"]
    assert content_type.startswith("multipart/form-data; boundary=")
    boundary = content_type.split("boundary=", 1)[1].encode()
    assert body.endswith(b"--" + boundary + b"--\r\n")
    parts: dict[str, tuple[bytes, bytes]] = {}
    for raw in body.split(b"--" + boundary)[1:-1]:
        headers, _, data = raw[2:-2].partition(b"\r\n\r\n")
        name = headers.split(b'name="', 1)[1].split(b'"', 1)[0].decode()
        parts[name] = (headers, data)
    return parts


# --- upload_media


@pytest.mark.parametrize(
    "make_file",
    [
        lambda data: data,
        lambda data: bytearray(data),
        lambda data: memoryview(data),
        lambda data: io.BytesIO(data),
    ],
)
async def test_upload_wire(make_file: object) -> None:
    upstream = Upstream(json_answer({"id": "1234567890"}))
    data = b"\xff\xd8jpeg-bytes" * 100
    assert callable(make_file)
    async with upstream.client() as client:
        result = await upload_media(
            client,
            phone_number_id=PHONE,
            file=make_file(data),
            mime_type="image/jpeg",
            filename="photo.jpg",
        )
    assert result.id == "1234567890"
    [(request, body)] = upstream.requests
    assert request.method == "POST"
    assert request.url == f"https://graph.test/{DEFAULT_API_VERSION}/{PHONE}/media"
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert int(request.headers["content-length"]) == len(body)
    assert "transfer-encoding" not in request.headers
    parts = multipart_parts(request, body)
    assert list(parts) == ["messaging_product", "type", "file"]
    assert parts["messaging_product"][1] == b"whatsapp"
    assert parts["type"][1] == b"image/jpeg"
    file_headers, file_data = parts["file"]
    assert b'filename="photo.jpg"' in file_headers
    assert b"Content-Type: image/jpeg" in file_headers
    assert file_data == data


@pytest.mark.parametrize("view", [False, True])
async def test_a_buffer_changed_after_the_call_is_sent_as_it_was(view: bool) -> None:
    """Bytes-like files are copied once: a change before the transport reads them is not sent."""
    buffer = bytearray(b"original" * 64)
    sent: list[bytes] = []

    class OverwriteThenRead(httpx.AsyncBaseTransport):  # MockTransport reads the body first
        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            buffer[:] = b"X" * len(buffer)  # same size: only a copy keeps the original bytes
            sent.append(await request.aread())
            return httpx.Response(200, json={"id": "9"})

    async with GraphClient(access_token=TOKEN, transport=OverwriteThenRead()) as client:
        await upload_media(
            client,
            phone_number_id=PHONE,
            file=memoryview(buffer) if view else buffer,
            mime_type="image/png",
        )
    [body] = sent
    assert b"original" * 64 in body
    assert b"X" * 64 not in body


async def test_a_file_like_is_read_from_its_position(tmp_path: Path) -> None:
    """Only the bytes after the current position are sent, and the size counts only those."""
    path = tmp_path / "clip.bin"
    path.write_bytes(b"skip-me|" + b"payload" * 100)
    upstream = Upstream(json_answer({"id": "9"}))
    async with upstream.client() as client:
        with path.open("rb") as file:
            file.seek(len(b"skip-me|"))
            await upload_media(client, phone_number_id=PHONE, file=file, mime_type="video/mp4")
        memory = io.BytesIO(b"skip-me|" + b"payload" * 100)
        memory.read(len(b"skip-me|"))
        await upload_media(client, phone_number_id=PHONE, file=memory, mime_type="video/mp4")
    for request, body in upstream.requests:
        assert multipart_parts(request, body)["file"][1] == b"payload" * 100


async def test_upload_boundary_is_generated_per_request() -> None:
    upstream = Upstream(json_answer({"id": "1"}))
    async with upstream.client() as client:
        for _ in range(2):
            await upload_media(client, phone_number_id=PHONE, file=b"abc", mime_type="image/png")
    first, second = (r.headers["content-type"] for r, _ in upstream.requests)
    assert first != second


async def test_upload_async_stream_with_declared_size() -> None:
    upstream = Upstream(json_answer({"id": "9"}))
    stream = CountingStream(chunks=4, chunk_size=1000)
    async with upstream.client() as client:
        await upload_media(
            client, phone_number_id=PHONE, file=stream, file_size=4000, mime_type="video/mp4"
        )
    [(request, body)] = upstream.requests
    assert multipart_parts(request, body)["file"][1] == b"x" * 4000
    assert stream.pulled == 4


async def test_upload_stream_claiming_small_but_delivering_more_stops_pulling() -> None:
    upstream = Upstream(json_answer({"id": "9"}))
    stream = CountingStream(chunks=1000, chunk_size=64 * 1024)  # 62.5 MiB on offer
    async with upstream.client() as client:
        with pytest.raises(MediaValidationError) as caught:
            await upload_media(
                client,
                phone_number_id=PHONE,
                file=stream,
                file_size=100_000,
                mime_type="video/mp4",
            )
    assert caught.value.code == "invalid_file"
    assert stream.pulled == 2  # 128 KiB pulled: the first chunk past 100 000 bytes ends it


async def test_upload_stream_overrunning_the_cap_is_upload_too_large() -> None:
    upstream = Upstream(json_answer({"id": "9"}))
    stream = CountingStream(chunks=1000, chunk_size=MIB)
    async with upstream.client() as client:
        with pytest.raises(MediaValidationError) as caught:
            await upload_media(
                client,
                phone_number_id=PHONE,
                file=stream,
                file_size=MAX_UPLOAD_BYTES,
                mime_type="video/mp4",
            )
    assert caught.value.code == "upload_too_large"
    assert stream.pulled == 17  # never more than one chunk past the 16 MiB cap


async def test_upload_stream_claiming_too_large_sends_nothing() -> None:
    upstream = Upstream(json_answer({"id": "9"}))
    stream = CountingStream(chunks=1, chunk_size=10)
    async with upstream.client() as client:
        with pytest.raises(MediaValidationError) as caught:
            await upload_media(
                client,
                phone_number_id=PHONE,
                file=stream,
                file_size=MAX_UPLOAD_BYTES + 1,
                mime_type="video/mp4",
            )
    assert caught.value.code == "upload_too_large"
    assert stream.pulled == 0
    assert upstream.requests == []


async def test_upload_stream_ending_short() -> None:
    upstream = Upstream(json_answer({"id": "9"}))
    async with upstream.client() as client:
        with pytest.raises(MediaValidationError) as caught:
            await upload_media(
                client,
                phone_number_id=PHONE,
                file=CountingStream(chunks=1, chunk_size=10),
                file_size=11,
                mime_type="video/mp4",
            )
    assert caught.value.code == "invalid_file"


async def test_upload_reader_reads_at_most_one_byte_past_its_size() -> None:
    upstream = Upstream(json_answer({"id": "9"}))
    reader = CountingReader(total=50 * MIB)
    async with upstream.client() as client:
        with pytest.raises(MediaValidationError):
            await upload_media(
                client,
                phone_number_id=PHONE,
                file=reader,
                file_size=3 * MIB,
                mime_type="video/mp4",
            )
    assert reader.read_bytes == 3 * MIB + 1


@pytest.mark.parametrize("max_bytes", [1, 1000])
async def test_upload_cap_override(max_bytes: int) -> None:
    upstream = Upstream(json_answer({"id": "9"}))
    async with upstream.client() as client:
        with pytest.raises(MediaValidationError) as caught:
            await upload_media(
                client,
                phone_number_id=PHONE,
                file=b"x" * (max_bytes + 1),
                mime_type="image/png",
                max_bytes=max_bytes,
            )
    assert caught.value.code == "upload_too_large"
    assert upstream.requests == []


def test_the_caps_are_the_documented_sizes() -> None:
    """The tests below hold each operation to its constant; this holds the constants to docs."""
    caps = (MAX_UPLOAD_BYTES, MAX_DOWNLOAD_BYTES, MAX_SESSION_BYTES)
    assert caps == (16 * MIB, 16 * MIB, 64 * MIB)


async def test_upload_of_16_mib_bytes_is_allowed_and_one_more_byte_is_not() -> None:
    upstream = Upstream(json_answer({"id": "9"}))
    async with upstream.client() as client:
        await upload_media(
            client, phone_number_id=PHONE, file=bytes(MAX_UPLOAD_BYTES), mime_type="image/png"
        )
        with pytest.raises(MediaValidationError) as caught:
            await upload_media(
                client,
                phone_number_id=PHONE,
                file=bytes(MAX_UPLOAD_BYTES + 1),
                mime_type="image/png",
            )
    assert caught.value.code == "upload_too_large"
    assert len(upstream.requests) == 1


@pytest.mark.parametrize("max_bytes", [0, -1, MAX_UPLOAD_BYTES + 1, True, 1.5, "10"])
async def test_cap_override_must_be_a_positive_int_within_the_maximum(max_bytes: object) -> None:
    upstream = Upstream(json_answer({"id": "9"}))
    async with upstream.client() as client:
        with pytest.raises(MediaValidationError) as caught:
            await upload_media(
                client,
                phone_number_id=PHONE,
                file=b"x",
                mime_type="image/png",
                max_bytes=max_bytes,  # type: ignore[arg-type]
            )
    assert caught.value.code == "invalid_max_bytes"


async def empty_async_gen() -> AsyncIterator[bytes]:
    yield b"x"


@pytest.mark.parametrize(
    "file",
    [
        "text",
        {"file": b"x"},
        None,
        42,
        [b"x"],
        memoryview(b"\x00" * 8).cast("H"),
        memoryview(bytes(8)).cast("B", (2, 4)),
        io.StringIO("text"),
        b"",
    ],
)
async def test_upload_rejects_unsupported_files(file: object) -> None:
    upstream = Upstream(json_answer({"id": "9"}))
    async with upstream.client() as client:
        with pytest.raises(MediaValidationError) as caught:
            await upload_media(
                client,
                phone_number_id=PHONE,
                file=file,
                mime_type="image/png",  # type: ignore[arg-type]
            )
    assert caught.value.code == "invalid_file"
    assert upstream.requests == []


async def test_upload_rejects_shared_memory() -> None:
    upstream = Upstream(json_answer({"id": "9"}))
    shared = mmap.mmap(-1, 16)
    view = memoryview(shared)
    try:
        async with upstream.client() as client:
            for file in (shared, view):
                with pytest.raises(MediaValidationError) as caught:
                    await upload_media(
                        client,
                        phone_number_id=PHONE,
                        file=file,  # type: ignore[arg-type]
                        mime_type="image/png",
                    )
                assert caught.value.code == "invalid_file"
    finally:
        view.release()
        shared.close()
    assert upstream.requests == []


async def test_upload_async_stream_needs_a_size() -> None:
    upstream = Upstream(json_answer({"id": "9"}))
    async with upstream.client() as client:
        with pytest.raises(MediaValidationError) as caught:
            await upload_media(
                client, phone_number_id=PHONE, file=empty_async_gen(), mime_type="image/png"
            )
    assert caught.value.code == "invalid_file"


@pytest.mark.parametrize(
    ("kwargs", "code"),
    [
        ({"mime_type": "jpeg"}, "invalid_mime_type"),
        ({"mime_type": "image/jpeg\r\nX: y"}, "invalid_mime_type"),
        ({"filename": "../x.jpg"}, "invalid_file_name"),
        ({"filename": "a\x00b"}, "invalid_file_name"),
        ({"messaging_product": "sms"}, "invalid_messaging_product"),
        ({"phone_number_id": "12a"}, "invalid_phone_number_id"),
    ],
)
async def test_upload_rejects_bad_arguments(kwargs: dict[str, object], code: str) -> None:
    upstream = Upstream(json_answer({"id": "9"}))
    arguments: dict[str, object] = {
        "phone_number_id": PHONE,
        "file": b"x",
        "mime_type": "image/jpeg",
        **kwargs,
    }
    async with upstream.client() as client:
        with pytest.raises(MediaValidationError) as caught:
            await upload_media(client, **arguments)  # type: ignore[arg-type]
    assert caught.value.code == code
    assert upstream.requests == []


@pytest.mark.parametrize("answer", [{}, {"id": 5}, {"id": ""}])
async def test_upload_rejects_malformed_answers(answer: object) -> None:
    upstream = Upstream(json_answer(answer))
    async with upstream.client() as client:
        with pytest.raises(MediaValidationError) as caught:
            await upload_media(client, phone_number_id=PHONE, file=b"x", mime_type="image/png")
    assert caught.value.code == "invalid_response"


async def test_upload_upstream_error_keeps_its_graph_type() -> None:
    upstream = Upstream(json_answer({"error": {"code": 100, "message": "bad"}}, status=400))
    async with upstream.client() as client:
        with pytest.raises(GraphApiError):
            await upload_media(client, phone_number_id=PHONE, file=b"x", mime_type="image/png")


# --- download_media (metadata)

META = {
    "messaging_product": "whatsapp",
    "url": "https://lookaside.fbsbx.com/whatsapp_business/attachments/?mid=1&ext=2",
    "mime_type": "image/jpeg",
    "sha256": "a" * 64,
    "file_size": 303833,
    "id": "1037543291543636",
}


async def test_download_media_metadata() -> None:
    upstream = Upstream(json_answer(META))
    async with upstream.client() as client:
        info = await download_media(client, media_id="1037543291543636")
    assert info.url == META["url"]
    assert (info.mime_type, info.sha256, info.file_size) == ("image/jpeg", "a" * 64, 303833)
    [(request, _)] = upstream.requests
    assert request.method == "GET"
    assert request.url.path == f"/{DEFAULT_API_VERSION}/1037543291543636"
    assert "url" not in repr(info).split("(", 1)[1].split("=")[0]


@pytest.mark.parametrize(
    "change",
    [{"sha256": "zz"}, {"url": "ftp://x"}, {"file_size": -1}, {"mime_type": None}, {"id": None}],
)
async def test_download_media_rejects_malformed_metadata(change: dict[str, object]) -> None:
    upstream = Upstream(json_answer({**META, **change}))
    async with upstream.client() as client:
        with pytest.raises(MediaValidationError) as caught:
            await download_media(client, media_id="1037543291543636")
    assert caught.value.code == "invalid_response"


# --- download_media_bytes


def bytes_answer(stream: httpx.AsyncByteStream, headers: dict[str, str] | None = None) -> Upstream:
    return Upstream(lambda request, body: httpx.Response(200, headers=headers or {}, stream=stream))


async def test_download_bytes_with_authorization_and_hash() -> None:
    data = b"media-bytes" * 1000
    upstream = Upstream(
        lambda request, body: httpx.Response(
            200, content=data, headers={"Content-Type": "image/jpeg"}
        )
    )
    async with upstream.client() as client:
        hex_digest = hashlib.sha256(data).hexdigest()
        b64_digest = base64.b64encode(hashlib.sha256(data).digest()).decode()
        for expected in (None, hex_digest, hex_digest.upper(), b64_digest):
            result = await download_media_bytes(
                client, url=str(META["url"]), expected_sha256=expected
            )
            assert result.content == data
            assert result.content_type == "image/jpeg"
    request, _ = upstream.requests[0]
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert request.url == httpx.URL(str(META["url"]))


async def test_download_bytes_hash_mismatch() -> None:
    upstream = Upstream(lambda request, body: httpx.Response(200, content=b"abc"))
    async with upstream.client() as client:
        with pytest.raises(MediaIntegrityError) as caught:
            await download_media_bytes(client, url=MEDIA_URL, expected_sha256="0" * 64)
    assert caught.value.code == "sha256_mismatch"


@pytest.mark.parametrize("expected", ["abc", "0" * 63, base64.b64encode(b"x" * 31).decode(), 5])
async def test_download_bytes_rejects_malformed_expected_hash(expected: object) -> None:
    upstream = Upstream(lambda request, body: httpx.Response(200, content=b"abc"))
    async with upstream.client() as client:
        with pytest.raises(MediaValidationError) as caught:
            await download_media_bytes(
                client,
                url=MEDIA_URL,
                expected_sha256=expected,  # type: ignore[arg-type]
            )
    assert caught.value.code == "invalid_sha256"
    assert upstream.requests == []


@pytest.mark.parametrize(
    "url",
    [
        "ftp://cdn.test/x",
        "file:///etc/passwd",
        "javascript:alert(1)",
        "https://user:pw@cdn.test/x",
        "https://cdn.test/x y",
        "https://cdn.test/\r\nx",
        "",
        "/relative",
        None,
    ],
)
async def test_download_bytes_rejects_bad_urls(url: object) -> None:
    upstream = Upstream(lambda request, body: httpx.Response(200, content=b"abc"))
    async with upstream.client() as client:
        with pytest.raises(MediaValidationError) as caught:
            await download_media_bytes(client, url=url)  # type: ignore[arg-type]
    assert caught.value.code == "invalid_url"
    assert upstream.requests == []


async def test_download_without_content_length_stops_at_the_cap() -> None:
    stream = CountingStream(chunks=100, chunk_size=MIB)  # 100 MiB on offer, no Content-Length
    upstream = bytes_answer(stream)
    async with upstream.client() as client:
        with pytest.raises(MediaValidationError) as caught:
            await download_media_bytes(client, url=MEDIA_URL)
    assert caught.value.code == "download_too_large"
    assert stream.pulled == MAX_DOWNLOAD_BYTES // MIB + 1  # the chunk that would cross is dropped


async def test_download_with_lying_small_content_length_stops_at_the_cap() -> None:
    stream = CountingStream(chunks=100, chunk_size=64 * 1024)
    upstream = bytes_answer(stream, {"Content-Length": "10"})
    async with upstream.client() as client:
        with pytest.raises(MediaValidationError) as caught:
            await download_media_bytes(client, url=MEDIA_URL, max_bytes=200_000)
    assert caught.value.code == "download_too_large"
    assert stream.pulled == 4  # 3 chunks (196 608 bytes) kept, the 4th would cross 200 000


async def test_download_with_large_content_length_reads_nothing() -> None:
    stream = CountingStream(chunks=1, chunk_size=10)
    upstream = bytes_answer(stream, {"Content-Length": str(MAX_DOWNLOAD_BYTES + 1)})
    async with upstream.client() as client:
        with pytest.raises(MediaValidationError) as caught:
            await download_media_bytes(client, url=MEDIA_URL)
    assert caught.value.code == "download_too_large"
    assert stream.pulled == 0


@pytest.mark.parametrize("declared", ["1" * 5000, "-1", "1e3", ""])
async def test_download_with_a_content_length_that_is_no_length_reads_nothing(
    declared: str,
) -> None:
    # ``int`` refuses past 4,300 digits: that used to escape as a ValueError.
    stream = CountingStream(chunks=1, chunk_size=10)
    upstream = bytes_answer(stream, {"Content-Length": declared})
    async with upstream.client() as client:
        with pytest.raises(MediaValidationError) as caught:
            await download_media_bytes(client, url=MEDIA_URL)
    assert caught.value.code == "invalid_response"
    assert stream.pulled == 0


async def test_download_body_shorter_than_content_length() -> None:
    upstream = bytes_answer(CountingStream(chunks=1, chunk_size=10), {"Content-Length": "20"})
    async with upstream.client() as client:
        with pytest.raises(MediaValidationError) as caught:
            await download_media_bytes(client, url=MEDIA_URL)
    assert caught.value.code == "invalid_response"


async def test_download_exactly_at_the_cap() -> None:
    upstream = bytes_answer(CountingStream(chunks=4, chunk_size=25))
    async with upstream.client() as client:
        result = await download_media_bytes(client, url=MEDIA_URL, max_bytes=100)
    assert result.content == b"x" * 100


async def test_download_refuses_content_encoding() -> None:
    upstream = bytes_answer(CountingStream(chunks=1, chunk_size=3), {"Content-Encoding": "gzip"})
    async with upstream.client() as client:
        with pytest.raises(MediaValidationError) as caught:
            await download_media_bytes(client, url=MEDIA_URL)
    assert caught.value.code == "invalid_response"
    request, _ = upstream.requests[0]
    assert request.headers["accept-encoding"] == "identity"


# --- delete_media


async def test_delete_media() -> None:
    upstream = Upstream(json_answer({"success": True}))
    async with upstream.client() as client:
        assert await delete_media(client, media_id="1037543291543636") is True
    [(request, _)] = upstream.requests
    expected = ("DELETE", f"/{DEFAULT_API_VERSION}/1037543291543636")
    assert (request.method, request.url.path) == expected


async def test_a_phone_number_id_is_sent_for_the_platform_to_check_ownership() -> None:
    upstream = Upstream(json_answer({**META, "success": True}))
    async with upstream.client() as client:
        await download_media(client, media_id="1037543291543636", phone_number_id=PHONE)
        await delete_media(client, media_id="1037543291543636", phone_number_id=PHONE)
        await download_media(client, media_id="1037543291543636")
    queries = [dict(request.url.params) for request, _ in upstream.requests]
    assert queries == [{"phone_number_id": PHONE}, {"phone_number_id": PHONE}, {}]


@pytest.mark.parametrize("answer", [{}, {"success": "true"}, {"success": 1}])
async def test_delete_media_requires_a_boolean(answer: object) -> None:
    upstream = Upstream(json_answer(answer))
    async with upstream.client() as client:
        with pytest.raises(MediaValidationError) as caught:
            await delete_media(client, media_id="1037543291543636")
    assert caught.value.code == "invalid_response"


MEDIA_URL = "https://lookaside.fbsbx.com/whatsapp_business/attachments/?mid=7"


@pytest.mark.parametrize(
    ("url", "hosts"),
    [
        ("http://lookaside.fbsbx.com/whatsapp_business/attachments/?mid=7", MEDIA_HOSTS),
        ("https://attacker.example/steal", MEDIA_HOSTS),
        ("https://lookaside.fbsbx.com.attacker.example/x", MEDIA_HOSTS),
        ("https://sub.lookaside.fbsbx.com/x", MEDIA_HOSTS),
        ("https://127.0.0.1/x", MEDIA_HOSTS),
        (MEDIA_URL, ("cdn.example",)),
        # IDNA labels, malformed or not, never raise idna's own error
        ("https://xn--zz/x", MEDIA_HOSTS),
        ("https://xn--.example/x", MEDIA_HOSTS),
        ("https://xn--abc.example/x", MEDIA_HOSTS),
        ("https://xn--ls8h.la/x", MEDIA_HOSTS),
        ("https://lookaside.xn--fbsbx-abc.com/x", MEDIA_HOSTS),
        ("https://lookasidé.fbsbx.com/x", MEDIA_HOSTS),
    ],
)
async def test_download_sends_the_token_only_over_https_to_media_hosts(
    url: str, hosts: frozenset[str]
) -> None:
    upstream = Upstream(lambda request, body: httpx.Response(200, content=b"abc"))
    async with upstream.client() as client:
        with pytest.raises(MediaHostError) as caught:
            await download_media_bytes(client, url=url, media_hosts=hosts)
    assert caught.value.code == "untrusted_media_url"
    assert upstream.requests == []  # no request, so the token went nowhere


async def test_download_media_hosts_are_configurable() -> None:
    upstream = Upstream(lambda request, body: httpx.Response(200, content=b"abc"))
    async with upstream.client() as client:
        result = await download_media_bytes(
            client, url="https://Media.Example/x", media_hosts=("media.example",)
        )
    assert result.content == b"abc"
    request, _ = upstream.requests[0]
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert {"lookaside.fbsbx.com", "mmg.whatsapp.net"} == MEDIA_HOSTS
