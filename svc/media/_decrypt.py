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
plaintext), each of which must run in order, and step 5 (about a quarter
of a hash here) feeds the third. The work is cut into 1 MiB steps, and for
files of 256 KiB and more, on a machine with two usable CPUs, this thread and
one short-lived helper thread each take the next step of whichever chain
has the most work left (``_Schedule``). A chain may move between threads
between steps, so both stay busy to the end and the call costs about half
the serial work, not the longer of two fixed halves (cryptography releases
the GIL on large buffers, so both threads compute at once). Every chain
runs to its end; the verdicts are then read in the order above, so a padding
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
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Final, Protocol

import anyio.to_thread

from svc import crypto

from ._errors import MediaCryptoError, MediaIntegrityError

__all__ = [
    "BUNDLE_FIELDS",
    "HMAC_TAG_SIZE",
    "PARALLEL_MIN_BYTES",
    "STEP_BYTES",
    "decrypt_encrypted_media",
    "decrypt_encrypted_media_async",
]

HMAC_TAG_SIZE: Final = 10
"""Length of the truncated HMAC-SHA256 tag that ends the encrypted file."""
PARALLEL_MIN_BYTES: Final = 256 * 1024
"""Smallest ciphertext worked on by a second thread; below it a thread costs more than it saves."""
STEP_BYTES: Final = 1024 * 1024
"""Bytes per scheduled step (~0.7 ms of SHA-256 here): small enough that the chains end together,
large enough that the per-step Python cost (~10 us) stays near 1 %."""
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
    for the order). This call blocks for the duration of the work (about 18 ms
    for 16 MiB on two cores); async code uses ``decrypt_encrypted_media_async``.
    """
    keys = _parse_bundle(bundle)
    data = _encrypted_bytes(encrypted)
    size = len(data) - HMAC_TAG_SIZE
    if size < crypto.AES_BLOCK_SIZE or size % crypto.AES_BLOCK_SIZE:
        raise MediaCryptoError(
            "invalid_ciphertext",
            "encrypted media must be a non-empty whole number of 16-byte blocks plus a 10-byte tag",
        )
    threads = 2 if size >= PARALLEL_MIN_BYTES and _usable_cpus() > 1 else 1
    return _verify_and_decrypt(keys, data, threads=threads, step_bytes=STEP_BYTES)


async def decrypt_encrypted_media_async(bundle: Mapping[str, str], encrypted: bytes) -> bytes:
    """``decrypt_encrypted_media`` on a worker thread, so trio and asyncio loops keep running."""
    return await anyio.to_thread.run_sync(decrypt_encrypted_media, bundle, encrypted)


def _verify_and_decrypt(keys: _Bundle, data: bytes, *, threads: int, step_bytes: int) -> bytes:
    """Steps 3-6 on ``threads`` threads (1 or 2), in steps of ``step_bytes``; verdicts in order.

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
    schedule = _Schedule()
    schedule.add(_hash_steps(file_hash, whole, step_bytes), _HASH_WEIGHT * len(whole))
    schedule.add(_hash_steps(mac, ciphertext, step_bytes), _HASH_WEIGHT * size)
    plaintext: _Plaintext | None
    if threads > 1:
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="svc-media-decrypt") as worker:
            helper = worker.submit(schedule.run)
            try:
                plaintext = _Plaintext.open(keys, ciphertext, schedule, step_bytes)
                schedule.run()
            except BaseException:
                schedule.close()  # e.g. no memory for the output: the helper stops too
                raise
            helper.result()
    else:
        plaintext = _Plaintext.open(keys, ciphertext, schedule, step_bytes)
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


_HASH_WEIGHT: Final = 4
"""Relative cost per byte of a SHA-256 or HMAC step (only its ratio to the next one matters)."""
_PLAINTEXT_WEIGHT: Final = 5
"""Relative cost per byte of a plaintext step: AES-CBC decryption (~1/4 of a hash) plus SHA-256."""


class _Hasher(Protocol):
    def update(self, data: memoryview) -> None: ...


