"""decrypt_encrypted_media: known answers, every tamper region, padding vs tag, bundle checks."""

from __future__ import annotations

import base64
import hashlib
import itertools
import random
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from svc.media import (
    MediaCryptoError,
    MediaError,
    MediaIntegrityError,
    decrypt_encrypted_media,
    decrypt_encrypted_media_async,
)
from svc.media._decrypt import (
    MAX_STEP_BYTES,
    MIN_STEP_BYTES,
    _Chain,
    _parse_bundle,
    _Schedule,
    _verify_and_decrypt,
)

from ._vectors import (
    b64,
    encrypt_raw_blocks,
    flip,
    flip_b64,
    make_vector,
    reference_decrypt,
    rehash,
    seal,
)

# 1 000 bytes takes the single-thread path; 300 000 the two-thread path.
SIZES = [1_000, 300_000]


def plaintext_of(size: int, seed: int = 1) -> bytes:
    return random.Random(seed).randbytes(size)


def code_of(bundle: dict[str, str], encrypted: bytes) -> str:
    with pytest.raises(MediaError) as caught:
        decrypt_encrypted_media(bundle, encrypted)
    return caught.value.code


# --- known answers


@pytest.mark.parametrize("size", [0, 1, 15, 16, 17, 31, 32, 33, 4095, 4096, 262_143, 300_001])
def test_known_answer_round_trip(size: int) -> None:
    plaintext = plaintext_of(size)
    bundle, encrypted = make_vector(plaintext)
    assert decrypt_encrypted_media(bundle, encrypted) == plaintext


def test_fixed_vector() -> None:
    key, hmac_key, iv = bytes(range(32)), bytes(range(32, 64)), bytes(range(64, 80))
    plaintext = b"WhatsApp Flows media test vector"
    ciphertext = encrypt_raw_blocks(key, iv, plaintext + bytes([16]) * 16)
    bundle, encrypted = seal(
        key=key,
        hmac_key=hmac_key,
        iv=iv,
        ciphertext=ciphertext,
        plaintext_hash=hashlib.sha256(plaintext).digest(),
    )
    assert len(encrypted) == 48 + 10
    assert decrypt_encrypted_media(bundle, encrypted) == plaintext


@settings(max_examples=60, deadline=None)
@given(plaintext=st.binary(max_size=200), seed=st.integers(0, 2**16))
def test_round_trip_property(plaintext: bytes, seed: int) -> None:
    bundle, encrypted = make_vector(plaintext, seed=seed)
    assert decrypt_encrypted_media(bundle, encrypted) == plaintext


def test_accepts_bytearray_and_byte_memoryview() -> None:
    plaintext = plaintext_of(100)
    bundle, encrypted = make_vector(plaintext)
    assert decrypt_encrypted_media(bundle, bytearray(encrypted)) == plaintext
    assert decrypt_encrypted_media(bundle, memoryview(encrypted)) == plaintext


def test_returns_immutable_bytes() -> None:
    bundle, encrypted = make_vector(plaintext_of(5_000))
    assert type(decrypt_encrypted_media(bundle, encrypted)) is bytes


async def test_async_wrapper_runs_on_a_thread() -> None:
    plaintext = plaintext_of(300_000)
    bundle, encrypted = make_vector(plaintext)
    assert await decrypt_encrypted_media_async(bundle, encrypted) == plaintext
    with pytest.raises(MediaIntegrityError):
        await decrypt_encrypted_media_async(bundle, flip(encrypted, 0))


