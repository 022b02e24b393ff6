"""Local-path upload-and-send helpers: two requests on success, zero on every rejection."""

from __future__ import annotations

import json
import os
from pathlib import Path

import httpx
import pytest

from svc.graph import DEFAULT_API_VERSION, GraphRequestValidationError
from svc.media import (
    MediaValidationError,
    upload_and_send_audio,
    upload_and_send_document,
    upload_and_send_image,
    upload_and_send_sticker,
    upload_and_send_video,
)

from ._fakes import Upstream

PHONE = "106540352242922"
TO = "15551234567"


def answer(request: httpx.Request, body: bytes) -> httpx.Response:
    if request.url.path.endswith("/media"):
        return httpx.Response(200, json={"id": "4490709327384033"})
    return httpx.Response(
        200,
        json={
            "messaging_product": "whatsapp",
            "contacts": [{"input": TO, "wa_id": TO}],
            "messages": [{"id": "wamid.HBgLMTU1NTEyMzQ1NjcVAgARGBI"}],
        },
    )


@pytest.mark.parametrize(
    ("helper", "name", "mime", "kind", "extra"),
    [
        (upload_and_send_image, "photo.JPG", "image/jpeg", "image", {"caption": "hi"}),
        (upload_and_send_video, "clip.mp4", "video/mp4", "video", {}),
        (upload_and_send_audio, "note.ogg", "audio/ogg", "audio", {"voice": True}),
        (
            upload_and_send_document,
            "menu.pdf",
            "application/pdf",
            "document",
            {"filename": "Menu.pdf"},
        ),
        (upload_and_send_sticker, "s.webp", "image/webp", "sticker", {}),
    ],
)
async def test_two_requests_upload_then_send(
    tmp_path: Path, helper: object, name: str, mime: str, kind: str, extra: dict[str, object]
) -> None:
    path = tmp_path / name
    path.write_bytes(b"\x01\x02media" * 50)
    upstream = Upstream(answer)
    assert callable(helper)
    async with upstream.client() as client:
        result = await helper(client, phone_number_id=PHONE, path=path, to=TO, **extra)
    assert result.media_id == "4490709327384033"
    assert result.send.message_id == "wamid.HBgLMTU1NTEyMzQ1NjcVAgARGBI"
    upload, send = upstream.requests
    assert upload[0].url.path == f"/{DEFAULT_API_VERSION}/{PHONE}/media"
    assert f"Content-Type: {mime}".encode() in upload[1]
    assert b"\x01\x02media" * 50 in upload[1]
    assert str(tmp_path).encode() not in upload[1]  # the wire never carries the local path
    assert send[0].url.path == f"/{DEFAULT_API_VERSION}/{PHONE}/messages"
    payload = json.loads(send[1])
    assert payload["type"] == kind
    assert payload[kind] == {"id": "4490709327384033", **extra}
    assert payload["to"] == TO


async def test_str_paths_work(tmp_path: Path) -> None:
    path = tmp_path / "a.png"
    path.write_bytes(b"png")
    upstream = Upstream(answer)
    async with upstream.client() as client:
        await upload_and_send_image(client, phone_number_id=PHONE, path=str(path), to=TO)
    assert len(upstream.requests) == 2


def rejected_paths(tmp_path: Path) -> list[tuple[str, str]]:
    (tmp_path / "empty.jpg").write_bytes(b"")
    (tmp_path / "big.jpg").write_bytes(b"x" * 2000)
    (tmp_path / "dir.jpg").mkdir()
    (tmp_path / "note.gif").write_bytes(b"gif")
    (tmp_path / "fifo.jpg").exists() or os.mkfifo(tmp_path / "fifo.jpg")
    return [
        ("", "invalid_path"),
        ("   ", "invalid_path"),
        (f"{tmp_path}/a\x00.jpg", "invalid_path"),
        (f"{tmp_path}/a\x07.jpg", "invalid_path"),
        (f"{tmp_path}/a\n.jpg", "invalid_path"),
        (f"{tmp_path}/../{tmp_path.name}/big.jpg", "invalid_path"),
        (f"{tmp_path}\\..\\big.jpg", "invalid_path"),
        (f"{tmp_path}/note.gif", "unsupported_extension"),
        (f"{tmp_path}/noext", "unsupported_extension"),
        (f"{tmp_path}/dir.jpg", "invalid_file"),
        (f"{tmp_path}/missing.jpg", "invalid_file"),
        (f"{tmp_path}/empty.jpg", "invalid_file"),
        (f"{tmp_path}/fifo.jpg", "invalid_file"),
        (f"{tmp_path}/big.jpg", "upload_too_large"),
    ]


