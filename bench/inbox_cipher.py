"""Inbox cipher: encrypt + decrypt of one serialized update, per candidate AEAD, in one run.

Prints one JSON line. Each candidate seals and opens the same ~1.5 KB update
(a message change as the platform sends it, serialized as JSON) under a
32-byte key, with fresh randomness per item as the inbox would use it:

- ``aes_gcm_random_nonce``: AES-256-GCM (cryptography), one cipher object per
  key, a random 96-bit nonce per item;
- ``aes_gcm_key_per_row``: AES-256-GCM under a key derived per item
  (HKDF-SHA256 over a random 16-byte salt), so no nonce is ever reused under a key;
- ``aes_gcm_siv_random_nonce``: AES-256-GCM-SIV (cryptography), a random 96-bit
  nonce (a repeated nonce leaks only whether two plaintexts are equal);
- ``xsalsa20_poly1305``: libsodium's SecretBox through pynacl, a random 192-bit nonce;
- ``xchacha20_poly1305``: libsodium's XChaCha20-Poly1305-IETF through pynacl, a
  random 192-bit nonce, with associated data (the item's key);
- ``keyring`` (svc.crypto's ``InboxKeyring``, the chosen cipher with its
  framing: version, key id, nonce, associated data).

Rounds are interleaved (each candidate once per round) so the machine's drift
hits every figure alike; each figure is the median of the rounds, with the
rounds' min and max. ``ratio_*`` is a candidate's median over
``aes_gcm_random_nonce``'s, the fastest thing cryptography offers here.

    .venv/bin/python bench/inbox_cipher.py [--rounds 15] [--items 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from collections.abc import Callable
from typing import Any

import cryptography
import nacl
import nacl.bindings
import nacl.secret
import nacl.utils
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, AESGCMSIV
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from svc.crypto import InboxKeyring

AAD = b"wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA="


def realistic_update() -> bytes:
    """One inbound text message change with its contact and metadata, about 1.5 KB of JSON."""
    value = {
        "messaging_product": "whatsapp",
        "metadata": {"display_phone_number": "15550783881", "phone_number_id": "106540352242922"},
        "contacts": [
            {
                "profile": {"name": "Sheena Nelson", "username": "sheena.nelson"},
                "wa_id": "16505551234",
                "user_id": "US.13491208655302741918",
            }
        ],
        "messages": [
            {
                "context": {
                    "from": "15550783881",
                    "id": "wamid.HBgLMTY1MDM4Nzk0MzkVAgARGBJDRjI3QjBBNjFGN0MwQjQyQjQA",
                },
                "from": "16505551234",
                "from_user_id": "US.13491208655302741918",
                "id": AAD.decode(),
                "timestamp": "1749416383",
                "type": "text",
                "text": {
                    "body": (
                        "Hi! I ordered the blue jacket last week (order 4471) and it has not "
                        "arrived yet. The tracking page says it left the warehouse on Monday "
                        "but nothing since. Could you check where it is, and if it is lost, "
                        "send a replacement in size M instead of L? I also want to ask "
                        "whether it comes in green. Thanks a lot, I need it before the trip "
                        "on the 20th, otherwise please cancel and refund the order. "
                    )
                    * 2
                },
            }
        ],
        "entry_id": "102290129340398",
        "field": "messages",
        "received_at": 1749416384,
        "kind": "message",
    }
    return json.dumps(value, separators=(",", ":")).encode()


def candidates(plaintext: bytes) -> dict[str, Callable[[], bytes]]:
    key = os.urandom(32)
    gcm = AESGCM(key)
    siv = AESGCMSIV(key)
    box = nacl.secret.SecretBox(key)
    xchacha_encrypt = nacl.bindings.crypto_aead_xchacha20poly1305_ietf_encrypt
    xchacha_decrypt = nacl.bindings.crypto_aead_xchacha20poly1305_ietf_decrypt
    keyring = InboxKeyring([key])

    def aes_gcm_random_nonce() -> bytes:
        nonce = os.urandom(12)
        sealed = gcm.encrypt(nonce, plaintext, AAD)
        return gcm.decrypt(nonce, sealed, AAD)

    def row_key(salt: bytes) -> AESGCM:
        hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=salt, info=b"svc inbox row")
        return AESGCM(hkdf.derive(key))

    def aes_gcm_key_per_row() -> bytes:
        salt = os.urandom(16)
        sealed = row_key(salt).encrypt(bytes(12), plaintext, AAD)
        # The reader derives the row key again from the stored salt.
        return row_key(salt).decrypt(bytes(12), sealed, AAD)

    def aes_gcm_siv_random_nonce() -> bytes:
        nonce = os.urandom(12)
        sealed = siv.encrypt(nonce, plaintext, AAD)
        return siv.decrypt(nonce, sealed, AAD)

    def xsalsa20_poly1305() -> bytes:
        sealed = box.encrypt(plaintext, nacl.utils.random(24))
        return box.decrypt(sealed)

    def xchacha20_poly1305() -> bytes:
        nonce = nacl.utils.random(24)
        sealed = xchacha_encrypt(plaintext, AAD, nonce, key)
        return xchacha_decrypt(sealed, AAD, nonce, key)

    def keyring_round_trip() -> bytes:
        return keyring.decrypt(keyring.encrypt(plaintext, AAD), AAD)

    return {
        "aes_gcm_random_nonce": aes_gcm_random_nonce,
        "aes_gcm_key_per_row": aes_gcm_key_per_row,
        "aes_gcm_siv_random_nonce": aes_gcm_siv_random_nonce,
        "xsalsa20_poly1305": xsalsa20_poly1305,
        "xchacha20_poly1305": xchacha20_poly1305,
        "keyring": keyring_round_trip,
    }


def time_per_item_us(call: Callable[[], bytes], items: int) -> float:
    start = time.perf_counter()
    for _ in range(items):
        call()
    return (time.perf_counter() - start) / items * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--items", type=int, default=2000, help="items per candidate per round")
    args = parser.parse_args()
    plaintext = realistic_update()
    calls = candidates(plaintext)
    for call in calls.values():  # every candidate round-trips the update before timing
        assert call() == plaintext
    samples: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(args.rounds):
        for name, call in calls.items():
            samples[name].append(time_per_item_us(call, args.items))
    baseline = statistics.median(samples["aes_gcm_random_nonce"])
    figures: dict[str, Any] = {}
    for name, values in samples.items():
        median = statistics.median(values)
        figures[name] = {
            "us_per_update": round(median, 2),
            "min": round(min(values), 2),
            "max": round(max(values), 2),
        }
        if name != "aes_gcm_random_nonce":
            figures[f"ratio_{name}"] = round(median / baseline, 3)
    line = {
        "bench": "inbox_cipher",
        "machine": f"{platform.machine()} {os.cpu_count()} cpu, {platform.python_version()}",
        "cryptography": cryptography.__version__,
        "pynacl": nacl.__version__,
        "update_bytes": len(plaintext),
        "rounds": args.rounds,
        "items_per_round": args.items,
        "unit": "microseconds per update, encrypt + decrypt",
        **figures,
    }
    print(json.dumps(line))


if __name__ == "__main__":
    main()
