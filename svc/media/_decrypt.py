"""Decryption of the platform's encrypted media (the Flows media-upload scheme).

The encrypted file is ``ciphertext || tag`` where ``tag`` is the first 10
bytes of HMAC-SHA256(hmac_key, iv || ciphertext) and the ciphertext is
AES-256-CBC over the PKCS#7-padded plaintext. Checks, in the order their
errors are reported:

1. bundle shape, base64, key/IV/digest lengths            -> MediaCryptoError
2. ciphertext a non-empty whole number of AES blocks      -> ``invalid_ciphertext``
3. SHA-256 of the whole encrypted file                    -> ``encrypted_hash_mismatch``
4. the truncated HMAC tag, compared in constant time      -> ``hmac_mismatch``
5. AES-256-CBC decryption and PKCS#7 padding              -> ``invalid_padding``
6. SHA-256 of the plaintext                               -> ``plaintext_hash_mismatch``

For files of 256 KiB and more, on a machine with two usable CPUs, steps 3-4
run on a short-lived worker thread while this thread decrypts speculatively
into a private buffer and hashes the plaintext (cryptography and hashlib
release the GIL on large buffers, so both run at once). Both threads are
joined and the integrity result is read first, so a padding error is never
reported for a file whose tag failed, and the plaintext leaves this module
only after every check passed.
"""

from __future__ import annotations

import base64
import binascii
import io
import os
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Final

import anyio.to_thread

from svc import crypto

from ._errors import MediaCryptoError, MediaIntegrityError

__all__ = [
    "BUNDLE_FIELDS",
    "HMAC_TAG_SIZE",
    "PARALLEL_MIN_BYTES",
    "decrypt_encrypted_media",
    "decrypt_encrypted_media_async",
]

HMAC_TAG_SIZE: Final = 10
"""Length of the truncated HMAC-SHA256 tag that ends the encrypted file."""
PARALLEL_MIN_BYTES: Final = 256 * 1024
"""Smallest ciphertext verified on a second thread; below it a thread costs more than it saves."""
BUNDLE_FIELDS: Final = ("encryption_key", "hmac_key", "iv", "plaintext_hash", "encrypted_hash")
"""Keys of the encryption metadata bundle, each a base64 string."""

