"""svc.crypto's Flows primitives against known answers and cryptography used directly.

The requests are sealed the way the platform does it (``tests/flows/_platform.py``:
the Cipher GCM API and the RSA public key, not the functions under test).
"""

from __future__ import annotations

import base64
import os
import pickle

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from hypothesis import given, settings
from hypothesis import strategies as st

from svc import crypto
from tests.flows._platform import (
    PASSPHRASE,
    gcm_open,
    gcm_seal,
    oaep_sha256,
    platform_key,
    private_pem,
)

# McGrew & Viega, "The Galois/Counter Mode of Operation", test cases 2 and 3 (AES-128, no AAD).
GCM_VECTORS = [
    (
        "00000000000000000000000000000000",
        "000000000000000000000000",
        "00000000000000000000000000000000",
        "0388dace60b6a392f328c2b971b2fe78",
        "ab6e47d42cec13bdf53a67b21257bddf",
    ),
    (
        "feffe9928665731c6d6a8f9467308308",
        "cafebabefacedbaddecaf888",
        "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
        "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255",
        "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"
        "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f5985",
        "4d5c2af327cd64a62cf35abd2ba6fab4",
    ),
]


@pytest.fixture(scope="module")
def loaded() -> crypto.RsaPrivateKey:
    return crypto.load_rsa_private_key_pem(private_pem(platform_key()))


@pytest.mark.parametrize(("key", "iv", "plain", "cipher", "tag"), GCM_VECTORS)
def test_aes_gcm_known_answers(key: str, iv: str, plain: str, cipher: str, tag: str) -> None:
    k, n, p = bytes.fromhex(key), bytes.fromhex(iv), bytes.fromhex(plain)
    sealed = bytes.fromhex(cipher + tag)
    assert crypto.aes_gcm_encrypt(k, n, p) == sealed
    assert crypto.aes_gcm_decrypt(k, n, sealed) == p


@settings(max_examples=60, deadline=None)
@given(
    key=st.binary(min_size=16, max_size=16),
    iv=st.binary(min_size=12, max_size=16),
    plaintext=st.binary(max_size=3000),
)
def test_aes_gcm_agrees_with_the_cipher_api(key: bytes, iv: bytes, plaintext: bytes) -> None:
    sealed = gcm_seal(key, iv, plaintext)
    assert crypto.aes_gcm_decrypt(key, iv, memoryview(sealed)) == plaintext
    assert crypto.aes_gcm_encrypt(key, iv, plaintext) == sealed
    assert gcm_open(key, iv, crypto.aes_gcm_encrypt(key, iv, plaintext)) == plaintext


@pytest.mark.parametrize("position", [0, 7, -16, -1])
def test_aes_gcm_refuses_any_flipped_bit_with_a_fixed_message(position: int) -> None:
    key, iv = os.urandom(16), os.urandom(16)
    sealed = bytearray(gcm_seal(key, iv, b'{"action":"ping"}'))
    sealed[position] ^= 0x01
    with pytest.raises(ValueError, match=r"^AES-GCM decryption failed$") as caught:
        crypto.aes_gcm_decrypt(key, iv, bytes(sealed))
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def test_aes_gcm_refuses_short_data_and_bad_sizes() -> None:
    with pytest.raises(ValueError, match="decryption failed"):
        crypto.aes_gcm_decrypt(bytes(16), bytes(16), bytes(15))
    with pytest.raises(ValueError, match="key"):
        crypto.aes_gcm_encrypt(bytes(15), bytes(16), b"x")
    with pytest.raises(ValueError, match="IV"):
        crypto.aes_gcm_encrypt(bytes(16), bytes(7), b"x")


@settings(max_examples=25, deadline=None)
@given(aes_key=st.binary(min_size=16, max_size=32))
def test_oaep_unwrap_recovers_what_the_public_key_wrapped(
    loaded: crypto.RsaPrivateKey, aes_key: bytes
) -> None:
    wrapped = platform_key().public_key().encrypt(aes_key, oaep_sha256())
    assert crypto.rsa_oaep_sha256_unwrap(loaded, wrapped) == aes_key


@pytest.mark.parametrize(
    "scheme",
    [
        padding.OAEP(mgf=padding.MGF1(hashes.SHA1()), algorithm=hashes.SHA1(), label=None),  # noqa: S303 - must be refused
        padding.OAEP(mgf=padding.MGF1(hashes.SHA1()), algorithm=hashes.SHA256(), label=None),  # noqa: S303 - must be refused
        padding.OAEP(mgf=padding.MGF1(hashes.SHA256()), algorithm=hashes.SHA256(), label=b"x"),
        padding.PKCS1v15(),
    ],
    ids=["sha1", "mgf1-sha1", "label", "pkcs1v15"],
)
def test_oaep_unwrap_uses_exactly_sha256_sha256_and_no_label(
    loaded: crypto.RsaPrivateKey, scheme: padding.AsymmetricPadding
) -> None:
    wrapped = platform_key().public_key().encrypt(bytes(range(16)), scheme)
    with pytest.raises(ValueError, match=r"^RSA-OAEP unwrap failed$"):
        crypto.rsa_oaep_sha256_unwrap(loaded, wrapped)


