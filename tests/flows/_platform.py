"""The platform's side of the Flows data endpoint, from the scheme, with cryptography directly.

Independent of ``svc.crypto`` and ``svc.flows``: it encrypts a request the
way the WhatsApp client does (fresh AES-128 key and 16-byte IV, AES-GCM with
the tag appended, the key wrapped with RSA-OAEP-SHA256) and decrypts the
endpoint's answer (same key, IV with every bit inverted).
"""

from __future__ import annotations

import base64
import functools
import json
import os
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

APP_SECRET = "flows-test-app-secret-5f1c9a"
PASSPHRASE = b"flows-test-passphrase-8d2e"


@functools.cache
def platform_key(index: int = 0) -> rsa.RSAPrivateKey:
    """One RSA-2048 business key per index, made once per test session."""
    del index
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def private_pem(key: rsa.RSAPrivateKey, passphrase: bytes | None = None) -> bytes:
    encryption: serialization.KeySerializationEncryption = (
        serialization.NoEncryption()
        if passphrase is None
        else serialization.BestAvailableEncryption(passphrase)
    )
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption
    )


def oaep_sha256() -> padding.OAEP:
    return padding.OAEP(mgf=padding.MGF1(hashes.SHA256()), algorithm=hashes.SHA256(), label=None)


def gcm_seal(key: bytes, iv: bytes, plaintext: bytes) -> bytes:
    encryptor = Cipher(algorithms.AES(key), modes.GCM(iv)).encryptor()
    return encryptor.update(plaintext) + encryptor.finalize() + encryptor.tag


def gcm_open(key: bytes, iv: bytes, sealed: bytes) -> bytes:
    decryptor = Cipher(algorithms.AES(key), modes.GCM(iv, sealed[-16:])).decryptor()
    return decryptor.update(sealed[:-16]) + decryptor.finalize()


@dataclass(frozen=True)
class SealedRequest:
    body: bytes
    aes_key: bytes
    iv: bytes
    fields: dict[str, str]

    def open_response(self, body: bytes) -> Any:
        """Decrypt the endpoint's answer as the client does: same key, inverted IV."""
        flipped = bytes(b ^ 0xFF for b in self.iv)
        return json.loads(gcm_open(self.aes_key, flipped, base64.b64decode(body, validate=True)))


def seal_request(
    payload: dict[str, Any] | bytes,
    public_key: rsa.RSAPublicKey | None = None,
    *,
    aes_key: bytes | None = None,
    iv: bytes | None = None,
) -> SealedRequest:
    """Encrypt a request body exactly as the platform sends it."""
    public_key = public_key or platform_key().public_key()
    aes_key = aes_key or os.urandom(16)
    iv = iv or os.urandom(16)
    plaintext = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    fields = {
        "encrypted_flow_data": base64.b64encode(gcm_seal(aes_key, iv, plaintext)).decode(),
        "encrypted_aes_key": base64.b64encode(public_key.encrypt(aes_key, oaep_sha256())).decode(),
        "initial_vector": base64.b64encode(iv).decode(),
    }
    return SealedRequest(body=json.dumps(fields).encode(), aes_key=aes_key, iv=iv, fields=fields)