async def test_rejections_make_no_request_and_never_echo_the_path(tmp_path: Path) -> None:
    upstream = Upstream(answer)
    async with upstream.client() as client:
        for path, code in rejected_paths(tmp_path):
            with pytest.raises(MediaValidationError) as caught:
                await upload_and_send_image(
                    client, phone_number_id=PHONE, path=path, to=TO, max_bytes=1000
                )
            assert caught.value.code == code, path
            text = f"{caught.value} {caught.value!r}"
            assert str(tmp_path) not in text
            assert "jpg" not in text.replace(".jpg, .jpeg", "")
    assert upstream.requests == []


@pytest.mark.parametrize("path", [b"/tmp/x.jpg", None, 5])
async def test_path_must_be_text(path: object) -> None:
    upstream = Upstream(answer)
    async with upstream.client() as client:
        with pytest.raises(MediaValidationError) as caught:
            await upload_and_send_image(client, phone_number_id=PHONE, path=path, to=TO)  # type: ignore[arg-type]
    assert caught.value.code == "invalid_path"


async def test_bad_message_fields_cost_no_upload(tmp_path: Path) -> None:
    path = tmp_path / "a.jpg"
    path.write_bytes(b"jpg")
    upstream = Upstream(answer)
    async with upstream.client() as client:
        with pytest.raises(GraphRequestValidationError):
            await upload_and_send_image(client, phone_number_id=PHONE, path=path, to="not-a-phone")
        with pytest.raises(GraphRequestValidationError):
            await upload_and_send_image(
                client, phone_number_id=PHONE, path=path, to=TO, caption="x" * 1025
            )
    assert upstream.requests == []


