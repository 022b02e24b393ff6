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

Steps 3, 4 and 6 are three SHA-256 chains (the file, the tag, the
plaintext), each of which must run in order, and step 5 (cheaper than a
hash) feeds the third. For files of 256 KiB and more, on a
machine with two usable CPUs, this thread and one short-lived helper thread
each take the next step (4 MiB down to 256 KiB) of whichever chain has the
most work left (``_Schedule``). A chain may move between threads
between steps, so both stay busy to the end and the call costs about half
the serial work, not the longer of two fixed halves (cryptography releases
the GIL on large buffers, so both threads compute at once). On one CPU, or
below 256 KiB, this thread runs each chain in one piece. Every chain runs
to its end; the verdicts are then read in the order above, so a padding
error is never reported for a file whose tag failed, and the plaintext
leaves this module only after every check passed.
"""

from __future__ import annotations

import base64
import binascii
import io
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final, Protocol

import anyio.to_thread

from svc import crypto

from ._errors import MediaCryptoError, MediaIntegrityError

__all__ = [
    "BUNDLE_FIELDS",
    "HMAC_TAG_SIZE",
    "MAX_STEP_BYTES",
    "MIN_STEP_BYTES",
    "PARALLEL_MIN_BYTES",
    "decrypt_encrypted_media",
    "decrypt_encrypted_media_async",
]

HMAC_TAG_SIZE: Final = 10
"""Length of the truncated HMAC-SHA256 tag that ends the encrypted file."""
PARALLEL_MIN_BYTES: Final = 256 * 1024
"""Smallest ciphertext worked on by a second thread; below it a thread costs more than it saves."""
MIN_STEP_BYTES: Final = 256 * 1024
"""Smallest scheduled step: short enough that the two threads end close together."""
MAX_STEP_BYTES: Final = 4 * 1024 * 1024
"""Largest scheduled step: long enough that the per-step Python overhead is noise."""
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


def decrypt_encrypted_media(bundle: Mapping[str, str], encrypted: bytes) -> bytes:
    """Verify and decrypt one encrypted media file; return the plaintext.

    ``bundle`` holds the base64 strings ``encryption_key``, ``hmac_key``,
    ``iv``, ``plaintext_hash`` and ``encrypted_hash``. Raises
    ``MediaCryptoError`` or ``MediaIntegrityError`` (see the module docstring
    for the order). This call blocks for the duration of the work (CPU-bound,
    docs/performance.md); async code uses ``decrypt_encrypted_media_async``.
    """
    keys = _parse_bundle(bundle)
    data = _encrypted_bytes(encrypted)
    size = len(data) - HMAC_TAG_SIZE
    if size < crypto.AES_BLOCK_SIZE or size % crypto.AES_BLOCK_SIZE:
        raise MediaCryptoError(
            "invalid_ciphertext",
            "encrypted media must be a non-empty whole number of 16-byte blocks plus a 10-byte tag",
        )
    if size >= PARALLEL_MIN_BYTES and _usable_cpus() > 1:
        return _verify_and_decrypt(keys, data, threads=2)
    # Alone, a thread gains nothing from steps: each chain runs in one piece.
    whole_chain = size + crypto.AES_BLOCK_SIZE
    return _verify_and_decrypt(keys, data, threads=1, min_step=whole_chain, max_step=whole_chain)


async def decrypt_encrypted_media_async(bundle: Mapping[str, str], encrypted: bytes) -> bytes:
    """``decrypt_encrypted_media`` on a worker thread, so trio and asyncio loops keep running."""
    return await anyio.to_thread.run_sync(decrypt_encrypted_media, bundle, encrypted)


def _verify_and_decrypt(
    keys: _Bundle,
    data: bytes,
    *,
    threads: int,
    min_step: int = MIN_STEP_BYTES,
    max_step: int = MAX_STEP_BYTES,
) -> bytes:
    """Steps 3-6 on ``threads`` threads (1 or 2); the verdicts are read in order at the end.

    ``data`` is a block-aligned ciphertext plus the tag (checked by the
    caller). The helper thread starts on the two integrity chains before
    this thread allocates the output, so the allocation overlaps hashing.
    """
    whole = memoryview(data)
    size = len(data) - HMAC_TAG_SIZE
    ciphertext, tag = whole[:size], whole[size:]
    file_hash = crypto.Sha256()
    mac = crypto.HmacSha256(keys.hmac_key)
    mac.update(keys.iv)
    schedule = _Schedule(min_step=min_step, max_step=max_step)
    schedule.add(_hash_chain(file_hash, whole))
    schedule.add(_hash_chain(mac, ciphertext))
    plaintext: _Plaintext | None
    if threads > 1:
        failures: list[BaseException] = []
        helper = threading.Thread(
            target=_run_catching, args=(schedule, failures), name="svc-media-decrypt"
        )
        helper.start()
        try:
            plaintext = _Plaintext.open(keys, ciphertext, schedule)
            schedule.run()
        except BaseException:
            schedule.close()  # e.g. no memory for the output: the helper stops too
            raise
        finally:
            helper.join()
        if failures:
            raise failures[0]
    else:
        plaintext = _Plaintext.open(keys, ciphertext, schedule)
        schedule.run()
    # Every chain has run to its end; read the verdicts in the documented order.
    if not crypto.constant_time_equal(file_hash.digest(), keys.encrypted_hash):
        raise MediaIntegrityError(
            "encrypted_hash_mismatch", "encrypted media does not match encrypted_hash"
        )
    if not crypto.constant_time_equal(mac.digest()[:HMAC_TAG_SIZE], tag):
        raise MediaIntegrityError("hmac_mismatch", "encrypted media failed its HMAC check")
    if plaintext is None:
        raise MediaCryptoError("invalid_padding", "decrypted media has malformed PKCS#7 padding")
    digest, result = plaintext.finish()
    if not crypto.constant_time_equal(digest, keys.plaintext_hash):
        raise MediaIntegrityError(
            "plaintext_hash_mismatch", "decrypted media does not match plaintext_hash"
        )
    return result


def _run_catching(schedule: _Schedule, failures: list[BaseException]) -> None:
    """The helper thread's body: its failure is handed to the calling thread, which re-raises it."""
    try:
        schedule.run()
    except BaseException as error:  # noqa: BLE001 - re-raised by the caller after the join
        failures.append(error)


