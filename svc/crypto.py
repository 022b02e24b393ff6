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

import hashlib
import hmac as _stdlib_hmac
from collections.abc import Sequence

from cryptography.exceptions import InvalidTag as _InvalidTag
from cryptography.exceptions import UnsupportedAlgorithm as _UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives import hmac as _hmac
from cryptography.hazmat.primitives import padding as _padding
from cryptography.hazmat.primitives import serialization as _serialization
from cryptography.hazmat.primitives.asymmetric import padding as _asym_padding
from cryptography.hazmat.primitives.asymmetric import rsa as _rsa
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM as _AESGCM

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
    """Return the 32-byte SHA-256 digest of ``data``.

    hashlib's one-shot call: the same OpenSSL digest without cryptography's
    per-call ``Hash`` object, which cost more than the hash of a short key.
    """
    return hashlib.sha256(data).digest()


def sha256_hex(data: Buffer) -> str:
    """Return the SHA-256 digest of ``data`` as 64 lowercase hex digits."""
    return hashlib.sha256(data).hexdigest()


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


# --- RSA-OAEP key unwrap and AES-GCM (the WhatsApp Flows data endpoint)

# Appended, so the list at the top (the media functions') stays untouched.
__all__ += [
    "AES_GCM_TAG_SIZE",
    "RSA_MIN_KEY_BITS",
    "RsaPrivateKey",
    "aes_gcm_decrypt",
    "aes_gcm_encrypt",
    "generate_rsa_key_pair_pem",
    "load_rsa_private_key_pem",
    "rsa_oaep_sha256_unwrap",
]

AES_GCM_TAG_SIZE = 16
"""AES-GCM authentication tag size in bytes (the tag ends the ciphertext)."""
RSA_MIN_KEY_BITS = 2048
"""Smallest RSA modulus accepted for unwrapping and generated by default."""
_AES_KEY_SIZES = frozenset({16, 24, 32})
_OAEP_SHA256 = _asym_padding.OAEP(
    mgf=_asym_padding.MGF1(algorithm=hashes.SHA256()), algorithm=hashes.SHA256(), label=None
)


class RsaPrivateKey:
    """An RSA private key held for OAEP-SHA256 unwrapping; opaque, and its repr shows only the size.

    Built by ``load_rsa_private_key_pem``; code outside this module never sees
    cryptography's key object, so the key cannot leak through a repr, a log
    line or a pickle.
    """

    __slots__ = ("_key",)

    def __init__(self, key: _rsa.RSAPrivateKey) -> None:
        if not isinstance(key, _rsa.RSAPrivateKey):
            raise TypeError("RsaPrivateKey wraps an RSA private key")
        self._key = key

    @property
    def key_size(self) -> int:
        """The modulus size in bits (2048 for a Flows key)."""
        return int(self._key.key_size)

    def public_key_pem(self) -> bytes:
        """The matching public key as PEM SubjectPublicKeyInfo (``BEGIN PUBLIC KEY``)."""
        return self._key.public_key().public_bytes(
            _serialization.Encoding.PEM, _serialization.PublicFormat.SubjectPublicKeyInfo
        )

    def __repr__(self) -> str:
        return f"RsaPrivateKey(key_size={self.key_size})"

    def __reduce__(self) -> tuple[object, ...]:
        raise TypeError("an RsaPrivateKey is not picklable")