# --- tampering, region by region


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("where", ["ciphertext_start", "ciphertext_middle", "last_block", "tag"])
def test_tampered_file_fails_the_encrypted_hash_first(size: int, where: str) -> None:
    bundle, encrypted = make_vector(plaintext_of(size))
    index = {
        "ciphertext_start": 0,
        "ciphertext_middle": (len(encrypted) - 10) // 2,
        "last_block": len(encrypted) - 11,
        "tag": len(encrypted) - 1,
    }[where]
    assert code_of(bundle, flip(encrypted, index)) == "encrypted_hash_mismatch"


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize(
    "index_of",
    [
        lambda n: 0,  # first ciphertext byte
        lambda n: (n - 10) // 2,  # middle of the ciphertext
        lambda n: n - 26,  # first byte of the last block
        lambda n: n - 11,  # last ciphertext byte (the padding byte's block)
        lambda n: n - 10,  # first tag byte
        lambda n: n - 1,  # last tag byte
    ],
)
def test_tampered_file_with_matching_hash_fails_the_tag(size: int, index_of: object) -> None:
    bundle, encrypted = make_vector(plaintext_of(size))
    assert callable(index_of)
    tampered = flip(encrypted, index_of(len(encrypted)))
    assert code_of(rehash(bundle, tampered), tampered) == "hmac_mismatch"


@pytest.mark.parametrize("size", SIZES)
def test_tampered_iv_fails_the_tag(size: int) -> None:
    bundle, encrypted = make_vector(plaintext_of(size))
    assert code_of({**bundle, "iv": flip_b64(bundle["iv"], 5)}, encrypted) == "hmac_mismatch"


@pytest.mark.parametrize("size", SIZES)
def test_tampered_hmac_key_fails_the_tag(size: int) -> None:
    bundle, encrypted = make_vector(plaintext_of(size))
    tampered = {**bundle, "hmac_key": flip_b64(bundle["hmac_key"], 31)}
    assert code_of(tampered, encrypted) == "hmac_mismatch"


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("byte", [0, 31])
def test_tampered_encrypted_hash(size: int, byte: int) -> None:
    bundle, encrypted = make_vector(plaintext_of(size))
    tampered = {**bundle, "encrypted_hash": flip_b64(bundle["encrypted_hash"], byte)}
    assert code_of(tampered, encrypted) == "encrypted_hash_mismatch"


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("byte", [0, 31])
def test_tampered_plaintext_hash(size: int, byte: int) -> None:
    bundle, encrypted = make_vector(plaintext_of(size))
    tampered = {**bundle, "plaintext_hash": flip_b64(bundle["plaintext_hash"], byte)}
    with pytest.raises(MediaIntegrityError) as error:
        decrypt_encrypted_media(tampered, encrypted)
    assert error.value.code == "plaintext_hash_mismatch"


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("seed", range(4))
def test_tampered_encryption_key(size: int, seed: int) -> None:
    bundle, encrypted = make_vector(plaintext_of(size), seed=seed)
    tampered = {**bundle, "encryption_key": flip_b64(bundle["encryption_key"], seed)}
    # The wrong key decrypts to noise: the independent decryptor says whether that
    # noise happens to end in valid padding.
    expected = (
        "invalid_padding"
        if reference_decrypt(tampered, encrypted) is None
        else "plaintext_hash_mismatch"
    )
    assert code_of(tampered, encrypted) == expected


# --- padding versus tag


def padding_broken_vector(last_byte: int, *, blocks: int) -> tuple[dict[str, str], bytes]:
    """A file whose tag and hashes are valid but whose plaintext padding is not."""
    rng = random.Random(last_byte)
    key, hmac_key, iv = rng.randbytes(32), rng.randbytes(32), rng.randbytes(16)
    raw = bytearray(rng.randbytes(16 * blocks))
    raw[-1] = last_byte
    if last_byte == 4:  # claims 4 bytes of padding, but the others disagree
        raw[-4:-1] = b"\x04\x04\x05"
    ciphertext = encrypt_raw_blocks(key, iv, bytes(raw))
    return seal(
        key=key,
        hmac_key=hmac_key,
        iv=iv,
        ciphertext=ciphertext,
        plaintext_hash=hashlib.sha256(bytes(raw)).digest(),
    )


@pytest.mark.parametrize("blocks", [1, 2, 20_000])
@pytest.mark.parametrize("last_byte", [0, 4, 17, 255])
def test_valid_tag_but_bad_padding_is_invalid_padding(blocks: int, last_byte: int) -> None:
    bundle, encrypted = padding_broken_vector(last_byte, blocks=blocks)
    with pytest.raises(MediaCryptoError) as error:
        decrypt_encrypted_media(bundle, encrypted)
    assert error.value.code == "invalid_padding"


