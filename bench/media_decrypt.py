"""Benchmark: decrypt_encrypted_media on a 16 MiB file against the serial floor of its primitives.

Prints one JSON line. The floor is the sum of the medians of the four
primitives, each done alone with hashlib/cryptography: SHA-256 of the
encrypted file, HMAC-SHA256 of iv || ciphertext, AES-256-CBC decryption into
a preallocated buffer, and SHA-256 of the plaintext. ``ratio`` is the median
of decrypt_encrypted_media over that floor (below 1 means the two threads
overlapped). Measurements are interleaved round by round so drift in the
machine's load hits every figure alike. ``peak_extra_memory_ratio`` is the
tracemalloc peak during one call over the encrypted file's size;
``minor_page_faults_per_call`` shows whether the allocator handed back fresh
pages for the output (about 4096 for 16 MiB when it did), and
``decrypt_cpu_over_wall`` (over the timed calls) whether two cores were
really available (well above 1) or the machine was busy (near 1). When the ``bench``
extra (pywa) is installed, its decryptor runs on the same payload, measured
after the others.

    .venv/bin/python bench/media_decrypt.py [--rounds 31]
    taskset -c 0 .venv/bin/python bench/media_decrypt.py   # one core
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import json
import os
import platform
import statistics
import time
import tracemalloc
from collections.abc import Callable

import cryptography
from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from svc.media import decrypt_encrypted_media

SIZE = 16 * 1024 * 1024


def build_payload() -> tuple[dict[str, str], bytes, bytes]:
    """A 16 MiB plaintext encrypted per the platform scheme: (bundle, encrypted file, plaintext)."""
    plaintext = os.urandom(SIZE)
    key, hmac_key, iv = os.urandom(32), os.urandom(32), os.urandom(16)
    padder = padding.PKCS7(128).padder()
    padded = padder.update(plaintext) + padder.finalize()
    encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
    ciphertext = encryptor.update(padded) + encryptor.finalize()
    encrypted = ciphertext + hmac.new(hmac_key, iv + ciphertext, hashlib.sha256).digest()[:10]

    def b64(raw: bytes) -> str:
        return base64.b64encode(raw).decode()

    bundle = {
        "encryption_key": b64(key),
        "hmac_key": b64(hmac_key),
        "iv": b64(iv),
        "plaintext_hash": b64(hashlib.sha256(plaintext).digest()),
        "encrypted_hash": b64(hashlib.sha256(encrypted).digest()),
    }
    return bundle, encrypted, plaintext


def primitives(bundle: dict[str, str], encrypted: bytes) -> dict[str, Callable[[], object]]:
    key = base64.b64decode(bundle["encryption_key"])
    hmac_key = base64.b64decode(bundle["hmac_key"])
    iv = base64.b64decode(bundle["iv"])
    ciphertext = memoryview(encrypted)[:-10]
    out = bytearray(len(ciphertext) + 15)  # preallocated and touched once, before timing
    plaintext_view = memoryview(out)[:SIZE]

    def sha256_file() -> object:
        return hashlib.sha256(encrypted).digest()

    def hmac_iv_ciphertext() -> object:
        mac = hmac.new(hmac_key, iv, hashlib.sha256)
        mac.update(ciphertext)
        return mac.digest()

    def aes_cbc_into_buffer() -> object:
        decryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).decryptor()
        return decryptor.update_into(ciphertext, out) + len(decryptor.finalize())

    def sha256_plaintext() -> object:
        return hashlib.sha256(plaintext_view).digest()

    return {
        "sha256_file": sha256_file,
        "hmac_iv_ciphertext": hmac_iv_ciphertext,
        "aes_cbc_into_buffer": aes_cbc_into_buffer,
        "sha256_plaintext": sha256_plaintext,
    }


def pywa_decryptor() -> Callable[[bytes, dict[str, str]], bytes] | None:
    try:
        from pywa.utils import _flow_request_media_decryptor
    except ImportError:
        return None
    return _flow_request_media_decryptor  # type: ignore[no-any-return]


def interleaved_samples(
    subjects: dict[str, Callable[[], object]], rounds: int, cpu: dict[str, float] | None = None
) -> dict[str, list[float]]:
    """Milliseconds per call, one round of every subject at a time (after a warm-up round).

    ``cpu`` receives each subject's process CPU time over its wall time: near
    2 when two threads really ran at once, near 1 when the second core was
    busy elsewhere (a shared machine) and the figure measures contention.
    """
    samples: dict[str, list[float]] = {name: [] for name in subjects}
    cpu_seconds = dict.fromkeys(subjects, 0.0)
    for subject in subjects.values():
        subject()
    for _ in range(rounds):
        for name, subject in subjects.items():
            cpu_start, start = time.process_time(), time.perf_counter()
            subject()
            samples[name].append((time.perf_counter() - start) * 1000)
            cpu_seconds[name] += time.process_time() - cpu_start
    if cpu is not None:
        for name, values in samples.items():
            cpu[name] = round(cpu_seconds[name] * 1000 / sum(values), 2)
    return samples


def minor_faults_per_call(subject: Callable[[], object], calls: int) -> float | None:
    """Median minor page faults of one call (fresh 16 MiB of output costs ~4096 when faulted)."""
    try:
        import resource
    except ImportError:
        return None
    counts = []
    for _ in range(calls):
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        subject()
        counts.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    return statistics.median(counts)


def peak_extra_memory(bundle: dict[str, str], encrypted: bytes) -> float:
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        result = decrypt_encrypted_media(bundle, encrypted)
        _, peak = tracemalloc.get_traced_memory()
        del result
    finally:
        tracemalloc.stop()
    return (peak - before) / len(encrypted)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=31)
    args = parser.parse_args()

    bundle, encrypted, plaintext = build_payload()
    if decrypt_encrypted_media(bundle, encrypted) != plaintext:
        raise SystemExit("decrypt_encrypted_media returned the wrong plaintext")
    floor_parts = primitives(bundle, encrypted)
    subjects: dict[str, Callable[[], object]] = {
        "decrypt_encrypted_media": lambda: decrypt_encrypted_media(bundle, encrypted),
        **floor_parts,
    }
    cpu: dict[str, float] = {}
    samples = interleaved_samples(subjects, args.rounds, cpu)
    faults = minor_faults_per_call(lambda: decrypt_encrypted_media(bundle, encrypted), 11)
    pywa = pywa_decryptor()
    if pywa is not None:
        if pywa(encrypted, bundle) != plaintext:
            raise SystemExit("pywa returned the wrong plaintext")
        # Measured apart: its five 16 MiB temporaries reshape the heap (glibc
        # trims and regrows it), which would charge page faults to its neighbours.
        samples.update(interleaved_samples({"pywa": lambda: pywa(encrypted, bundle)}, args.rounds))
    medians = {name: statistics.median(values) for name, values in samples.items()}
    floor = sum(medians[name] for name in floor_parts)
    report: dict[str, object] = {
        "bench": "media_decrypt",
        "file_bytes": len(encrypted),
        "usable_cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "rounds": args.rounds,
        "decrypt_median_ms": round(medians["decrypt_encrypted_media"], 2),
        "serial_floor_ms": round(floor, 2),
        "ratio": round(medians["decrypt_encrypted_media"] / floor, 3),
        "floor_parts_ms": {name: round(medians[name], 2) for name in floor_parts},
        "peak_extra_memory_ratio": round(peak_extra_memory(bundle, encrypted), 3),
        "minor_page_faults_per_call": faults,
        "decrypt_cpu_over_wall": cpu["decrypt_encrypted_media"],
        "pywa_median_ms": round(medians["pywa"], 2) if "pywa" in medians else None,
        "python": platform.python_version(),
        "cryptography": cryptography.__version__,
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
