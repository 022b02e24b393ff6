"""svc.crypto helpers used by media decryption, checked against hashlib/hmac and cryptography."""

from __future__ import annotations

import hashlib
import hmac
import random

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from hypothesis import given, settings
from hypothesis import strategies as st

from svc import crypto

KEY = bytes(range(32))
IV = bytes(range(100, 116))


def reference_plaintext(ciphertext: bytes) -> bytes:
    decryptor = Cipher(algorithms.AES(KEY), modes.CBC(IV)).decryptor()
    return decryptor.update(ciphertext) + decryptor.finalize()


def ciphertext_of(blocks: int, seed: int = 3) -> bytes:
    return random.Random(seed).randbytes(16 * blocks)


def test_existing_helpers_keep_their_answers() -> None:
    assert crypto.sha256_digest(b"abc") == hashlib.sha256(b"abc").digest()
    assert crypto.sha256_hex(b"abc") == hashlib.sha256(b"abc").hexdigest()
    tag = hmac.new(b"k", b"body", hashlib.sha256).digest()
    assert crypto.hmac_sha256(b"k", b"body") == tag
    assert crypto.hmac_sha256_matches(b"k", b"body", tag)
    assert not crypto.hmac_sha256_matches(b"k", b"body", bytes(32))
    assert crypto.constant_time_equal(b"a", bytearray(b"a"))


@settings(max_examples=40, deadline=None)
@given(parts=st.lists(st.binary(max_size=5000), max_size=5))
def test_incremental_hashes_match_the_stdlib(parts: list[bytes]) -> None:
    sha = crypto.Sha256()
    mac = crypto.HmacSha256(b"key")
    for part in parts:
        sha.update(memoryview(part))
        mac.update(part)
    joined = b"".join(parts)
    assert sha.digest() == hashlib.sha256(joined).digest()
    assert mac.digest() == hmac.new(b"key", joined, hashlib.sha256).digest()


@pytest.mark.parametrize("blocks", [1, 2, 3, 4, 100, 20_000])
@pytest.mark.parametrize("short", [0, 1, 5, 15, 16])
def test_decrypt_into_writes_exactly_the_wanted_prefix(blocks: int, short: int) -> None:
    ciphertext = ciphertext_of(blocks)
    expected = reference_plaintext(ciphertext)
    wanted = max(0, len(ciphertext) - short)
    arena = bytearray(b"\xaa" * (wanted + 64))
    written = crypto.aes256_cbc_decrypt_into(KEY, IV, ciphertext, memoryview(arena)[:wanted])
    assert written == wanted
    assert arena[:wanted] == expected[:wanted]
    assert arena[wanted:] == b"\xaa" * 64  # nothing past the view


def test_decrypt_into_a_larger_buffer_writes_the_whole_plaintext() -> None:
    ciphertext = ciphertext_of(5)
    out = bytearray(200)
    assert crypto.aes256_cbc_decrypt_into(KEY, IV, memoryview(ciphertext), out) == 80
    assert out[:80] == reference_plaintext(ciphertext)


@pytest.mark.parametrize("blocks", [1, 2, 7])
def test_last_block_alone(blocks: int) -> None:
    ciphertext = ciphertext_of(blocks)
    expected = reference_plaintext(ciphertext)[-16:]
    assert crypto.aes256_cbc_last_block(KEY, IV, ciphertext) == expected


@pytest.mark.parametrize(
    ("key", "iv", "data"),
    [(KEY[:16], IV, bytes(16)), (KEY, IV[:8], bytes(16)), (KEY, IV, bytes(15))],
)
def test_decrypt_rejects_bad_sizes(key: bytes, iv: bytes, data: bytes) -> None:
    with pytest.raises(ValueError):
        crypto.aes256_cbc_decrypt_into(key, iv, data, bytearray(64))
    with pytest.raises(ValueError):
        crypto.aes256_cbc_last_block(key, iv, data)


def test_last_block_needs_a_block() -> None:
    with pytest.raises(ValueError):
        crypto.aes256_cbc_last_block(KEY, IV, b"")


@pytest.mark.parametrize(
    ("block", "kept"),
    [
        (bytes(15) + b"\x01", 15),
        (bytes(12) + b"\x04" * 4, 12),
        (b"\x10" * 16, 0),
        (bytes(16), None),
        (bytes(15) + b"\x11", None),
        (bytes(12) + b"\x04\x04\x05\x04", None),
        (b"\x01" * 15, None),
    ],
)
def test_pkcs7_unpadded_length(block: bytes, kept: int | None) -> None:
    assert crypto.pkcs7_unpadded_length(block) == kept