@pytest.mark.parametrize("blocks", [1, 20_000])
@pytest.mark.parametrize("last_byte", [0, 17])
def test_bad_tag_and_bad_padding_reports_the_tag(blocks: int, last_byte: int) -> None:
    bundle, encrypted = padding_broken_vector(last_byte, blocks=blocks)
    tampered = flip(encrypted, len(encrypted) - 3)
    assert code_of(rehash(bundle, tampered), tampered) == "hmac_mismatch"
    assert code_of(bundle, tampered) == "encrypted_hash_mismatch"


# --- ciphertext shape


@pytest.mark.parametrize("length", [0, 1, 9, 10, 11, 25, 27, 10 + 17, 10 + 33])
def test_misaligned_or_empty_ciphertext(length: int) -> None:
    bundle, _ = make_vector(b"x")
    with pytest.raises(MediaCryptoError) as error:
        decrypt_encrypted_media(bundle, bytes(length))
    assert error.value.code == "invalid_ciphertext"


@pytest.mark.parametrize("value", ["text", None, 42, memoryview(b"\x00" * 26).cast("B", (2, 13))])
def test_non_bytes_input(value: object) -> None:
    bundle, _ = make_vector(b"x")
    with pytest.raises(MediaCryptoError) as error:
        decrypt_encrypted_media(bundle, value)
    assert error.value.code == "invalid_ciphertext"


# --- bundle checks


@pytest.mark.parametrize(
    ("field", "size", "code"),
    [
        ("encryption_key", 16, "invalid_key_length"),
        ("encryption_key", 31, "invalid_key_length"),
        ("encryption_key", 33, "invalid_key_length"),
        ("hmac_key", 16, "invalid_key_length"),
        ("hmac_key", 0, "invalid_key_length"),
        ("iv", 8, "invalid_iv_length"),
        ("iv", 32, "invalid_iv_length"),
        ("plaintext_hash", 31, "invalid_hash_length"),
        ("encrypted_hash", 64, "invalid_hash_length"),
    ],
)
def test_wrong_lengths(field: str, size: int, code: str) -> None:
    bundle, encrypted = make_vector(b"hello")
    with pytest.raises(MediaCryptoError) as error:
        decrypt_encrypted_media({**bundle, field: b64(bytes(size))}, encrypted)
    assert error.value.code == code
    assert field in str(error.value)


@pytest.mark.parametrize(
    "value", ["not base64!", "abc", "YWJj ZGVm", "-_-_", "é" * 4, "QUJDRA", "QUJDRA==="]
)
@pytest.mark.parametrize("field", ["encryption_key", "hmac_key", "iv", "encrypted_hash"])
def test_bad_base64(field: str, value: str) -> None:
    bundle, encrypted = make_vector(b"hello")
    with pytest.raises(MediaCryptoError) as error:
        decrypt_encrypted_media({**bundle, field: value}, encrypted)
    assert error.value.code == "invalid_base64"


@pytest.mark.parametrize("missing", ["encryption_key", "hmac_key", "iv", "plaintext_hash"])
def test_missing_bundle_field(missing: str) -> None:
    bundle, encrypted = make_vector(b"hello")
    del bundle[missing]
    with pytest.raises(MediaCryptoError) as error:
        decrypt_encrypted_media(bundle, encrypted)
    assert error.value.code == "invalid_bundle"


@pytest.mark.parametrize("bundle", [None, "bundle", [], {"encryption_key": b"raw"}])
def test_bundle_must_be_a_mapping_of_strings(bundle: object) -> None:
    _, encrypted = make_vector(b"hello")
    with pytest.raises(MediaCryptoError) as error:
        decrypt_encrypted_media(bundle, encrypted)
    assert error.value.code == "invalid_bundle"


