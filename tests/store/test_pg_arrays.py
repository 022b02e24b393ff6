"""Packed array columns: exact round trips through PostgreSQL, or a binary array instead."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from svc.store.postgres._arrays import array_casts, packed, placeholders
from svc.store.postgres._engine import PgSession as _PgSession
from svc.store.postgres._engine import _Operation

from .test_postgres_batch import migrated_conn  # noqa: F401 -- the fixture

TEXTS = st.lists(st.one_of(st.none(), st.text(max_size=6)), max_size=8)
INTS = st.lists(st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1)), max_size=8)


def _split(joined: str) -> list[str | None]:
    """What ``string_to_array(joined, chr(31), chr(30))`` gives, in Python."""
    if joined == "":
        return []
    return [None if part == "\x1e" else part for part in joined.split("\x1f")]


@given(values=TEXTS)
@example(values=[""])
@example(values=["a\x1fb"])
@example(values=["\x1e"])
@example(values=["a\x1e", None])
def test_a_packed_text_column_splits_back_exactly_or_is_not_packed(
    values: list[str | None],
) -> None:
    joined = packed(values, "text")
    if joined is not None:
        assert _split(joined) == values
    else:
        assert values == [""] or any(v is not None and ("\x1f" in v or "\x1e" in v) for v in values)


def test_separators_and_the_lone_empty_string_are_never_packed() -> None:
    assert packed(["a\x1fb"], "text") is None
    assert packed(["\x1e"], "text") is None
    assert packed(["ok", "a\x1e"], "text") is None
    assert packed([""], "text") is None
    assert packed(["", ""], "text") == "\x1f"
    assert packed([], "text") == ""
    assert packed(["a", None, "b"], "text") == "a\x1f\x1e\x1fb"


def test_only_ints_pack_as_integers_and_only_strings_as_text() -> None:
    assert packed([1, None, -3], "bigint") == "1\x1f\x1e\x1f-3"
    assert packed([True, 2], "bigint") is None  # a bool is not an int here
    assert packed(["1"], "bigint") is None
    assert packed([1], "text") is None
    assert packed([1.5], "integer") is None


def test_placeholders_mark_each_form_and_casts_are_read_per_placeholder() -> None:
    sql = "SELECT * FROM unnest(?::text[], ?::bigint[]) WHERE x = ? AND y = ANY(?)"
    assert array_casts(sql) == ("text", "bigint", None, None)
    assert placeholders(sql, (2, 1, 0, 1)) == (
        "SELECT * FROM unnest(string_to_array(%s, chr(31), chr(30))::text[], %b::bigint[])"
        " WHERE x = %s AND y = ANY(%b)"
    )
    assert placeholders("SELECT ?", ()) == "SELECT %s"


@pytest.mark.postgres
@pytest.mark.slow
@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    texts=st.lists(
        st.one_of(
            st.none(),
            st.text(
                st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), max_size=6
            ),
        ),
        max_size=8,
    ),
    ints=INTS,
)
@example(texts=[""], ints=[])
@example(texts=["a\x1fb", None, "\x1e"], ints=[None])
@example(texts=["", ""], ints=[0, -1])
def test_array_parameters_reach_the_server_unchanged(
    migrated_conn: Any,  # noqa: F811 -- the fixture
    texts: list[str | None],
    ints: list[int | None],
) -> None:
    session = _PgSession(migrated_conn, _Operation())
    rows = session.fetchall(
        "SELECT ?::text[], ?::bigint[], array_length(?::text[], 1)", (texts, ints, texts)
    )
    assert rows == [(texts, ints, len(texts) or None)]