_HASH_COST: Final = 4
"""Relative cost per byte of SHA-256 or HMAC (only its ratio to the next one matters)."""
_PLAINTEXT_COST: Final = 5
"""Relative cost per byte of AES-CBC decryption plus SHA-256 (decryption is cheaper than a hash)."""
_STEP_SHARE: Final = 8
"""A step covers this fraction (1/8) of all the bytes left, within the step bounds."""


class _Hasher(Protocol):
    def update(self, data: memoryview) -> None: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class _Chain:
    """Work over ``size`` bytes done front to back, one range at a time: ``run(start, stop)``."""

    run: Callable[[int, int], None]
    size: int
    cost: float
    """Relative cost per byte, to compare the work left in different chains."""


def _hash_chain(hasher: _Hasher, data: memoryview) -> _Chain:
    """The chain that feeds ``data`` to ``hasher``."""

    def run(start: int, stop: int) -> None:
        hasher.update(data[start:stop])

    return _Chain(run=run, size=len(data), cost=_HASH_COST)


@dataclass(slots=True, kw_only=True)
class _Lane:
    """A chain's progress inside a ``_Schedule`` (mutable; guarded by the schedule's lock)."""

    chain: _Chain
    handed_out: int = 0
    busy: bool = False

    def left(self) -> float:
        return (self.chain.size - self.handed_out) * self.chain.cost