def test_bundle_checks_come_before_the_ciphertext_shape() -> None:
    bundle, _ = make_vector(b"hello")
    with pytest.raises(MediaCryptoError) as error:
        decrypt_encrypted_media({**bundle, "iv": "!"}, b"short")
    assert error.value.code == "invalid_base64"


def test_messages_never_carry_key_material() -> None:
    bundle, encrypted = make_vector(plaintext_of(64))
    cases = [
        ({**bundle, "encryption_key": bundle["encryption_key"][:-4]}, encrypted),
        ({**bundle, "iv": flip_b64(bundle["iv"])}, encrypted),
        ({**bundle, "plaintext_hash": flip_b64(bundle["plaintext_hash"])}, encrypted),
        (bundle, flip(encrypted, 3)),
    ]
    secrets = list(bundle.values()) + [base64.b64decode(value).hex() for value in bundle.values()]
    for case_bundle, case_file in cases:
        with pytest.raises(MediaError) as caught:
            decrypt_encrypted_media(case_bundle, case_file)
        text = f"{caught.value} {caught.value!r}"
        assert not any(secret in text for secret in secrets)


# --- the stepped, two-thread schedule


@pytest.mark.parametrize(
    "size",
    [MAX_STEP_BYTES - 17, MAX_STEP_BYTES, MAX_STEP_BYTES + 1, 3 * MIN_STEP_BYTES + 16],
)
def test_round_trip_across_step_boundaries(size: int) -> None:
    # Plaintexts ending just before, on and after step edges, through the public path
    # (two threads on a machine with two usable CPUs).
    plaintext = plaintext_of(size, seed=size)
    bundle, encrypted = make_vector(plaintext)
    assert decrypt_encrypted_media(bundle, encrypted) == plaintext
    edge = min(MAX_STEP_BYTES, len(encrypted)) - 1
    assert code_of(bundle, flip(encrypted, edge)) == "encrypted_hash_mismatch"


TAMPERS = ["none", "file_byte", "file_byte_rehashed", "plaintext_hash", "padding"]