def load_rsa_private_key_pem(pem: Buffer, passphrase: Buffer | None = None) -> RsaPrivateKey:
    """Load a PEM RSA private key (PKCS#8, optionally passphrase-protected; PKCS#1 also read).

    Raises ``ValueError`` with a fixed message (never the PEM or the
    passphrase) when the data is not a PEM private key, the passphrase is
    wrong, missing or not needed, the key is not RSA, or it is under 2048 bits.
    """
    password = None if passphrase is None else bytes(passphrase)
    if password is not None and not password:
        raise ValueError("the private key passphrase must not be empty")
    try:
        key = _serialization.load_pem_private_key(bytes(pem), password=password)
    except TypeError:
        # cryptography says TypeError when a passphrase is given but unused, or needed but absent.
        raise ValueError(
            "the private key is encrypted and needs its passphrase"
            if password is None
            else "the private key is not encrypted: pass no passphrase"
        ) from None
    except (ValueError, _UnsupportedAlgorithm):
        raise ValueError("not a PEM private key, or the passphrase is wrong") from None
    if not isinstance(key, _rsa.RSAPrivateKey):
        raise ValueError("the private key is not an RSA key")
    if key.key_size < RSA_MIN_KEY_BITS:
        raise ValueError(f"the RSA key must have at least {RSA_MIN_KEY_BITS} bits")
    return RsaPrivateKey(key)


def generate_rsa_key_pair_pem(
    *, key_size: int = RSA_MIN_KEY_BITS, passphrase: Buffer | None = None
) -> tuple[bytes, bytes]:
    """Make a new RSA key pair: (private PEM PKCS#8, public PEM SubjectPublicKeyInfo).

    With ``passphrase`` the private key is encrypted with cryptography's best
    available PKCS#8 scheme. Exponent 65537.
    """
    if isinstance(key_size, bool) or not isinstance(key_size, int) or key_size < RSA_MIN_KEY_BITS:
        raise ValueError(f"key_size must be an int of at least {RSA_MIN_KEY_BITS}")
    encryption: _serialization.KeySerializationEncryption = _serialization.NoEncryption()
    if passphrase is not None:
        if not passphrase:
            raise ValueError("the private key passphrase must not be empty")
        encryption = _serialization.BestAvailableEncryption(bytes(passphrase))
    key = _rsa.generate_private_key(public_exponent=65537, key_size=key_size)
    private_pem = key.private_bytes(
        _serialization.Encoding.PEM, _serialization.PrivateFormat.PKCS8, encryption
    )
    return private_pem, RsaPrivateKey(key).public_key_pem()


def rsa_oaep_sha256_unwrap(key: RsaPrivateKey, wrapped: Buffer) -> bytes:
    """Decrypt an RSA-OAEP ciphertext (SHA-256 for OAEP and MGF1, empty label).

    Raises ``ValueError("RSA-OAEP unwrap failed")`` for any wrong length,
    padding or key, with nothing about where it failed.
    """
    if not isinstance(key, RsaPrivateKey):
        raise TypeError("key must be an RsaPrivateKey")
    try:
        return key._key.decrypt(bytes(wrapped), _OAEP_SHA256)
    except ValueError:
        raise ValueError("RSA-OAEP unwrap failed") from None


def aes_gcm_decrypt(key: Buffer, iv: Buffer, ciphertext_and_tag: Buffer) -> bytes:
    """Verify and decrypt AES-GCM ``ciphertext || 16-byte tag`` with no associated data.

    ``key`` is 16, 24 or 32 bytes, ``iv`` at least 8. Raises
    ``ValueError("AES-GCM decryption failed")`` when the tag does not verify.
    """
    cipher = _aes_gcm(key, iv)
    if len(ciphertext_and_tag) < AES_GCM_TAG_SIZE:
        raise ValueError("AES-GCM decryption failed")
    try:
        return cipher.decrypt(bytes(iv), bytes(ciphertext_and_tag), None)
    except _InvalidTag:
        raise ValueError("AES-GCM decryption failed") from None


def aes_gcm_encrypt(key: Buffer, iv: Buffer, plaintext: Buffer) -> bytes:
    """Encrypt with AES-GCM and no associated data; returns ``ciphertext || 16-byte tag``."""
    return _aes_gcm(key, iv).encrypt(bytes(iv), bytes(plaintext), None)


