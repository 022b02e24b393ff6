"""The compiled-crypto boundary: the only module that calls cryptography's primitives.

Signature checks (webhook HMAC), hashing and media decryption all go through
here so that the hot paths can be benchmarked and audited in one place. Every
comparison of secret-derived bytes is constant-time.

The hashing, HMAC and cipher calls release the GIL for inputs of 2048 bytes
or more (pyca/cryptography#15359, in the installed 50.x; hashlib does the
same), so callers may run them on two threads at once; ``docs/media.md``
records the check and ``bench/media_decrypt.py`` measures the gain. Inputs
are read without copying: pass ``bytes``, ``bytearray`` or ``memoryview``
slices.
"""

from __future__ import annotations

import hmac as _stdlib_hmac

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives import hmac as _hmac
from cryptography.hazmat.primitives import padding as _padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

__all__ = [
    "AES256_KEY_SIZE",
    "AES_BLOCK_SIZE",
    "SHA256_SIZE",
    "HmacSha256",
    "Sha256",
    "aes256_cbc_decrypt_into",
    "aes256_cbc_last_block",
    "constant_time_equal",
    "hmac_sha256",
    "hmac_sha256_matches",
    "pkcs7_unpadded_length",
    "sha256_digest",
    "sha256_hex",
]

Buffer = bytes | bytearray | memoryview

AES_BLOCK_SIZE = 16
"""AES block (and CBC IV) size in bytes."""
AES256_KEY_SIZE = 32
"""AES-256 key size in bytes."""
SHA256_SIZE = 32
"""SHA-256 digest size in bytes."""


def sha256_digest(data: Buffer) -> bytes:
    """Return the 32-byte SHA-256 digest of ``data``."""
    digest = hashes.Hash(hashes.SHA256())
    digest.update(data)
    return digest.finalize()


def sha256_hex(data: Buffer) -> str:
    """Return the SHA-256 digest of ``data`` as 64 lowercase hex digits."""
    return sha256_digest(data).hex()


def hmac_sha256(key: Buffer, data: Buffer) -> bytes:
    """Return the 32-byte HMAC-SHA256 tag of ``data`` under ``key``."""
    mac = _hmac.HMAC(bytes(key), hashes.SHA256())
    mac.update(data)
    return mac.finalize()


def hmac_sha256_matches(key: Buffer, data: Buffer, expected: Buffer) -> bool:
    """Tell whether ``expected`` is the HMAC-SHA256 tag of ``data``, in constant time."""
    return constant_time_equal(hmac_sha256(key, data), expected)


def constant_time_equal(left: Buffer, right: Buffer) -> bool:
    """Compare two byte strings without leaking where they first differ."""
    return _stdlib_hmac.compare_digest(bytes(left), bytes(right))


class Sha256:
    """An incremental SHA-256: feed parts with ``update``, read the digest once."""

    __slots__ = ("_hash",)

    def __init__(self) -> None:
        self._hash = hashes.Hash(hashes.SHA256())

    def update(self, data: Buffer) -> None:
        """Hash ``data`` (no copy; the GIL is released for large buffers)."""
        self._hash.update(data)

    def digest(self) -> bytes:
        """Return the 32-byte digest; the hasher cannot be used afterwards."""
        return self._hash.finalize()


class HmacSha256:
    """An incremental HMAC-SHA256 under one key, for tags over several parts (iv || data)."""

    __slots__ = ("_mac",)

    def __init__(self, key: Buffer) -> None:
        self._mac = _hmac.HMAC(bytes(key), hashes.SHA256())

    def update(self, data: Buffer) -> None:
        """Authenticate ``data`` (no copy; the GIL is released for large buffers)."""
        self._mac.update(data)

    def digest(self) -> bytes:
        """Return the full 32-byte tag; the object cannot be used afterwards."""
        return self._mac.finalize()


def aes256_cbc_decrypt_into(
    key: Buffer, iv: Buffer, ciphertext: Buffer, out: bytearray | memoryview
) -> int:
    """Write the first ``len(out)`` bytes of AES-256-CBC plaintext into ``out``; return the count.

    ``ciphertext`` is block-aligned and unpadded here (see
    ``pkcs7_unpadded_length``). Nothing is written past ``len(out)`` (at most
    ``len(ciphertext)`` bytes), so ``out`` can be the exact final buffer: the
    bulk goes through ``update_into`` with no copy, and only the last two or
    three blocks, which ``update_into`` cannot place exactly, through a small
    temporary.
    """
    if len(key) != AES256_KEY_SIZE:
        raise ValueError("AES-256 needs a 32-byte key")
    if len(iv) != AES_BLOCK_SIZE:
        raise ValueError("AES-CBC needs a 16-byte IV")
    if len(ciphertext) % AES_BLOCK_SIZE:
        raise ValueError("ciphertext is not a whole number of AES blocks")
    wanted = min(len(out), len(ciphertext))
    # update_into needs room for len(data) + block - 1 bytes: keep the bulk that fits.
    bulk = min(len(ciphertext), max(0, wanted - AES_BLOCK_SIZE + 1))
    bulk -= bulk % AES_BLOCK_SIZE
    decryptor = Cipher(algorithms.AES256(bytes(key)), modes.CBC(bytes(iv))).decryptor()
    with memoryview(ciphertext) as source, memoryview(out) as target:
        if bulk:
            decryptor.update_into(source[:bulk], target)
        if wanted > bulk:
            tail_end = min(len(ciphertext), -(-wanted // AES_BLOCK_SIZE) * AES_BLOCK_SIZE)
            tail = decryptor.update(source[bulk:tail_end])
            target[bulk:wanted] = tail[: wanted - bulk]
    return wanted


def aes256_cbc_last_block(key: Buffer, iv: Buffer, ciphertext: Buffer) -> bytes:
    """Decrypt only the final 16-byte block of AES-256-CBC ``ciphertext`` (its padding lives there).

    CBC lets one block be decrypted alone: its IV is the previous ciphertext
    block, or ``iv`` when there is a single block.
    """
    if len(key) != AES256_KEY_SIZE:
        raise ValueError("AES-256 needs a 32-byte key")
    if len(iv) != AES_BLOCK_SIZE:
        raise ValueError("AES-CBC needs a 16-byte IV")
    size = len(ciphertext)
    if size < AES_BLOCK_SIZE or size % AES_BLOCK_SIZE:
        raise ValueError("ciphertext is not a non-empty whole number of AES blocks")
    with memoryview(ciphertext) as source:
        chain = bytes(source[size - 2 * AES_BLOCK_SIZE : size - AES_BLOCK_SIZE]) or bytes(iv)
        block = source[size - AES_BLOCK_SIZE :]
        decryptor = Cipher(algorithms.AES256(bytes(key)), modes.CBC(chain)).decryptor()
        return decryptor.update(block) + decryptor.finalize()


def pkcs7_unpadded_length(last_block: Buffer) -> int | None:
    """Return how many data bytes the last AES block keeps under PKCS#7, or None if malformed.

    Uses cryptography's constant-time unpadder on the one block only, so the
    rest of the plaintext is never copied.
    """
    if len(last_block) != AES_BLOCK_SIZE:
        return None
    unpadder = _padding.PKCS7(AES_BLOCK_SIZE * 8).unpadder()
    try:
        kept = unpadder.update(bytes(last_block)) + unpadder.finalize()
    except ValueError:
        return None
    return len(kept)
