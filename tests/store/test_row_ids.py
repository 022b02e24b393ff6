"""Row ids are UUID version 7: unique, and ordered by their creation millisecond."""

from __future__ import annotations

import uuid

from hypothesis import given
from hypothesis import strategies as st

from svc.store import new_row_id, new_row_ids


def test_a_row_id_is_a_version_7_uuid_string() -> None:
    value = new_row_id()
    parsed = uuid.UUID(value)
    assert str(parsed) == value
    assert parsed.version == 7
    assert parsed.variant == uuid.RFC_4122


@given(st.integers(0, 2**48 - 2), st.integers(1, 10**6))
def test_a_later_millisecond_gives_a_larger_id(ms: int, later: int) -> None:
    first = new_row_id(now_ns=ms * 1_000_000)
    second = new_row_id(now_ns=min(ms + later, 2**48 - 1) * 1_000_000)
    assert first < second
    assert int(first.replace("-", "")[:12], 16) == ms


def test_ids_made_in_one_millisecond_differ() -> None:
    ids = {new_row_id(now_ns=1_700_000_000_000_000_000) for _ in range(10_000)}
    assert len(ids) == 10_000


@given(
    st.binary(min_size=10, max_size=10 * 6).filter(lambda b: len(b) % 10 == 0),
    st.integers(0, 2**48 - 1),
)
def test_row_ids_carry_the_millisecond_and_the_random_bytes(raw: bytes, ms: int) -> None:
    """Each id is the millisecond, version 7, 12 + 62 random bits of its own 10 bytes."""
    count = len(raw) // 10
    ids = new_row_ids(count, now_ns=ms * 1_000_000, random=lambda n: raw[:n])
    assert len(ids) == count
    for index, value in enumerate(ids):
        parsed = uuid.UUID(value)
        assert str(parsed) == value
        assert (parsed.version, parsed.variant) == (7, uuid.RFC_4122)
        assert parsed.int >> 80 == ms
        chunk = int.from_bytes(raw[10 * index : 10 * index + 10], "big")
        assert (parsed.int >> 64) & 0xFFF == chunk >> 68  # rand_a: the first 12 bits
        assert parsed.int & (2**48 - 1) == (chunk >> 4) & (2**48 - 1)


def test_one_draw_of_random_bytes_serves_a_delivery() -> None:
    draws: list[int] = []

    def random(n: int) -> bytes:
        draws.append(n)
        return bytes(n)

    assert len(new_row_ids(8, random=random)) == 8
    assert draws == [80]
    assert new_row_ids(0) == []