@settings(max_examples=80, deadline=None)
@given(
    size=st.integers(0, 700),
    min_blocks=st.integers(1, 3),
    spread=st.integers(1, 4),
    threads=st.sampled_from([1, 2]),
    tamper=st.sampled_from(TAMPERS),
    where=st.integers(0, 2**16),
)
def test_any_step_bounds_and_thread_count_give_the_same_verdict(
    size: int, min_blocks: int, spread: int, threads: int, tamper: str, where: int
) -> None:
    # Tiny steps make many steps per chain, so the chains change threads often.
    plaintext = plaintext_of(size, seed=where)
    if tamper == "padding":
        bad_last_byte = [0, 4, 17, 255][where % 4]
        bundle, encrypted = padding_broken_vector(bad_last_byte, blocks=size // 16 + 1)
        expected: bytes | str = "invalid_padding"
    else:
        bundle, encrypted = make_vector(plaintext, seed=where)
        expected = plaintext
    if tamper == "file_byte":
        encrypted, expected = flip(encrypted, where % len(encrypted)), "encrypted_hash_mismatch"
    elif tamper == "file_byte_rehashed":
        encrypted = flip(encrypted, where % len(encrypted))
        bundle, expected = rehash(bundle, encrypted), "hmac_mismatch"
    elif tamper == "plaintext_hash":
        bundle = {**bundle, "plaintext_hash": flip_b64(bundle["plaintext_hash"], where % 32)}
        expected = "plaintext_hash_mismatch"
    keys = _parse_bundle(bundle)
    try:
        outcome: bytes | str = _verify_and_decrypt(
            keys,
            encrypted,
            threads=threads,
            min_step=16 * min_blocks,
            max_step=16 * min_blocks * spread,
        )
    except MediaError as error:
        outcome = error.code
    assert outcome == expected


@pytest.mark.parametrize("blocks", [2, 40])
def test_bad_tag_outranks_bad_padding_with_small_steps(blocks: int) -> None:
    bundle, encrypted = padding_broken_vector(0, blocks=blocks)
    tampered = flip(encrypted, 5)
    for threads in (1, 2):
        with pytest.raises(MediaIntegrityError) as error:
            _verify_and_decrypt(
                _parse_bundle(rehash(bundle, tampered)),
                tampered,
                threads=threads,
                min_step=16,
                max_step=16,
            )
        assert error.value.code == "hmac_mismatch"


def recording_chain(name: str, size: int, cost: float, log: list[str]) -> _Chain:
    def run(start: int, stop: int) -> None:
        log.append(f"{name}{start}-{stop}")

    return _Chain(run=run, size=size, cost=cost)


def test_schedule_takes_from_the_chain_with_the_most_work_left() -> None:
    log: list[str] = []
    schedule = _Schedule(min_step=16, max_step=16)
    schedule.add(recording_chain("a", 32, 1.0, log))
    schedule.add(recording_chain("b", 48, 2.0, log))
    schedule.add(recording_chain("c", 0, 9.0, log))  # nothing to do: ignored
    schedule.run()
    # Work left b 96 > a 32; b 64 > a 32; a 32 ties b 32 (the first added wins); b 32 > a 16; a.
    assert log == ["b0-16", "b16-32", "a0-16", "b32-48", "a16-32"]


def test_steps_shrink_from_the_largest_to_the_smallest_as_work_runs_out() -> None:
    log: list[str] = []
    schedule = _Schedule(min_step=16, max_step=16 * 8)
    schedule.add(recording_chain("a", 16 * 100 + 5, 1.0, log))
    schedule.run()
    ranges = [tuple(int(edge) for edge in entry[1:].split("-")) for entry in log]
    assert ranges[0] == (0, 128)
    assert ranges[-1][1] == 16 * 100 + 5
    assert all(left[1] == right[0] for left, right in itertools.pairwise(ranges))
    sizes = [stop - start for start, stop in ranges]
    assert sizes[:-1] == sorted(sizes[:-1], reverse=True)
    assert all(size % 16 == 0 for size in sizes[:-1])
    assert sizes[-3:-1] == [16, 16]


def test_schedule_rejects_step_bounds_that_are_not_whole_blocks() -> None:
    for low, high in [(0, 16), (15, 32), (32, 16)]:
        with pytest.raises(ValueError):
            _Schedule(min_step=low, max_step=high)


def test_schedule_runs_every_range_once_in_order_and_one_thread_per_chain() -> None:
    owners = {name: threading.Lock() for name in "xyz"}
    seen: dict[str, list[tuple[int, int]]] = {name: [] for name in "xyz"}
    overlaps: list[str] = []

    def chain(name: str) -> _Chain:
        def run(start: int, stop: int) -> None:
            if not owners[name].acquire(blocking=False):
                overlaps.append(name)
                return
            try:
                # Long enough that hashlib releases the GIL and the threads interleave.
                hashlib.sha256(bytes(4096)).digest()
                seen[name].append((start, stop))
            finally:
                owners[name].release()

        return _Chain(run=run, size=16 * 300, cost=1.0)

    schedule = _Schedule(min_step=16, max_step=64)
    for name in "xyz":
        schedule.add(chain(name))
    helper = threading.Thread(target=schedule.run)
    helper.start()
    schedule.run()
    helper.join()
    assert overlaps == []
    for ranges in seen.values():
        assert ranges[0][0] == 0
        assert ranges[-1][1] == 16 * 300
        assert all(left[1] == right[0] for left, right in itertools.pairwise(ranges))


def test_schedule_stops_handing_out_steps_after_a_failure() -> None:
    log: list[str] = []

    def failing(start: int, stop: int) -> None:
        log.append(f"f{start}")
        if start == 16:
            raise RuntimeError("step failed")

    schedule = _Schedule(min_step=16, max_step=16)
    schedule.add(_Chain(run=failing, size=48, cost=10.0))
    schedule.add(recording_chain("b", 48, 1.0, log))
    with pytest.raises(RuntimeError):
        schedule.run()
    schedule.run()  # closed: nothing more runs
    assert log == ["f0", "f16"]