def _hash_steps(hasher: _Hasher, data: memoryview, step_bytes: int) -> _Steps:
    """The chain that feeds ``data`` to ``hasher`` ``step_bytes`` at a time."""

    def step(index: int) -> None:
        hasher.update(data[index * step_bytes : (index + 1) * step_bytes])

    return _Steps(run=step, count=-(-len(data) // step_bytes))


@dataclass(frozen=True, slots=True, kw_only=True)
class _Steps:
    """A chain of ``count`` steps that must run in index order (``run(0)``, ``run(1)``, ...)."""

    run: Callable[[int], None]
    count: int


@dataclass(slots=True, kw_only=True)
class _Lane:
    """A chain's progress inside a ``_Schedule`` (mutable; guarded by the schedule's lock)."""

    steps: _Steps
    weight: float
    """Estimated cost of the whole chain; what is left is prorated by steps not yet taken."""
    taken: int = 0
    busy: bool = False

    def left(self) -> float:
        return self.weight * (self.steps.count - self.taken) / self.steps.count


class _Schedule:
    """Hands the threads that call ``run`` the next step of the chain with the most work left.

    A chain is advanced by one thread at a time, in order, but may change
    threads between steps. Taking from the longest chain first keeps two
    threads busy on three chains until the very end (each ends within about
    one step of the others), so the wall time is about half the serial work.
    A thread leaves ``run`` when every chain is finished or held by the
    other thread, which then finishes it.
    """

    __slots__ = ("_closed", "_lanes", "_lock")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lanes: list[_Lane] = []
        self._closed = False

    def add(self, steps: _Steps, weight: float) -> None:
        """Add a chain; a thread already inside ``run`` may take its steps from now on."""
        if steps.count:
            with self._lock:
                self._lanes.append(_Lane(steps=steps, weight=weight))

    def close(self) -> None:
        """Hand out no more steps (after a failure on either thread)."""
        with self._lock:
            self._closed = True

    def run(self) -> None:
        """Run steps until there is nothing left that this thread may take.

        A failing step closes the schedule (the other thread stops after its
        current step) and propagates.
        """
        while (lane := self._take()) is not None:
            try:
                lane.steps.run(lane.taken - 1)
            except BaseException:
                self.close()
                raise
            finally:
                with self._lock:
                    lane.busy = False

    def _take(self) -> _Lane | None:
        with self._lock:
            if self._closed:
                return None
            free = [lane for lane in self._lanes if not lane.busy and lane.taken < lane.steps.count]
            if not free:
                return None
            lane = max(free, key=_Lane.left)
            lane.busy = True
            lane.taken += 1
            return lane


class _Plaintext:
    """Steps 5 and 6: the exact output buffer, decrypted and hashed one step at a time.

    The padding sits in the last block, which CBC lets us decrypt first, so the
    plaintext length is known before the bulk is decrypted. The buffer is the
    storage of a fresh ``bytes`` owned by a ``BytesIO``: ``getbuffer()`` writes
    into it without a copy and ``getvalue()`` hands the same object back
    (CPython does not copy an unshared, exactly-sized buffer), so the only
    large allocation is the returned plaintext. Each step decrypts its own
    range with the preceding ciphertext block as IV, then hashes it.
    """

    __slots__ = ("_buffer", "_ciphertext", "_hash", "_iv", "_key", "_step_bytes", "_target")

    def __init__(self, keys: _Bundle, ciphertext: memoryview, length: int, step_bytes: int) -> None:
        self._key = keys.encryption_key
        self._iv = keys.iv
        self._ciphertext = ciphertext
        self._step_bytes = step_bytes
        self._hash = crypto.Sha256()
        self._buffer = io.BytesIO(bytes(length))
        self._target = self._buffer.getbuffer()

    @classmethod
    def open(
        cls, keys: _Bundle, ciphertext: memoryview, schedule: _Schedule, step_bytes: int
    ) -> _Plaintext | None:
        """Allocate the output and add its chain to ``schedule``; None for malformed padding."""
        last = crypto.aes256_cbc_last_block(keys.encryption_key, keys.iv, ciphertext)
        kept = crypto.pkcs7_unpadded_length(last)
        if kept is None:
            return None
        length = len(ciphertext) - crypto.AES_BLOCK_SIZE + kept
        plaintext = cls(keys, ciphertext, length, step_bytes)
        schedule.add(
            _Steps(run=plaintext._step, count=-(-length // step_bytes)), _PLAINTEXT_WEIGHT * length
        )
        return plaintext

    def _step(self, index: int) -> None:
        start = index * self._step_bytes
        end = start + self._step_bytes
        chain = self._ciphertext[start - crypto.AES_BLOCK_SIZE : start] if start else self._iv
        out = self._target[start:end]
        crypto.aes256_cbc_decrypt_into(self._key, chain, self._ciphertext[start:end], out)
        self._hash.update(out)

    def finish(self) -> tuple[bytes, bytes]:
        """Return (SHA-256 of the plaintext, the plaintext) once every step has run."""
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