_EXPECTED_LENGTHS: Final = {
    "encryption_key": (crypto.AES256_KEY_SIZE, "invalid_key_length"),
    "hmac_key": (32, "invalid_key_length"),
    "iv": (crypto.AES_BLOCK_SIZE, "invalid_iv_length"),
    "plaintext_hash": (crypto.SHA256_SIZE, "invalid_hash_length"),
    "encrypted_hash": (crypto.SHA256_SIZE, "invalid_hash_length"),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class _Bundle:
    """The decoded bundle; ``repr`` shows no key material."""

    encryption_key: bytes = field(repr=False)
    hmac_key: bytes = field(repr=False)
    iv: bytes = field(repr=False)
    plaintext_hash: bytes = field(repr=False)
    encrypted_hash: bytes = field(repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Candidate:
    """A speculative decryption: ``plaintext`` is None when the padding was malformed."""

    plaintext: bytes | None = field(repr=False)
    digest: bytes | None = field(repr=False)


def decrypt_encrypted_media(bundle: Mapping[str, str], encrypted: bytes) -> bytes:
    """Verify and decrypt one encrypted media file; return the plaintext.

    ``bundle`` holds the base64 strings ``encryption_key``, ``hmac_key``,
    ``iv``, ``plaintext_hash`` and ``encrypted_hash``. Raises
    ``MediaCryptoError`` or ``MediaIntegrityError`` (see the module docstring
    for the order). This call blocks for the duration of the work (about 20 ms
    for 16 MiB); async code uses ``decrypt_encrypted_media_async``.
    """
    keys = _parse_bundle(bundle)
    data = _encrypted_bytes(encrypted)
    size = len(data) - HMAC_TAG_SIZE
    if size < crypto.AES_BLOCK_SIZE or size % crypto.AES_BLOCK_SIZE:
        raise MediaCryptoError(
            "invalid_ciphertext",
            "encrypted media must be a non-empty whole number of 16-byte blocks plus a 10-byte tag",
        )
    whole = memoryview(data)
    ciphertext, tag = whole[:size], whole[size:]
    if size >= PARALLEL_MIN_BYTES and _usable_cpus() > 1:
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="svc-media-verify") as worker:
            integrity = worker.submit(_check_integrity, keys, whole, ciphertext, tag)
            candidate = _decrypt_candidate(keys, ciphertext)
            integrity.result()  # re-raises the integrity failure, which outranks padding
    else:
        _check_integrity(keys, whole, ciphertext, tag)
        candidate = _decrypt_candidate(keys, ciphertext)
    if candidate.plaintext is None or candidate.digest is None:
        raise MediaCryptoError("invalid_padding", "decrypted media has malformed PKCS#7 padding")
    if not crypto.constant_time_equal(candidate.digest, keys.plaintext_hash):
        raise MediaIntegrityError(
            "plaintext_hash_mismatch", "decrypted media does not match plaintext_hash"
        )
    return candidate.plaintext


async def decrypt_encrypted_media_async(bundle: Mapping[str, str], encrypted: bytes) -> bytes:
    """``decrypt_encrypted_media`` on a worker thread, so trio and asyncio loops keep running."""
    return await anyio.to_thread.run_sync(decrypt_encrypted_media, bundle, encrypted)


def _check_integrity(
    keys: _Bundle, whole: memoryview, ciphertext: memoryview, tag: memoryview
) -> None:
    """Steps 3 and 4: the encrypted-file digest, then the truncated tag over iv || ciphertext."""
    if not crypto.constant_time_equal(crypto.sha256_digest(whole), keys.encrypted_hash):
        raise MediaIntegrityError(
            "encrypted_hash_mismatch", "encrypted media does not match encrypted_hash"
        )
    mac = crypto.HmacSha256(keys.hmac_key)
    mac.update(keys.iv)
    mac.update(ciphertext)
    if not crypto.constant_time_equal(mac.digest()[:HMAC_TAG_SIZE], tag):
        raise MediaIntegrityError("hmac_mismatch", "encrypted media failed its HMAC check")


def _decrypt_candidate(keys: _Bundle, ciphertext: memoryview) -> _Candidate:
    """Steps 5 and 6, speculatively: decrypt into the exact final buffer and hash it.

    The padding sits in the last block, which is decrypted first, so the
    plaintext length is known before the bulk is decrypted. The buffer is the
    storage of a fresh ``bytes`` owned by a ``BytesIO``: ``getbuffer()`` writes
    into it without a copy and ``getvalue()`` hands the same object back
    (CPython does not copy an unshared, exactly-sized buffer), so the only
    large allocation is the returned plaintext.
    """
    last = crypto.aes256_cbc_last_block(keys.encryption_key, keys.iv, ciphertext)
    kept = crypto.pkcs7_unpadded_length(last)
    if kept is None:
        return _Candidate(plaintext=None, digest=None)
    length = len(ciphertext) - crypto.AES_BLOCK_SIZE + kept
    buffer = io.BytesIO(bytes(length))
    with buffer.getbuffer() as target:
        crypto.aes256_cbc_decrypt_into(keys.encryption_key, keys.iv, ciphertext, target)
        digest = crypto.sha256_digest(target)
    return _Candidate(plaintext=buffer.getvalue(), digest=digest)


def _parse_bundle(bundle: object) -> _Bundle:
    if not isinstance(bundle, Mapping):
        raise MediaCryptoError("invalid_bundle", "bundle must be a mapping of base64 strings")
    decoded: dict[str, bytes] = {}
    for name in BUNDLE_FIELDS:
        value = bundle.get(name)
        if not isinstance(value, str):
            raise MediaCryptoError("invalid_bundle", f"bundle.{name} must be a base64 string")
        try:
            raw = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise MediaCryptoError("invalid_base64", f"bundle.{name} is not valid base64") from None
        expected, code = _EXPECTED_LENGTHS[name]
        if len(raw) != expected:
            raise MediaCryptoError(code, f"bundle.{name} must decode to {expected} bytes")
        decoded[name] = raw
    return _Bundle(**decoded)


def _encrypted_bytes(encrypted: object) -> bytes:
    """Immutable input: the worker thread reads it while this one decrypts it."""
    if isinstance(encrypted, bytes):
        return encrypted
    if isinstance(encrypted, bytearray):
        return bytes(encrypted)
    if isinstance(encrypted, memoryview) and _is_flat_bytes(encrypted):
        return encrypted.tobytes()
    raise MediaCryptoError("invalid_ciphertext", "encrypted media must be bytes")


def _usable_cpus() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _is_flat_bytes(view: memoryview) -> bool:
    return view.format == "B" and view.ndim == 1 and view.contiguous