def _aes_gcm(key: Buffer, iv: Buffer) -> _AESGCM:
    if len(key) not in _AES_KEY_SIZES:
        raise ValueError("AES-GCM needs a 16, 24 or 32-byte key")
    if not 8 <= len(iv) <= 128:
        raise ValueError("AES-GCM needs an IV of 8 to 128 bytes")
    return _AESGCM(bytes(key))


# --- the inbox keyring: XChaCha20-Poly1305 (libsodium, through pynacl) under rotating keys

__all__ += [
    "INBOX_KEY_SIZE",
    "InboxKeyring",
    "InvalidCiphertextError",
    "KeyUnavailableError",
    "KeyringError",
    "generate_inbox_key",
    "parse_inbox_key",
    "sealed_key_id",
]

INBOX_KEY_SIZE = 32
"""An inbox key's size in bytes (written as standard or URL-safe base64: 44 characters)."""
_SEAL_VERSION = 1
_KEY_ID_SIZE = 4
_XCHACHA_NONCE_SIZE = 24
_POLY1305_TAG_SIZE = 16
_SEAL_HEADER_SIZE = 1 + _KEY_ID_SIZE
_SEAL_OVERHEAD = _SEAL_HEADER_SIZE + _XCHACHA_NONCE_SIZE + _POLY1305_TAG_SIZE
_KEY_ID_LABEL = b"svc inbox key id"


class KeyringError(ValueError):
    """A sealed item that this keyring cannot open. Messages name key ids, never key bytes.

    ``KeyringError``
    ├── ``KeyUnavailableError``: sealed under a key the keyring does not hold
    └── ``InvalidCiphertextError``: malformed, tampered with, or other associated data
    """


class KeyUnavailableError(KeyringError):
    """The item was sealed under a key this keyring does not hold (``key_id``: its hex id).

    Retrying cannot help: the handler runtime makes it a dead letter (``key_unavailable``).
    """

    def __init__(self, key_id: str) -> None:
        super().__init__(f"sealed under key {key_id}, which the keyring does not hold")
        self.key_id = key_id


class InvalidCiphertextError(KeyringError):
    """The item is not a sealed item of this format, or its tag does not verify."""


def generate_inbox_key() -> str:
    """A new inbox key: 32 random bytes as standard base64 (what ``parse_inbox_key`` reads)."""
    import base64
    import secrets

    return base64.b64encode(secrets.token_bytes(INBOX_KEY_SIZE)).decode("ascii")


def parse_inbox_key(text: str) -> bytes:
    """The 32 bytes of an inbox key written as base64 (standard or URL-safe, padding optional).

    Raises ``ValueError`` with a fixed message, never the text.
    """
    import base64
    import binascii

    value = text.strip()
    if not value.isascii() or len(value) > 64:
        raise ValueError("an inbox key is 32 bytes written as base64 (44 characters)")
    value = value.replace("-", "+").replace("_", "/")
    value += "=" * (-len(value) % 4)
    try:
        key = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("an inbox key is 32 bytes written as base64 (44 characters)") from None
    if len(key) != INBOX_KEY_SIZE:
        raise ValueError("an inbox key is 32 bytes written as base64 (44 characters)")
    return key


def _key_id(key: bytes) -> bytes:
    """A short public name of a key: the first 4 bytes of HMAC-SHA256(key, label)."""
    return hmac_sha256(key, _KEY_ID_LABEL)[:_KEY_ID_SIZE]


def sealed_key_id(sealed: Buffer) -> str:
    """The hex id of the key a sealed item was written under, read without decrypting.

    Raises ``InvalidCiphertextError`` when ``sealed`` is not a sealed item of this format.
    """
    if len(sealed) < _SEAL_OVERHEAD or sealed[0] != _SEAL_VERSION:
        raise InvalidCiphertextError("not a sealed item of this format")
    return bytes(sealed[1:_SEAL_HEADER_SIZE]).hex()