class _Schedule:
    """Hands each thread that calls ``run`` the next range of the chain with the most work left.

    A chain is advanced by one thread at a time, front to back, but may
    change threads between steps. Taking from the chain with the most work
    left keeps two threads busy on three chains until the end, so the wall
    time is about half the serial work. Steps shrink as the work runs out
    (an eighth of all the bytes left, from ``max_step`` down to
    ``min_step``): few large steps while there is plenty to share, small
    ones at the end so the threads finish together. A thread leaves ``run``
    when every chain is finished or held by the other thread, which then
    finishes it.
    """

    __slots__ = ("_closed", "_lanes", "_lock", "_max_step", "_min_step")

    def __init__(self, *, min_step: int, max_step: int) -> None:
        if min_step <= 0 or min_step % crypto.AES_BLOCK_SIZE or max_step < min_step:
            raise ValueError("steps must be positive whole AES blocks, min_step <= max_step")
        self._lock = threading.Lock()
        self._lanes: list[_Lane] = []
        self._closed = False
        self._min_step = min_step
        self._max_step = max_step - max_step % crypto.AES_BLOCK_SIZE

    def add(self, chain: _Chain) -> None:
        """Add a chain; a thread already inside ``run`` may take its steps from now on."""
        if chain.size:
            with self._lock:
                self._lanes.append(_Lane(chain=chain))

    def close(self) -> None:
        """Hand out no more steps (after a failure on either thread)."""
        with self._lock:
            self._closed = True

    def run(self) -> None:
        """Run steps until there is nothing left that this thread may take.

        A failing step closes the schedule (the other thread stops after its
        current step) and propagates.
        """
        while (taken := self._take()) is not None:
            lane, start, stop = taken
            try:
                lane.chain.run(start, stop)
            except BaseException:
                self.close()
                raise
            finally:
                with self._lock:
                    lane.busy = False

    def _take(self) -> tuple[_Lane, int, int] | None:
        with self._lock:
            if self._closed:
                return None
            free = [
                lane for lane in self._lanes if not lane.busy and lane.handed_out < lane.chain.size
            ]
            if not free:
                return None
            lane = max(free, key=_Lane.left)
            left = sum(each.chain.size - each.handed_out for each in self._lanes)
            step = min(self._max_step, max(self._min_step, left // _STEP_SHARE))
            step -= step % crypto.AES_BLOCK_SIZE
            start = lane.handed_out
            lane.handed_out = min(lane.chain.size, start + step)
            lane.busy = True
            return lane, start, lane.handed_out


class _Plaintext:
    """Steps 5 and 6: the exact output buffer, decrypted and hashed one range at a time.

    The padding sits in the last block, which CBC lets us decrypt first, so the
    plaintext length is known before the bulk is decrypted. The buffer is the
    storage of a fresh ``bytes`` owned by a ``BytesIO``: ``getbuffer()`` writes
    into it without a copy and ``getvalue()`` hands the same object back
    (CPython does not copy an unshared, exactly-sized buffer), so the only
    large allocation is the returned plaintext. Each range (starting on a
    block edge) is decrypted with the preceding ciphertext block as its IV,
    then hashed.
    """

    __slots__ = ("_buffer", "_ciphertext", "_hash", "_iv", "_key", "_target")

    def __init__(self, keys: _Bundle, ciphertext: memoryview, length: int) -> None:
        self._key = keys.encryption_key
        self._iv = keys.iv
        self._ciphertext = ciphertext
        self._hash = crypto.Sha256()
        self._buffer = io.BytesIO(bytes(length))
        self._target = self._buffer.getbuffer()

    @classmethod
    def open(cls, keys: _Bundle, ciphertext: memoryview, schedule: _Schedule) -> _Plaintext | None:
        """Allocate the output and add its chain to ``schedule``; None for malformed padding."""
        last = crypto.aes256_cbc_last_block(keys.encryption_key, keys.iv, ciphertext)
        kept = crypto.pkcs7_unpadded_length(last)
        if kept is None:
            return None
        length = len(ciphertext) - crypto.AES_BLOCK_SIZE + kept
        plaintext = cls(keys, ciphertext, length)
        schedule.add(_Chain(run=plaintext._run, size=length, cost=_PLAINTEXT_COST))
        return plaintext

    def _run(self, start: int, stop: int) -> None:
        block = crypto.AES_BLOCK_SIZE
        chain = self._ciphertext[start - block : start] if start else self._iv
        end = start + -(-(stop - start) // block) * block
        out = self._target[start:stop]
        crypto.aes256_cbc_decrypt_into(self._key, chain, self._ciphertext[start:end], out)
        self._hash.update(out)

    def finish(self) -> tuple[bytes, bytes]:
        """Return (SHA-256 of the plaintext, the plaintext) once every range has run."""
        self._target.release()
        return self._hash.digest(), self._buffer.getvalue()


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
