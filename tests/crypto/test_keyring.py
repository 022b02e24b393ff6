"""svc.crypto's inbox keyring: round trip, rotation, unknown keys, tampering, nonces, key text."""

from __future__ import annotations

import base64
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nacl.bindings import crypto_aead_xchacha20poly1305_ietf_decrypt

from svc import crypto
from svc.crypto import (
    InboxKeyring,
    InvalidCiphertextError,
    KeyringError,
    KeyUnavailableError,
    generate_inbox_key,
    parse_inbox_key,
    sealed_key_id,
)

OLD = bytes(range(32))
NEW = bytes(range(100, 132))
UPDATE = b'{"kind":"message","text":{"body":"where is my order?"}}'
ROW = b"update:wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA="


@settings(max_examples=50, deadline=None)
@given(plaintext=st.binary(max_size=4096), associated=st.binary(max_size=128))
def test_an_item_opens_to_what_was_sealed(plaintext: bytes, associated: bytes) -> None:
    keyring = InboxKeyring([NEW])
    sealed = keyring.encrypt(plaintext, associated)
    assert len(sealed) == len(plaintext) + 45
    assert keyring.decrypt(sealed, associated) == plaintext


def test_the_format_is_xchacha20_poly1305_with_the_header_authenticated() -> None:
    """version || key id || nonce || ciphertext || tag, opened with libsodium directly."""
    keyring = InboxKeyring([NEW])
    sealed = keyring.encrypt(UPDATE, ROW)
    assert b"order" not in sealed and ROW not in sealed  # neither the text nor the row in clear
    assert sealed[0] == 1
    assert sealed[1:5].hex() == keyring.write_key_id == sealed_key_id(sealed)
    header, nonce, body = sealed[:5], sealed[5:29], sealed[29:]
    assert crypto_aead_xchacha20poly1305_ietf_decrypt(body, header + ROW, nonce, NEW) == UPDATE


def test_rotation_new_key_writes_and_old_key_still_reads() -> None:
    before = InboxKeyring([OLD])
    pending = before.encrypt(UPDATE, ROW)
    rotated = InboxKeyring([NEW, OLD])
    assert rotated.key_ids == (InboxKeyring([NEW]).write_key_id, before.write_key_id)
    assert rotated.decrypt(pending, ROW) == UPDATE  # the old item still opens
    fresh = rotated.encrypt(UPDATE, ROW)
    assert sealed_key_id(fresh) == rotated.write_key_id != before.write_key_id
    # The new key alone reads the new item; the old keyring no longer can.
    assert InboxKeyring([NEW]).decrypt(fresh, ROW) == UPDATE
    with pytest.raises(KeyUnavailableError) as caught:
        before.decrypt(fresh, ROW)
    assert caught.value.key_id == rotated.write_key_id


def test_an_unknown_key_id_raises_key_unavailable_naming_only_the_id() -> None:
    sealed = InboxKeyring([OLD]).encrypt(UPDATE, ROW)
    with pytest.raises(KeyUnavailableError) as caught:
        InboxKeyring([NEW]).decrypt(sealed, ROW)
    error = caught.value
    assert isinstance(error, KeyringError) and isinstance(error, ValueError)
    assert error.key_id == sealed[1:5].hex()
    text = str(error) + repr(error)
    for secret in (OLD, NEW):
        assert secret.hex() not in text
        assert base64.b64encode(secret).decode() not in text


def test_every_changed_byte_is_detected() -> None:
    keyring = InboxKeyring([NEW, OLD])
    sealed = keyring.encrypt(UPDATE, ROW)
    for index in range(len(sealed)):
        tampered = bytearray(sealed)
        tampered[index] ^= 0x01
        with pytest.raises(KeyringError):
            keyring.decrypt(bytes(tampered), ROW)


def test_other_associated_data_truncation_and_foreign_bytes_are_refused() -> None:
    keyring = InboxKeyring([NEW])
    sealed = keyring.encrypt(UPDATE, ROW)
    with pytest.raises(InvalidCiphertextError):
        keyring.decrypt(sealed, ROW + b"x")  # an item copied to another row
    with pytest.raises(InvalidCiphertextError):
        keyring.decrypt(sealed[:-1], ROW)
    for foreign in (b"", b"\x01" * 44, b"\x02" + sealed[1:], UPDATE):
        with pytest.raises(InvalidCiphertextError):
            keyring.decrypt(foreign, ROW)
        if len(foreign) < 45 or foreign[0] != 1:
            with pytest.raises(InvalidCiphertextError):
                sealed_key_id(foreign)


def test_nonces_never_repeat_and_equal_plaintexts_seal_differently() -> None:
    keyring = InboxKeyring([NEW])
    sealed = [keyring.encrypt(UPDATE, ROW) for _ in range(20_000)]
    assert len({item[5:29] for item in sealed}) == len(sealed)
    assert len(set(sealed)) == len(sealed)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.binary(max_size=64), min_size=2, max_size=50))
def test_nonces_are_distinct_across_any_sequence_of_items(plaintexts: list[bytes]) -> None:
    keyring = InboxKeyring([OLD])
    nonces = [keyring.encrypt(plaintext)[5:29] for plaintext in plaintexts]
    assert len(set(nonces)) == len(nonces)


def test_key_text_is_base64_of_32_bytes_in_either_alphabet() -> None:
    key = bytes(range(200, 232))
    for text in (
        base64.b64encode(key).decode(),
        base64.urlsafe_b64encode(key).decode(),
        base64.urlsafe_b64encode(key).decode().rstrip("="),
        f"  {base64.b64encode(key).decode()}\n",
    ):
        assert parse_inbox_key(text) == key
    generated = generate_inbox_key()
    assert len(generated) == 44 and len(parse_inbox_key(generated)) == 32
    assert generate_inbox_key() != generated


@pytest.mark.parametrize(
    "text",
    [
        "",
        "not base64 at all!",
        base64.b64encode(bytes(16)).decode(),
        base64.b64encode(bytes(33)).decode(),
        "é" * 44,
        "A" * 100,
    ],
)
def test_a_malformed_key_is_refused_without_echoing_it(text: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_inbox_key(text)
    assert str(caught.value) == "an inbox key is 32 bytes written as base64 (44 characters)"


def test_a_keyring_refuses_no_key_a_short_key_and_a_key_listed_twice() -> None:
    with pytest.raises(ValueError, match="at least one key"):
        InboxKeyring([])
    with pytest.raises(ValueError, match="32 bytes"):
        InboxKeyring([bytes(31)])
    with pytest.raises(ValueError, match="listed twice"):
        InboxKeyring([NEW, OLD, NEW])


def test_a_keyring_shows_ids_only_and_is_not_picklable() -> None:
    keyring = InboxKeyring([NEW, OLD])
    shown = repr(keyring)
    assert keyring.write_key_id in shown
    assert NEW.hex() not in shown and OLD.hex() not in shown
    with pytest.raises(TypeError):
        pickle.dumps(keyring)


def test_the_keyring_is_exported() -> None:
    assert {"InboxKeyring", "KeyUnavailableError", "parse_inbox_key"} <= set(crypto.__all__)
