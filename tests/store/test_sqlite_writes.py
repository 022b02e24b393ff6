"""SQLite's set-based writes (``svc/store/sqlite/_writes.py``) equal the call-by-call reference
form (``_reference``), state and answer."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from svc.store import UpdatesRecorded, _ops
from svc.store._kinds import DEFER
from svc.store.sqlite import _writes
from svc.store.sqlite._store import SqliteSession

from ._reference import record_webhook_delivery
from ._strategies import SEED, SINGLE, deliveries, delivery, dump, fresh_row_ids
from .conftest import message_row, migrated_sqlite_file

# Row ids may repeat across messages here: the set-based insert must skip a
# conflicting row exactly where the call-by-call form does.
DELIVERIES = deliveries(max_updates=12, max_deliveries=4)
# Deliveries queued together, as the group commit merges them: fresh row ids per message,
# as the HTTP layer makes them (the platform id pair is what repeats).
QUEUED = deliveries(max_updates=4, max_deliveries=8).map(fresh_row_ids)


_EQUIVALENCE = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
"""The equivalence tests' settings (function-scoped fixtures: each example rolls back)."""


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return migrated_sqlite_file(tmp_path_factory.mktemp("sqlite-delivery") / "svc.sqlite3")


@pytest.fixture
def conn(database: Path) -> Iterator[sqlite3.Connection]:
    connection = sqlite3.connect(database, isolation_level=None)
    try:
        yield connection
    finally:
        connection.close()


def _outcome(
    conn: sqlite3.Connection, seed: list[Any], deliveries: list[Any], form: Any
) -> tuple[list[Any], list[list[Any]]]:
    """Seed, then each call in order through ``form``; answers and tables (rolled back)."""
    return _outcome_together(conn, seed, deliveries, lambda s, ds: [form(s, d) for d in ds])


@_EQUIVALENCE
@given(seed=SEED, deliveries=DELIVERIES)
def test_set_based_delivery_equals_the_call_by_call_form(
    conn: sqlite3.Connection, seed: list[Any], deliveries: list[Any]
) -> None:
    set_based = _outcome(conn, seed, deliveries, _writes.record_delivery)
    one_by_one = _outcome(conn, seed, deliveries, record_webhook_delivery)
    assert set_based == one_by_one
    assert all(isinstance(answer, UpdatesRecorded) for answer in set_based[0])


def test_a_delivery_over_the_variable_limit_is_chunked_and_still_equal(
    conn: sqlite3.Connection,
) -> None:
    """250 messages, 700 statuses, 700 update keys: several multi-row statements each, same
    result."""
    at = 1_763_720_130_000
    messages = tuple(
        message_row(
            f"row-{i}",
            f"wamid.{i % 200}",
            at=at,
            from_phone="1555" if i % 3 else None,
            user_id=f"US.{i}",
            parent_user_id="US.ENT.1" if i % 2 else None,
            business_phone_number_id="106540352242922" if i % 4 else None,
        )
        for i in range(250)
    )
    ranks = ("sent", "delivered", "read")
    statuses = tuple((f"wamid.{i % 300}", ranks[i % 3], at + i, None) for i in range(700))
    identities = (("US.1", None, "1555", "ann", at), (None, None, "1556", None, at))
    update_keys = tuple(f"u{i % 400}" for i in range(700))
    big = delivery("ev-big", "h", at, messages, statuses, identities, update_keys)
    seed = [("status", ("wamid.5", "read", at - 1))]
    set_based = _outcome(conn, seed, [big], _writes.record_delivery)
    one_by_one = _outcome(conn, seed, [big], record_webhook_delivery)
    assert set_based == one_by_one
    rows, events = set_based[1][0], set_based[1][1]
    assert len(rows) == 200  # the 50 repeated (direction, wamid) pairs were skipped
    assert len(events) == 701
    assert len(set_based[1][4]) == 400  # update keys, each recorded once
    assert len(set_based[1][5]) == 2
    assert len(set_based[0][0].new) == 400


