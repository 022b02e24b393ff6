"""``download_flow_media``: one PhotoPicker/DocumentPicker item, fetched (capped) and decrypted.

The CDN is an ``httpx.MockTransport``; the file is encrypted here the way the
platform does it (AES-256-CBC, PKCS#7, HMAC-SHA256 tag cut to 10 bytes).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from svc.flows import FlowMediaError, download_flow_media
from svc.graph import GraphClient
from svc.media import MediaIntegrityError, MediaValidationError

CDN = "https://mmg.whatsapp.net/v/t62/flow-upload.enc?ccb=11-4&oh=01_abc"


def encrypt_media(plaintext: bytes) -> tuple[bytes, dict[str, str]]:
    key, mac_key, iv = os.urandom(32), os.urandom(32), os.urandom(16)
    padder = padding.PKCS7(128).padder()
    padded = padder.update(plaintext) + padder.finalize()
    encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
    ciphertext = encryptor.update(padded) + encryptor.finalize()
    tag = hmac.new(mac_key, iv + ciphertext, hashlib.sha256).digest()[:10]
    encrypted = ciphertext + tag
    metadata = {
        "encryption_key": base64.b64encode(key).decode(),
        "hmac_key": base64.b64encode(mac_key).decode(),
        "iv": base64.b64encode(iv).decode(),
        "plaintext_hash": base64.b64encode(hashlib.sha256(plaintext).digest()).decode(),
        "encrypted_hash": base64.b64encode(hashlib.sha256(encrypted).digest()).decode(),
    }
    return encrypted, metadata


class Cdn:
    def __init__(self, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.body, self.headers = body, headers or {}
        self.requests: list[httpx.Request] = []

    def client(self) -> GraphClient:
        def answer(request: httpx.Request) -> httpx.Response:
            self.requests.append(request)
            return httpx.Response(200, content=self.body, headers=self.headers)

        return GraphClient(access_token="test-token-abc", transport=httpx.MockTransport(answer))


def item(metadata: dict[str, str], **changes: Any) -> dict[str, Any]:
    return {
        "media_id": "790aba14-5f4a-4dbd-b9e2-0d4b3f41c9d5",
        "cdn_url": CDN,
        "file_name": "IMG_5237.jpg",
        "encryption_metadata": metadata,
        **changes,
    }


async def test_downloads_and_decrypts_one_item() -> None:
    photo = os.urandom(5000) + b"end"
    encrypted, metadata = encrypt_media(photo)
    cdn = Cdn(encrypted, {"content-type": "binary/octet-stream"})
    media = await download_flow_media(cdn.client(), item(metadata))
    assert media.content == photo
    assert (media.file_name, media.media_id, media.size) == (
        "IMG_5237.jpg",
        "790aba14-5f4a-4dbd-b9e2-0d4b3f41c9d5",
        len(photo),
    )
    assert repr(media) == f"FlowMedia(size={len(photo)})"
    [request] = cdn.requests
    assert (request.method, str(request.url)) == ("GET", CDN)


async def test_download_is_capped_before_decryption() -> None:
    encrypted, metadata = encrypt_media(os.urandom(4000))
    cdn = Cdn(encrypted)
    with pytest.raises(MediaValidationError) as caught:
        await download_flow_media(cdn.client(), item(metadata), max_bytes=1024)
    assert caught.value.code == "download_too_large"


async def test_tampered_file_is_an_integrity_error() -> None:
    encrypted, metadata = encrypt_media(b"document body" * 50)
    tampered = bytes([encrypted[0] ^ 1]) + encrypted[1:]
    with pytest.raises(MediaIntegrityError):
        await download_flow_media(Cdn(tampered).client(), item(metadata))


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        ({"cdn_url": "http://mmg.whatsapp.test/x"}, "invalid_cdn_url"),
        ({"cdn_url": None}, "invalid_cdn_url"),
        ({"file_name": ""}, "invalid_file_name"),
        ({"file_name": "a\nb.jpg"}, "invalid_file_name"),
        ({"file_name": "x" * 256}, "invalid_file_name"),
        ({"media_id": 5}, "invalid_media_id"),
        ({"encryption_metadata": {"iv": "AAAA"}}, "invalid_encryption_metadata"),
        ({"encryption_metadata": "nope"}, "invalid_encryption_metadata"),
    ],
)
async def test_malformed_items_are_refused_before_any_request(
    changes: dict[str, Any], code: str
) -> None:
    _, metadata = encrypt_media(b"x")
    cdn = Cdn(b"")
    with pytest.raises(FlowMediaError) as caught:
        await download_flow_media(cdn.client(), item(metadata, **changes))
    assert caught.value.code == code and cdn.requests == []
    with pytest.raises(FlowMediaError):
        await download_flow_media(cdn.client(), ["not", "an", "item"])  # type: ignore[arg-type]
