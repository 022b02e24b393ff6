"""Files uploaded from the dev page: kept under a media id, delivered in the platform's
shape, and fetched by the bot through ``svc.media``'s lookup and download."""

from __future__ import annotations

import hashlib
import struct
import sys
import types
import zlib
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from svc.dev import MAX_UPLOAD
from tests._support import doc_example

from .conftest import DevService, bot_reply, serving

pytestmark = pytest.mark.slow

KERRY = {"name": "Kerry", "phone": "16505551234"}


def png(width: int = 3, height: int = 2) -> bytes:
    """A real PNG image of ``width`` x ``height`` red pixels."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


async def _upload(
    service: DevService,
    content: bytes,
    content_type: str,
    filename: str = "red.png",
    body_type: str = "application/octet-stream",
) -> httpx.Response:
    async with service.client() as client:
        return await client.post(
            "/dev/api/upload",
            params={"filename": filename, "type": content_type},
            content=content,
            headers={"Content-Type": body_type},
        )


async def _act(service: DevService, **action: Any) -> dict[str, Any]:
    async with service.client() as client:
        response = await client.post("/dev/api/act", json={"user": KERRY, "action": action})
    assert response.status_code == 200, response.text
    record: dict[str, Any] = response.json()
    return record


async def test_an_uploaded_image_is_delivered_and_downloaded_by_the_bot(
    dev_service: DevService,
) -> None:
    image = png()
    digest = hashlib.sha256(image).hexdigest()
    uploaded = await _upload(dev_service, image, "image/png")
    assert uploaded.status_code == 200, uploaded.text
    fields = uploaded.json()
    assert fields["sha256"] == digest
    assert fields["file_size"] == len(image)
    assert fields["mime_type"] == "image/png"
    assert (dev_service.folder.path / "uploads" / fields["media_id"]).read_bytes() == image

    record = await _act(dev_service, kind="image", media_id=fields["media_id"], caption="Red")
    message = record["raw"]["entry"][0]["changes"][0]["value"]["messages"][0]
    assert message["type"] == "image"
    assert message["image"] == {
        "id": fields["media_id"],
        "mime_type": "image/png",
        "sha256": digest,
        "caption": "Red",
    }
    # The bot ran ctx.download_media: GET /{media-id}, then the URL it answered.
    answer = f"Got image: {len(image)} bytes, image/png, sha256 {digest}"
    await dev_service.wait_for(lambda r: bot_reply(r, answer))
    lookups = [
        r for r in dev_service.session.records()
        if r["type"] == "send" and r.get("method") == "GET"
    ]
    assert [r["path"] for r in lookups][1:] == ["/whatsapp_business/attachments/"]
    assert lookups[0]["path"].endswith(f"/{fields['media_id']}")
    assert lookups[0]["answer"]["url"].startswith("https://lookaside.fbsbx.com/")
    assert lookups[0]["answer"]["file_size"] == len(image)

    # The page's thumbnail: the image's own bytes, behind the token.
    async with dev_service.client() as client:
        thumbnail = await client.get(f"/dev/media/{fields['media_id']}")
    assert thumbnail.content == image
    assert thumbnail.headers["content-type"] == "image/png"
    async with httpx.AsyncClient(base_url=dev_service.url) as anonymous:
        assert (await anonymous.get(f"/dev/media/{fields['media_id']}")).status_code == 401


async def test_an_uploaded_document_carries_its_file_name(dev_service: DevService) -> None:
    content = b"%PDF-1.4\n% a tiny document\n"
    fields = (await _upload(dev_service, content, "application/pdf", "C:\\docs\\menu.pdf")).json()
    assert fields["filename"] == "menu.pdf"
    record = await _act(dev_service, kind="document", media_id=fields["media_id"])
    document = record["raw"]["entry"][0]["changes"][0]["value"]["messages"][0]["document"]
    assert document["filename"] == "menu.pdf"
    assert document["sha256"] == hashlib.sha256(content).hexdigest()
    answer = (
        f"Got menu.pdf: {len(content)} bytes, application/pdf, "
        f"sha256 {hashlib.sha256(content).hexdigest()}"
    )
    await dev_service.wait_for(lambda r: bot_reply(r, answer))
    async with dev_service.client() as client:  # only raster images are served to the page
        assert (await client.get(f"/dev/media/{fields['media_id']}")).status_code == 404


async def _raw_upload(service: DevService, head: str, body_chunks: int = 0) -> bytes:
    """The answer to an upload written on a raw socket (its body is never all sent)."""
    host, port = service.url.removeprefix("http://").split(":")
    stream = await trio.open_tcp_stream(host, int(port))
    async with stream:
        await stream.send_all(head.encode())
        for _ in range(body_chunks):  # chunked framing, 64 KiB a chunk
            await stream.send_all(b"10000\r\n" + b"\x00" * 65536 + b"\r\n")
        answer = b""
        while b"\r\n\r\n" not in answer:
            answer += await stream.receive_some()
    return answer


async def test_uploads_are_bounded_and_never_a_form(dev_service: DevService) -> None:
    token = dev_service.folder.token
    head = (
        "POST /dev/api/upload?type=image/png HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        "Content-Type: application/octet-stream\r\n"
        f"X-Svc-Dev-Token: {token}\r\n"
    )
    declared = await _raw_upload(dev_service, head + f"Content-Length: {MAX_UPLOAD + 1}\r\n\r\n")
    assert declared.startswith(b"HTTP/1.1 413")
    # No length declared: the cap holds while the bytes arrive.
    chunked = head + "Transfer-Encoding: chunked\r\n\r\n"
    streamed = await _raw_upload(dev_service, chunked, MAX_UPLOAD // 65536 + 1)
    assert streamed.startswith(b"HTTP/1.1 413")
    for form_type in ("text/plain", "multipart/form-data; boundary=x",
                      "application/x-www-form-urlencoded"):
        refused = await _upload(dev_service, b"x", "text/plain", body_type=form_type)
        assert refused.status_code == 415
    assert (await _upload(dev_service, b"", "image/png")).status_code == 400
    assert (await _upload(dev_service, b"x", "not a type")).status_code == 400
    async with dev_service.client() as client:
        missing = {"kind": "image", "media_id": "dev-media-0000000000000000"}
        unknown = await client.post("/dev/api/act", json={"user": KERRY, "action": missing})
        traversal = await client.get("/dev/media/..%2Fsecrets.env")
    assert unknown.status_code == 400
    assert "uploaded" in unknown.json()["error"]
    assert traversal.status_code == 404
    assert not (dev_service.folder.path / "uploads").exists()


async def test_the_docs_example_downloads_an_upload(tmp_path: Path) -> None:
    module = types.ModuleType("dev_doc_files")
    module.__dict__.update(doc_example("dev.md", "dev", "files"))
    sys.modules[module.__name__] = module
    try:
        async with serving(tmp_path, "dev_doc_files:bot") as service:
            fields = (await _upload(service, png(), "image/png")).json()
            await _act(service, kind="image", media_id=fields["media_id"])
            await service.wait_for(lambda r: bot_reply(r, f"{len(png())} bytes of image/png"))
    finally:
        del sys.modules[module.__name__]
