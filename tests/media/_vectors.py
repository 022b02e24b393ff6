"""An independent implementation of the encrypted-media scheme, for building test vectors.

It uses cryptography's Cipher and padding directly plus stdlib hmac/hashlib,
never ``svc.crypto``, so a bug shared by the two sides cannot hide.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import random

from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def encrypt_raw_blocks(key: bytes, iv: bytes, blocks: bytes) -> bytes:
    """AES-256-CBC over already block-aligned data, no padding added."""
    encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
    return encryptor.update(blocks) + encryptor.finalize()


def pkcs7(plaintext: bytes) -> bytes:
    padder = padding.PKCS7(128).padder()
    return padder.update(plaintext) + padder.finalize()


def seal(
    *,
    key: bytes,
    hmac_key: bytes,
    iv: bytes,
    ciphertext: bytes,
    plaintext_hash: bytes,
) -> tuple[dict[str, str], bytes]:
    """Append the truncated tag and describe the file in a bundle."""
    tag = hmac.new(hmac_key, iv + ciphertext, hashlib.sha256).digest()[:10]
    encrypted = ciphertext + tag
    bundle = {
        "encryption_key": b64(key),
        "hmac_key": b64(hmac_key),
        "iv": b64(iv),
        "plaintext_hash": b64(plaintext_hash),
        "encrypted_hash": b64(hashlib.sha256(encrypted).digest()),
    }
    return bundle, encrypted


def make_vector(plaintext: bytes, *, seed: int = 7) -> tuple[dict[str, str], bytes]:
    """Encrypt ``plaintext`` with keys drawn from ``seed``; return (bundle, encrypted file)."""
    rng = random.Random(seed)
    key, hmac_key, iv = rng.randbytes(32), rng.randbytes(32), rng.randbytes(16)
    ciphertext = encrypt_raw_blocks(key, iv, pkcs7(plaintext))
    return seal(
        key=key,
        hmac_key=hmac_key,
        iv=iv,
        ciphertext=ciphertext,
        plaintext_hash=hashlib.sha256(plaintext).digest(),
    )


def reference_decrypt(bundle: dict[str, str], encrypted: bytes) -> bytes | None:
    """Decrypt without any check but the padding; None when the padding is malformed."""
    key = base64.b64decode(bundle["encryption_key"])
    iv = base64.b64decode(bundle["iv"])
    decryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).decryptor()
    padded = decryptor.update(encrypted[:-10]) + decryptor.finalize()
    unpadder = padding.PKCS7(128).unpadder()
    try:
        return unpadder.update(padded) + unpadder.finalize()
    except ValueError:
        return None


def rehash(bundle: dict[str, str], encrypted: bytes) -> dict[str, str]:
    """The bundle with ``encrypted_hash`` recomputed for a tampered file (to reach later checks)."""
    return {**bundle, "encrypted_hash": b64(hashlib.sha256(encrypted).digest())}


def flip(raw: bytes, index: int) -> bytes:
    changed = bytearray(raw)
    changed[index] ^= 0x01
    return bytes(changed)


def flip_b64(value: str, index: int = 0) -> str:
    return b64(flip(base64.b64decode(value), index))