def _merged(session: SqliteSession, deliveries: list[Any]) -> list[Any]:
    """What ``SqliteStore`` does with consecutive deliveries of one batch: one set-based
    call, which answers every delivery (none is deferred to run alone)."""
    answers = _writes.record_deliveries(session, deliveries)
    assert DEFER not in answers, "no delivery falls back to running alone"
    return answers


def _outcome_together(
    conn: sqlite3.Connection, seed: list[Any], deliveries: list[Any], form: Any
) -> tuple[list[Any], list[list[Any]]]:
    """Seed, then all the calls through ``form`` at once; answers and tables (rolled back)."""
    session = SqliteSession(conn)
    conn.execute("BEGIN")
    try:
        for kind, args in seed:
            SINGLE[kind](session, args)
        answers = form(session, deliveries)
        tables = dump(conn.execute)
    finally:
        conn.execute("ROLLBACK")
    return answers, tables


@settings(_EQUIVALENCE, max_examples=200)
@given(seed=SEED, deliveries=QUEUED)
def test_deliveries_merged_into_one_call_equal_them_one_by_one(
    conn: sqlite3.Connection, seed: list[Any], deliveries: list[Any]
) -> None:
    merged = _outcome_together(conn, seed, deliveries, _merged)
    one_by_one = _outcome(conn, seed, deliveries, record_webhook_delivery)
    assert merged == one_by_one
    assert len(merged[0]) == len(deliveries)


