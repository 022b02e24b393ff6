# ruff: noqa: S608  -- only the constant column list is interpolated; values are bound.
"""The user identity map: which phone (wa_id), BSUID, parent BSUID and username are one user.

A sighting merges into the row of its ``user_id`` when it has one (adopting a
phone-only row of the same wa_id the first time), else into the newest row of
its ``wa_id``. The merge rule is :func:`merge_identity` (sans-IO). Functions
here run inside the caller's transaction; on PostgreSQL the caller holds the
advisory locks of :func:`lock_keys` first, so concurrent sightings of one user
serialise.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final, cast

from ._records import UserIdentityRecord
from ._session import Row, Session
from ._time import from_ms
from ._validate import IdentityArgs

__all__ = [
    "apply_identity_change",
    "find_identity",
    "lock_keys",
    "merge_identity",
    "upsert_identities",
    "upsert_identities_together",
    "user_identifiers",
]

_COLUMNS: Final = "identity_id, user_id, parent_user_id, wa_id, username, last_seen_at"
_FIELDS: Final = 4  # user_id, parent_user_id, wa_id, username
_READ_CHUNK: Final = 500


def lock_keys(items: Iterable[IdentityArgs]) -> list[str]:
    """The sorted advisory-lock keys of some sightings (prefixed, so never a message id)."""
    keys = {f"user:{item[0]}" for item in items if item[0] is not None}
    keys |= {f"wa:{item[2]}" for item in items if item[2] is not None}
    return sorted(keys)


def merge_identity(stored: IdentityArgs, seen: IdentityArgs) -> IdentityArgs:
    """A stored identity after a sighting.

    A sighting at least as new as the stored one replaces each value it knows;
    an older one only fills values the row lacks. None never replaces a known
    value, and ``last_seen`` only moves forward.
    """
    newer = seen[4] >= stored[4]
    merged = [
        (new if new is not None else old) if newer else (old if old is not None else new)
        for old, new in zip(stored[:_FIELDS], seen[:_FIELDS], strict=True)
    ]
    return (merged[0], merged[1], merged[2], merged[3], max(stored[4], seen[4]))


def _record(row: Row) -> UserIdentityRecord:
    return UserIdentityRecord(
        user_id=row[1],
        parent_user_id=row[2],
        wa_id=row[3],
        username=row[4],
        last_seen_at=from_ms(int(row[5])),
    )


def _values(row: Row) -> IdentityArgs:
    return (row[1], row[2], row[3], row[4], int(row[5]))


def _by_user_id(s: Session, user_id: str) -> Row | None:
    return s.fetchone(f"SELECT {_COLUMNS} FROM svc_user_identities WHERE user_id = ?", (user_id,))


def _newest_by_wa_id(s: Session, wa_id: str, *, without_user_id: bool) -> Row | None:
    extra = " AND user_id IS NULL" if without_user_id else ""
    return s.fetchone(
        f"SELECT {_COLUMNS} FROM svc_user_identities WHERE wa_id = ?{extra}"
        " ORDER BY last_seen_at DESC, identity_id DESC LIMIT 1",
        (wa_id,),
    )


def _insert(s: Session, values: IdentityArgs) -> None:
    s.run(
        "INSERT INTO svc_user_identities (user_id, parent_user_id, wa_id, username, last_seen_at)"
        " VALUES (?, ?, ?, ?, ?)",
        values,
    )


def _update(s: Session, row: Row, values: IdentityArgs) -> None:
    if values != _values(row):
        s.run(
            "UPDATE svc_user_identities SET user_id = ?, parent_user_id = ?, wa_id = ?,"
            " username = ?, last_seen_at = ? WHERE identity_id = ?",
            (*values, row[0]),
        )


def upsert_identities(s: Session, items: Sequence[IdentityArgs]) -> None:
    """Merge each sighting, in order, into the map (see the module docstring)."""
    for item in items:
        user_id, wa_id = item[0], item[2]
        if user_id is not None:
            row = _by_user_id(s, user_id)
            if row is None and wa_id is not None:
                row = _newest_by_wa_id(s, wa_id, without_user_id=True)
        else:
            assert wa_id is not None
            row = _newest_by_wa_id(s, wa_id, without_user_id=False)
        if row is None:
            _insert(s, item)
        else:
            _update(s, row, merge_identity(_values(row), item))


def upsert_identities_together(s: Session, items: Sequence[IdentityArgs]) -> None:
    """``upsert_identities`` for many sightings: two reads, then one write per changed row.

    Every row a sighting can reach has one of the sightings' BSUIDs or wa_ids, so those
    rows are read at once and the sightings merge into them in memory, in order, by the
    same lookups; new rows take ids above every stored one in order, as AUTOINCREMENT
    gives them. The table ends as ``upsert_identities`` leaves it (tested with Hypothesis).
    """
    if len(items) < 2:
        upsert_identities(s, items)
        return
    rows: dict[int, list[object]] = {}
    user_ids = sorted({item[0] for item in items if item[0] is not None})
    wa_ids = sorted({item[2] for item in items if item[2] is not None})
    for column, values in (("user_id", user_ids), ("wa_id", wa_ids)):
        for start in range(0, len(values), _READ_CHUNK):
            part = values[start : start + _READ_CHUNK]
            for row in s.fetchall(
                f"SELECT {_COLUMNS} FROM svc_user_identities"
                f" WHERE {column} IN ({','.join('?' * len(part))})",
                part,
            ):
                rows[int(row[0])] = list(row)
    stored = {key: tuple(row) for key, row in rows.items()}
    next_id = -len(items)  # new rows: negative ids, in insertion order, above stored ones
    for item in items:
        found = _lookup(rows, item)
        if found is None:
            rows[next_id] = [next_id, *item]
            next_id += 1
        else:
            found[1:] = merge_identity(_values(tuple(found)), item)
    for key, current in rows.items():
        if key >= 0 and tuple(current) != stored[key]:
            s.run(
                "UPDATE svc_user_identities SET user_id = ?, parent_user_id = ?, wa_id = ?,"
                " username = ?, last_seen_at = ? WHERE identity_id = ?",
                (*current[1:], key),
            )
    for key in sorted(k for k in rows if k < 0):
        _insert(s, cast(IdentityArgs, tuple(rows[key][1:])))


def _lookup(rows: dict[int, list[object]], item: IdentityArgs) -> list[object] | None:
    """The row ``upsert_identities`` merges ``item`` into, among ``rows`` (in memory)."""
    user_id, wa_id = item[0], item[2]
    if user_id is not None:
        for row in rows.values():
            if row[1] == user_id:
                return row
        if wa_id is None:
            return None
    candidates = [
        row
        for row in rows.values()
        if row[3] == wa_id and (user_id is None or row[1] is None)
    ]
    # Newest first, then the highest id; new rows (negative ids here) rank above stored ones.
    return max(candidates, key=_recency, default=None)


def _recency(row: list[object]) -> tuple[int, int, int]:
    key = int(cast(int, row[0]))
    return (int(cast(int, row[5])), key < 0, key)


def _find_row(s: Session, user: str) -> Row | None:
    return s.fetchone(
        f"SELECT {_COLUMNS} FROM svc_user_identities"
        " WHERE user_id = ? OR parent_user_id = ? OR wa_id = ?"
        " ORDER BY CASE WHEN user_id = ? THEN 0 WHEN parent_user_id = ? THEN 1 ELSE 2 END,"
        " last_seen_at DESC, identity_id DESC LIMIT 1",
        (user, user, user, user, user),
    )


def find_identity(s: Session, user: str) -> UserIdentityRecord | None:
    """The identity ``user`` (a BSUID, a parent BSUID or a wa_id) names, if known.

    A BSUID match wins over a parent match over a wa_id match; among equals the
    most recently seen row (a phone number may have been reassigned).
    """
    row = _find_row(s, user)
    return None if row is None else _record(row)


def user_identifiers(s: Session, user: str) -> tuple[str, ...]:
    """``user`` and every identifier the map links to it, sorted: the rows of one user."""
    row = _find_row(s, user)
    found = {user} if row is None else {user, *(v for v in row[1:4] if v is not None)}
    return tuple(sorted(found))


def apply_identity_change(
    s: Session, user: str, new_user_id: str | None, new_wa_id: str | None, at: int
) -> UserIdentityRecord:
    """Re-key the identity of ``user`` to its new BSUID and/or wa_id; return the result.

    The old identifiers stop resolving (a phone number may be reassigned); the
    username and parent BSUID carry over. When the new BSUID already has a row
    (its sighting came first), the old row merges into it and is removed. An
    unknown ``user`` gets a new row with the new identifiers.
    """
    old = _find_row(s, user)
    target = _by_user_id(s, new_user_id) if new_user_id is not None else None
    if target is not None and old is not None and target[0] == old[0]:
        target = None
    if old is None:
        carried: IdentityArgs = (new_user_id, None, new_wa_id, None, at)
    else:
        carried = (
            new_user_id if new_user_id is not None else old[1],
            old[2],
            new_wa_id if new_wa_id is not None else old[3],
            old[4],
            max(int(old[5]), at),
        )
    if target is not None:
        if old is not None:
            s.run("DELETE FROM svc_user_identities WHERE identity_id = ?", (old[0],))
        # The target's own values are the newer facts; the carried ones fill its gaps.
        values = merge_identity(carried, (*_values(target)[:4], max(int(target[5]), carried[4])))
        if new_wa_id is not None:
            values = (values[0], values[1], new_wa_id, values[3], values[4])
        _update(s, target, values)
    elif old is not None:
        values = carried
        _update(s, old, values)
    else:
        values = carried
        _insert(s, values)
    return UserIdentityRecord(
        user_id=values[0],
        parent_user_id=values[1],
        wa_id=values[2],
        username=values[3],
        last_seen_at=from_ms(values[4]),
    )