class InboxKeyring:
    """Seals and opens inbox items and per-user state: the first key writes, every key reads.

    The cipher is XChaCha20-Poly1305 (IETF, libsodium through pynacl) with a
    random 192-bit nonce per item, so a key has no practical message budget
    (``docs/decisions.md`` says why, with the figure). A sealed item is
    ``version (1) || key id (4) || nonce (24) || ciphertext || tag (16)``; the
    header and the caller's ``associated_data`` (the row the item belongs to)
    are authenticated, so an item copied to another row does not open. Keys
    rotate by putting a new key first and keeping the old ones until the items
    they sealed are gone. The repr shows key ids only; a keyring is not picklable.
    """

    __slots__ = ("_crypto_error", "_keys", "_nonce", "_open", "_seal", "_write_id", "_write_key")

    def __init__(self, keys: Sequence[Buffer]) -> None:
        # pynacl is imported here, not with the module: most users of svc.crypto never
        # seal an item, and libsodium's bindings take tens of milliseconds to load.
        from nacl.bindings import (
            crypto_aead_xchacha20poly1305_ietf_decrypt,
            crypto_aead_xchacha20poly1305_ietf_encrypt,
        )
        from nacl.exceptions import CryptoError
        from nacl.utils import random

        self._seal = crypto_aead_xchacha20poly1305_ietf_encrypt
        self._open = crypto_aead_xchacha20poly1305_ietf_decrypt
        self._nonce = random
        self._crypto_error = CryptoError
        if not keys:
            raise ValueError("an inbox keyring needs at least one key")
        by_id: dict[bytes, bytes] = {}
        for key in keys:
            if len(key) != INBOX_KEY_SIZE:
                raise ValueError("an inbox key is 32 bytes")
            key_bytes = bytes(key)
            key_id = _key_id(key_bytes)
            if key_id in by_id:
                raise ValueError("the same inbox key is listed twice")
            by_id[key_id] = key_bytes
        self._keys = by_id
        self._write_id = next(iter(by_id))
        self._write_key = by_id[self._write_id]

    @property
    def write_key_id(self) -> str:
        """The hex id of the key new items are sealed under (the first key)."""
        return self._write_id.hex()

    @property
    def key_ids(self) -> tuple[str, ...]:
        """The hex ids of every key the keyring reads, the writing key first."""
        return tuple(key_id.hex() for key_id in self._keys)

    def encrypt(self, plaintext: Buffer, associated_data: Buffer = b"") -> bytes:
        """Seal ``plaintext`` under the writing key, bound to ``associated_data``."""
        header = bytes((_SEAL_VERSION,)) + self._write_id
        nonce = self._nonce(_XCHACHA_NONCE_SIZE)
        sealed = self._seal(
            bytes(plaintext), header + bytes(associated_data), nonce, self._write_key
        )
        return header + nonce + sealed

    def decrypt(self, sealed: Buffer, associated_data: Buffer = b"") -> bytes:
        """Open an item sealed by ``encrypt`` under any key of the keyring.

        Raises ``KeyUnavailableError`` when its key is not held, and
        ``InvalidCiphertextError`` when it is malformed, was changed, or was
        sealed with other associated data.
        """
        sealed_key_id(sealed)  # the format check
        data = bytes(sealed)
        header = data[:_SEAL_HEADER_SIZE]
        key = self._keys.get(header[1:])
        if key is None:
            raise KeyUnavailableError(header[1:].hex())
        nonce = data[_SEAL_HEADER_SIZE : _SEAL_HEADER_SIZE + _XCHACHA_NONCE_SIZE]
        try:
            return self._open(
                data[_SEAL_HEADER_SIZE + _XCHACHA_NONCE_SIZE :],
                header + bytes(associated_data),
                nonce,
                key,
            )
        except self._crypto_error:
            raise InvalidCiphertextError("the sealed item does not verify") from None

    def __repr__(self) -> str:
        return f"InboxKeyring(key_ids={self.key_ids!r})"

    def __reduce__(self) -> tuple[object, ...]:
        raise TypeError("an InboxKeyring is not picklable")