@pytest.mark.slow  # may generate a second RSA key (random 0.05-0.4 s)
def test_oaep_unwrap_refuses_a_foreign_key_and_wrong_lengths(
    loaded: crypto.RsaPrivateKey,
) -> None:
    other = platform_key(1).public_key().encrypt(bytes(16), oaep_sha256())
    for wrapped in (other, other[:-1], b"", bytes(256)):
        with pytest.raises(ValueError, match=r"^RSA-OAEP unwrap failed$"):
            crypto.rsa_oaep_sha256_unwrap(loaded, wrapped)
    with pytest.raises(TypeError):
        crypto.rsa_oaep_sha256_unwrap(platform_key(), other)  # type: ignore[arg-type]


def test_private_key_loads_plain_and_passphrase_protected_pkcs8() -> None:
    plain = crypto.load_rsa_private_key_pem(private_pem(platform_key()))
    locked = crypto.load_rsa_private_key_pem(private_pem(platform_key(), PASSPHRASE), PASSPHRASE)
    expected = (
        platform_key()
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    assert plain.public_key_pem() == locked.public_key_pem() == expected
    assert plain.key_size == 2048
    assert repr(plain) == "RsaPrivateKey(key_size=2048)"
    with pytest.raises(TypeError):
        pickle.dumps(plain)


@pytest.mark.slow  # may generate a second RSA key (random 0.05-0.4 s)
def test_private_key_refusals_are_fixed_sentences_without_the_key() -> None:
    pem = private_pem(platform_key(), PASSPHRASE)
    small = rsa.generate_private_key(public_exponent=65537, key_size=1024)  # noqa: S505 - refused
    cases = [
        (pem, None, "needs its passphrase"),
        (pem, b"wrong-passphrase", "passphrase is wrong"),
        (private_pem(platform_key()), PASSPHRASE, "not encrypted"),
        (b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", None, "not a PEM"),
        (b"garbage", None, "not a PEM"),
        (private_pem(small), None, "at least 2048"),
        (
            ec.generate_private_key(ec.SECP256R1()).private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            ),
            None,
            "not an RSA key",
        ),
        (pem, b"", "must not be empty"),
    ]
    for data, passphrase, message in cases:
        with pytest.raises(ValueError, match=message) as caught:
            crypto.load_rsa_private_key_pem(data, passphrase)
        text = str(caught.value) + repr(caught.value)
        assert PASSPHRASE.decode() not in text and "wrong-passphrase" not in text
        assert "BEGIN" not in text and caught.value.__cause__ is None


@pytest.mark.slow  # RSA key generation takes a random 0.05-0.4 s
def test_generated_pair_is_rsa_2048_pkcs8_and_spki_and_matches() -> None:
    private, public = crypto.generate_rsa_key_pair_pem()
    assert private.startswith(b"-----BEGIN PRIVATE KEY-----\n")
    assert public.startswith(b"-----BEGIN PUBLIC KEY-----\n")
    key = serialization.load_pem_private_key(private, password=None)
    assert isinstance(key, rsa.RSAPrivateKey) and key.key_size == 2048
    assert key.public_key().public_numbers().e == 65537
    loaded_public = serialization.load_pem_public_key(public)
    assert isinstance(loaded_public, rsa.RSAPublicKey)
    assert loaded_public.public_numbers() == key.public_key().public_numbers()
    wrapped = loaded_public.encrypt(b"k" * 16, oaep_sha256())
    assert crypto.rsa_oaep_sha256_unwrap(crypto.load_rsa_private_key_pem(private), wrapped) == (
        b"k" * 16
    )


@pytest.mark.slow  # RSA key generation takes a random 0.05-0.4 s
def test_generated_pair_with_passphrase_is_encrypted_pkcs8() -> None:
    private, _ = crypto.generate_rsa_key_pair_pem(passphrase=PASSPHRASE)
    assert private.startswith(b"-----BEGIN ENCRYPTED PRIVATE KEY-----\n")
    assert PASSPHRASE not in private and base64.b64encode(PASSPHRASE) not in private
    key = serialization.load_pem_private_key(private, password=PASSPHRASE)
    assert isinstance(key, rsa.RSAPrivateKey) and key.key_size == 2048
    with pytest.raises(ValueError):
        crypto.generate_rsa_key_pair_pem(key_size=1024)
