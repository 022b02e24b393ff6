"""The compiled-crypto boundary: the only module that calls cryptography's primitives.

Signature checks (webhook HMAC), hashing and media decryption all go through
here so that the hot paths can be benchmarked and audited in one place. Every
comparison of secret-derived bytes is constant-time.
"""

from __future__ import annotations

import hmac as _stdlib_hmac

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives import hmac as _hmac

__all__ = [
    "constant_time_equal",
    "hmac_sha256",
    "hmac_sha256_matches",
    "sha256_digest",
    "sha256_hex",
]

Buffer = bytes | bytearray | memoryview


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