async def test_document_extension_is_case_insensitive_and_sticker_is_webp_only(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.PDF").write_bytes(b"%PDF")
    (tmp_path / "a.png").write_bytes(b"png")
    upstream = Upstream(answer)
    async with upstream.client() as client:
        await upload_and_send_document(
            client, phone_number_id=PHONE, path=tmp_path / "a.PDF", to=TO
        )
        with pytest.raises(MediaValidationError) as caught:
            await upload_and_send_sticker(
                client, phone_number_id=PHONE, path=tmp_path / "a.png", to=TO
            )
    assert caught.value.code == "unsupported_extension"
    assert len(upstream.requests) == 2


# The platform's supported media types, each extension with the MIME type it must be sent as.
PLATFORM_TYPES = [
    ("image", ".jpg", "image/jpeg"),
    ("image", ".jpeg", "image/jpeg"),
    ("image", ".png", "image/png"),
    ("video", ".mp4", "video/mp4"),
    ("video", ".3gp", "video/3gpp"),
    ("audio", ".aac", "audio/aac"),
    ("audio", ".amr", "audio/amr"),
    ("audio", ".mp3", "audio/mpeg"),
    ("audio", ".m4a", "audio/mp4"),
    ("audio", ".ogg", "audio/ogg"),
    ("audio", ".opus", "audio/ogg"),
    ("document", ".txt", "text/plain"),
    ("document", ".pdf", "application/pdf"),
    ("document", ".doc", "application/msword"),
    (
        "document",
        ".docx",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ),
    ("document", ".xls", "application/vnd.ms-excel"),
    ("document", ".xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
    ("document", ".ppt", "application/vnd.ms-powerpoint"),
    (
        "document",
        ".pptx",
        "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    ),
    ("sticker", ".webp", "image/webp"),
]
HELPERS = {
    "image": upload_and_send_image,
    "video": upload_and_send_video,
    "audio": upload_and_send_audio,
    "document": upload_and_send_document,
    "sticker": upload_and_send_sticker,
}


@pytest.mark.parametrize(("kind", "extension", "mime"), PLATFORM_TYPES)
async def test_each_extension_is_uploaded_as_its_platform_type_under_a_kind_name(
    tmp_path: Path, kind: str, extension: str, mime: str
) -> None:
    path = tmp_path / f"Private Name{extension.upper()}"
    path.write_bytes(b"media")
    upstream = Upstream(answer)
    async with upstream.client() as client:
        await HELPERS[kind](client, phone_number_id=PHONE, path=path, to=TO)
    (_, body), (_, sent) = upstream.requests
    assert b'name="type"\r\n\r\n' + mime.encode() + b"\r\n" in body
    assert f'name="file"; filename="{kind}{extension}"\r\nContent-Type: {mime}\r\n'.encode() in body
    assert b"Private" not in body  # the local name stays local
    assert json.loads(sent)["type"] == kind


@pytest.mark.parametrize(
    ("kind", "name", "maximum"),
    [
        ("image", "photo.jpg", 5 * 1024 * 1024),
        ("sticker", "sticker.webp", 500 * 1024),
        ("video", "clip.mp4", 16 * 1024 * 1024),
        ("audio", "note.ogg", 16 * 1024 * 1024),
        ("document", "menu.pdf", 16 * 1024 * 1024),
    ],
)
async def test_a_file_past_its_kinds_platform_limit_is_refused_before_any_request(
    tmp_path: Path, kind: str, name: str, maximum: int
) -> None:
    """The platform takes images up to 5 MiB and stickers up to 500 KiB, not 16 MiB."""
    at_limit, past_limit = tmp_path / f"a-{name}", tmp_path / f"b-{name}"
    for path, size in ((at_limit, maximum), (past_limit, maximum + 1)):
        if kind == "sticker":  # the 500 KiB are an animated sticker's
            _webp(path, size, animated=True)
        else:
            with path.open("wb") as file:
                file.truncate(size)  # sparse: no bytes written
    upstream = Upstream(answer)
    async with upstream.client() as client:
        await HELPERS[kind](client, phone_number_id=PHONE, path=at_limit, to=TO)
        assert len(upstream.requests) == 2
        with pytest.raises(MediaValidationError) as too_large:
            await HELPERS[kind](client, phone_number_id=PHONE, path=past_limit, to=TO)
        with pytest.raises(MediaValidationError) as over_cap:
            await HELPERS[kind](
                client, phone_number_id=PHONE, path=at_limit, to=TO, max_bytes=maximum + 1
            )
    assert too_large.value.code == "upload_too_large"
    assert over_cap.value.code == "invalid_max_bytes"
    assert len(upstream.requests) == 2


def _webp(path: Path, size: int, *, animated: bool) -> Path:
    """A WebP header (RIFF, WEBP, VP8X with its animation flag) padded to ``size`` bytes."""
    flags = b"\x02" if animated else b"\x00"
    header = b"RIFF" + (size - 8).to_bytes(4, "little") + b"WEBPVP8X" + (10).to_bytes(4, "little")
    path.write_bytes((header + flags).ljust(size, b"\x00"))
    return path


async def test_a_static_sticker_is_held_to_100_kib_an_animated_one_to_500_kib(
    tmp_path: Path,
) -> None:
    upstream = Upstream(answer)
    async with upstream.client() as client:
        for path in (
            _webp(tmp_path / "static.webp", 100 * 1024, animated=False),
            _webp(tmp_path / "animated.webp", 500 * 1024, animated=True),
        ):
            await upload_and_send_sticker(client, phone_number_id=PHONE, path=path, to=TO)
        assert len(upstream.requests) == 4
        with pytest.raises(MediaValidationError) as caught:
            await upload_and_send_sticker(
                client,
                phone_number_id=PHONE,
                path=_webp(tmp_path / "big.webp", 100 * 1024 + 1, animated=False),
                to=TO,
            )
    assert caught.value.code == "upload_too_large"
    assert len(upstream.requests) == 4