@given(count=st.integers(min_value=0, max_value=3000), width=st.sampled_from([1, 2, 3, 4, 13]))
def test_statement_runs_have_power_of_two_lengths_under_the_variable_limit(
    count: int, width: int
) -> None:
    """The runs keep every row in order, each under SQLite's 999 variables, with lengths
    from a few powers of two (largest first): the statement texts recur across batches,
    so sqlite3's statement cache prepares each once."""
    runs = _writes._chunks(list(range(count)), width)
    assert [value for run in runs for value in run] == list(range(count))
    lengths = [len(run) for run in runs]
    assert all(n & (n - 1) == 0 and 0 < n * width <= 999 for n in lengths)
    assert lengths == sorted(lengths, reverse=True)
    assert len(set(lengths)) <= (999 // width).bit_length()


class _RowsReturned:
    """A session that counts the rows each statement returned, by the statement's start."""

    dialect = "sqlite"

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.rows: dict[str, int] = {}

    def _cursor(self, sql: str, params: Any) -> tuple[sqlite3.Cursor, list[Any]]:
        cursor = self.conn.execute(sql, params)
        rows = cursor.fetchall()
        start = sql.split(" (", 1)[0].split(" SET ", 1)[0]
        self.rows[start] = self.rows.get(start, 0) + len(rows)
        return cursor, rows

    def run(self, sql: str, params: Any = ()) -> int:
        return self._cursor(sql, params)[0].rowcount

    def fetchall(self, sql: str, params: Any = ()) -> list[Any]:
        return self._cursor(sql, params)[1]

    def fetchone(self, sql: str, params: Any = ()) -> Any:
        rows = self.fetchall(sql, params)
        return rows[0] if rows else None


def test_messages_return_no_rows_unless_needed(conn: sqlite3.Connection) -> None:
    """A delivery's messages go in without returned rows when no status event is logged
    for them: each returned row is a step on which the writer thread retakes the GIL.
    With an event logged for one of the messages, the insert returns the rows to fold."""
    at = 1_763_720_130_000
    messages = tuple(
        message_row(f"row-{i}", f"wamid.{i}", at=at, from_phone="1555") for i in range(20)
    )
    keys = tuple(f"u{i}" for i in range(20))
    first = delivery("ev-1", "h", at, messages, (), (), keys)
    session = SqliteSession(conn)
    conn.execute("BEGIN")
    try:
        counting = _RowsReturned(conn)
        _writes.record_deliveries(counting, [first])
        assert counting.rows["INSERT INTO svc_messages"] == 0
        _ops.append_message_status(session, "wamid.3", "read", at + 5)
        later = tuple(
            message_row(
                f"row-b{i}",
                f"wamid.{i}",
                at=at,
                direction="outbound",
                to_phone="1555",
                status="sent",
            )
            for i in range(3, 5)
        )
        counting = _RowsReturned(conn)
        _writes.record_deliveries(counting, [delivery("ev-2", "h", at, later, (), (), ())])
        assert counting.rows["INSERT INTO svc_messages"] == 2
        assert conn.execute(
            "SELECT status FROM svc_messages WHERE row_id = 'row-b3'"
        ).fetchone() == ("read",)
    finally:
        conn.execute("ROLLBACK")


def test_update_keys_return_only_the_stored_keys(conn: sqlite3.Connection) -> None:
    """A batch's update keys are recorded with one read of the keys already stored (their
    rows the only ones returned) and an insert that returns none: each returned row is a
    step on which the writer thread retakes the GIL. A stored key is a duplicate whether an
    older version left it unfinished or not; a new key's row has every time the received
    time."""
    at = 1_763_720_130_000
    conn.execute("BEGIN")
    try:
        session = SqliteSession(conn)
        early = tuple(f"u{i}" for i in range(6))
        _writes.record_deliveries(session, [delivery("ev-1", "h", at, (), (), (), early)])
        conn.executemany(
            "INSERT INTO svc_webhook_updates"
            " (update_key, event_key, received_at, claimed_at, handled_at)"
            " VALUES (?, 'ev-old', ?, ?, NULL)",
            [(f"u{i}", at, at) for i in range(6, 10)],
        )
        keys = tuple(f"u{i}" for i in range(20))
        counting = _RowsReturned(conn)
        result = _writes.record_deliveries(
            counting, [delivery("ev-3", "h", at + 200, (), (), (), keys)]
        )[0]
        assert result == UpdatesRecorded(event="recorded", new=keys[10:])
        assert counting.rows["SELECT update_key FROM svc_webhook_updates WHERE update_key IN"] == 10
        assert counting.rows["INSERT INTO svc_webhook_updates"] == 0
        new_rows = conn.execute(
            "SELECT DISTINCT received_at, claimed_at, handled_at FROM svc_webhook_updates"
            " WHERE event_key = 'ev-3'"
        ).fetchall()
        assert new_rows == [(at + 200, at + 200, at + 200)]
    finally:
        conn.execute("ROLLBACK")


@pytest.mark.parametrize("count", [1, 2, 3, 5, 8, 100, 512, 513, 1500])
def test_stored_keys_reads_every_key_in_padded_runs(conn: sqlite3.Connection, count: int) -> None:
    """The stored keys' read pads each ``IN`` list to a power of two and still finds each
    stored key once, over the run cap too."""
    at = 1_763_720_130_000
    keys = [f"k{i}" for i in range(count)]
    conn.execute("BEGIN")
    try:
        conn.executemany(
            "INSERT INTO svc_webhook_updates"
            " (update_key, event_key, received_at, claimed_at, handled_at) VALUES (?,?,?,?,?)",
            [
                (key, "ev", at, at + i, at if i % 3 == 0 else None)
                for i, key in enumerate(keys[::2])
            ],
        )
        texts: list[str] = []  # each statement as run, its values in place
        conn.set_trace_callback(texts.append)
        found = _writes._stored_keys(SqliteSession(conn), keys)
        conn.set_trace_callback(None)
        assert found == set(keys[::2])
        assert len(texts) == -(-count // 512)
        assert all(text.count("'k") in {1 << n for n in range(10)} for text in texts)
    finally:
        conn.execute("ROLLBACK")
