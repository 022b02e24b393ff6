"""Row ids are UUID version 7: unique, and ordered by their creation millisecond."""

from __future__ import annotations

import uuid

from hypothesis import given
from hypothesis import strategies as st

from svc.store import new_row_id


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
