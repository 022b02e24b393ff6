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

``limit`` is the hardware's limit through the installed OpenSSL (the one
cryptography is built with), measured in the same rounds on the same
buffer: single-core SHA-256, HMAC-SHA256 and AES-256-CBC decryption of the
16 MiB ciphertext through cryptography's own objects, with nothing of svc in
between. Its ``serial_ms`` is the decrypt's work at those speeds (two
SHA-256 passes, one HMAC, one AES pass) and ``two_core_ms`` the best two
cores can do with it: half of that, or one SHA-256 pass if longer (a hash
chain cannot be split). ``decrypt_over_two_core_limit`` says how far the
decrypt is from it (1.0 would be perfect). ``two_at_once_over_one`` is the
wall time of two SHA-256 passes run at once on two threads over one pass
alone: above 1 when the two cores slow each other down (shared core
resources, clock), which no implementation escapes. ``--wait-idle 0.92`` waits (up to
two minutes) for the machine to be that idle first and reports what it saw.

    .venv/bin/python bench/media_decrypt.py [--rounds 31] [--wait-idle 0.92]
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
import threading
import time
import tracemalloc
from collections.abc import Callable

import cryptography
from cryptography.hazmat.backends.openssl import backend as openssl_backend
from cryptography.hazmat.primitives import hashes, padding
from cryptography.hazmat.primitives import hmac as crypto_hmac
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


def hardware_limits(bundle: dict[str, str], encrypted: bytes) -> dict[str, Callable[[], object]]:
    """Single-core primitives straight through cryptography (its OpenSSL) on the ciphertext."""
    key = base64.b64decode(bundle["encryption_key"])
    hmac_key = base64.b64decode(bundle["hmac_key"])
    iv = base64.b64decode(bundle["iv"])
    ciphertext = memoryview(encrypted)[:-10]
    out = bytearray(len(ciphertext) + 15)

    def sha256() -> object:
        digest = hashes.Hash(hashes.SHA256())
        digest.update(ciphertext)
        return digest.finalize()

    def hmac_sha256() -> object:
        mac = crypto_hmac.HMAC(hmac_key, hashes.SHA256())
        mac.update(ciphertext)
        return mac.finalize()

    def aes256_cbc_decrypt() -> object:
        decryptor = Cipher(algorithms.AES256(key), modes.CBC(iv)).decryptor()
        return decryptor.update_into(ciphertext, out)

    def two_sha256_at_once() -> object:
        # One pass on a helper thread, one here: what the two cores give when both hash.
        helper = threading.Thread(target=sha256)
        helper.start()
        sha256()
        helper.join()
        return None

    return {
        "limit_sha256": sha256,
        "limit_hmac_sha256": hmac_sha256,
        "limit_aes256_cbc_decrypt": aes256_cbc_decrypt,
        "limit_two_sha256_at_once": two_sha256_at_once,
    }


def limit_report(medians: dict[str, float], size: int) -> tuple[dict[str, object], float]:
    """Throughputs, the decrypt's work at those speeds on one core and on two; and the latter."""
    sha, mac, aes = (
        medians["limit_sha256"],
        medians["limit_hmac_sha256"],
        medians["limit_aes256_cbc_decrypt"],
    )
    serial = 2 * sha + mac + aes
    two_core = max(serial / 2, sha, mac)
    report = {
        "openssl": openssl_backend.openssl_version_text(),
        "sha256_gb_per_s": round(size / sha / 1e6, 2),
        "hmac_sha256_gb_per_s": round(size / mac / 1e6, 2),
        "aes256_cbc_decrypt_gb_per_s": round(size / aes / 1e6, 2),
        "serial_ms": round(serial, 2),
        "two_core_ms": round(two_core, 2),
        "two_sha256_at_once_ms": round(medians["limit_two_sha256_at_once"], 2),
        "two_at_once_over_one": round(medians["limit_two_sha256_at_once"] / sha, 3),
    }
    return report, two_core


def idle_fraction(seconds: float = 0.5) -> float | None:
    """Share of CPU time the whole machine spent idle over ``seconds`` (Linux /proc/stat)."""

    def read() -> tuple[int, int]:
        with open("/proc/stat", encoding="ascii") as stat:
            ticks = [int(part) for part in stat.readline().split()[1:]]
        return ticks[3] + ticks[4], sum(ticks)

    try:
        idle_before, total_before = read()
        time.sleep(seconds)
        idle_after, total_after = read()
    except (OSError, ValueError, IndexError):
        return None
    return (idle_after - idle_before) / max(1, total_after - total_before)


def wait_idle(threshold: float, timeout: float = 120.0) -> float | None:
    """Wait (at most ``timeout`` s) for the machine to be ``threshold`` idle; return the reading."""
    deadline = time.monotonic() + timeout
    seen = idle_fraction()
    while seen is not None and seen < threshold and time.monotonic() < deadline:
        seen = idle_fraction()
    return seen


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
    parser.add_argument("--wait-idle", type=float, default=None, metavar="FRACTION")
    args = parser.parse_args()

    bundle, encrypted, plaintext = build_payload()
    if decrypt_encrypted_media(bundle, encrypted) != plaintext:
        raise SystemExit("decrypt_encrypted_media returned the wrong plaintext")
    floor_parts = primitives(bundle, encrypted)
    limits = hardware_limits(bundle, encrypted)
    subjects: dict[str, Callable[[], object]] = {
        "decrypt_encrypted_media": lambda: decrypt_encrypted_media(bundle, encrypted),
        **floor_parts,
        **limits,
    }
    idle = wait_idle(args.wait_idle) if args.wait_idle is not None else idle_fraction()
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
    limit, two_core = limit_report(medians, len(encrypted) - 10)
    decrypt = medians["decrypt_encrypted_media"]
    report: dict[str, object] = {
        "bench": "media_decrypt",
        "file_bytes": len(encrypted),
        "usable_cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "rounds": args.rounds,
        "machine_idle_before": None if idle is None else round(idle, 3),
        "decrypt_median_ms": round(decrypt, 2),
        "serial_floor_ms": round(floor, 2),
        "ratio": round(decrypt / floor, 3),
        "floor_parts_ms": {name: round(medians[name], 2) for name in floor_parts},
        "limit": limit,
        "decrypt_over_two_core_limit": round(decrypt / two_core, 3),
        "two_core_limit_over_floor": round(two_core / floor, 3),
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
