# ruff: noqa: S608  -- only the constant column list is interpolated; values are bound.
"""The user identity map: which phone (wa_id), BSUID, parent BSUID and username are one user.

A sighting merges into the row of its ``user_id`` when it has one (adopting a
phone-only row of the same wa_id the first time), else into the newest row of
its ``wa_id``. A sighting that names a BSUID and the phone its row now holds also
absorbs the phone-only rows of that phone (merged in, then deleted): they were
the same person, seen before the platform linked the two. The merge rule is
:func:`merge_identity` (sans-IO). Functions
here run inside the caller's transaction; on PostgreSQL the caller holds the
advisory locks of :func:`lock_keys` first, so concurrent sightings of one user
serialise.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from ._records import UserIdentityRecord
from ._session import Row, Session, chunks, in_list
from ._time import from_ms
from ._validate import IdentityArgs

__all__ = [
    "NEW_ROW",
    "Absorbed",
    "Probe",
    "apply_identity_change",
    "delete_absorbed",
    "find_identity",
    "lock_keys",
    "lookup_ids",
    "merge_identity",
    "merge_sightings",
    "survivors",
    "upsert_identities",
    "upsert_identities_together",
    "user_identifiers",
]

_COLUMNS: Final = "identity_id, user_id, parent_user_id, wa_id, username, last_seen_at"
_FIELDS: Final = 4  # user_id, parent_user_id, wa_id, username
_READ_CHUNK: Final = 500

Absorbed = tuple[int, int]
"""A row merged into another and deleted: (its identity id, the surviving row's id)."""


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


def _phone_only_rows(s: Session, wa_id: str, other_than: int) -> list[Row]:
    return s.fetchall(
        f"SELECT {_COLUMNS} FROM svc_user_identities"
        " WHERE wa_id = ? AND user_id IS NULL AND identity_id <> ? ORDER BY identity_id",
        (wa_id, other_than),
    )


def upsert_identities(s: Session, items: Sequence[IdentityArgs]) -> list[Absorbed]:
    """Merge each sighting, in order, into the map (see the module docstring); the rows
    absorbed, in order."""
    absorbed: list[Absorbed] = []
    for item in items:
        user_id, wa_id = item[0], item[2]
        if user_id is not None:
            row = _by_user_id(s, user_id)
            if row is None and wa_id is not None:
                row = _newest_by_wa_id(s, wa_id, without_user_id=True)
        else:
            assert wa_id is not None
            row = _newest_by_wa_id(s, wa_id, without_user_id=False)
        if row is None:  # no phone-only row of its wa_id either: none to absorb
            _insert(s, item)
            continue
        values = merge_identity(_values(row), item)
        if user_id is not None and wa_id is not None and values[2] == wa_id:
            for orphan in _phone_only_rows(s, wa_id, int(row[0])):
                values = merge_identity(values, _values(orphan))
                s.run("DELETE FROM svc_user_identities WHERE identity_id = ?", (orphan[0],))
                absorbed.append((int(orphan[0]), int(row[0])))
        _update(s, row, values)
    return absorbed


NEW_ROW: Final = 1 << 62
"""Stand-in ids of the rows a merge inserts: above every stored id, in insertion order
(as the identity column will number them)."""


Probe = tuple[int, str | None, str | None]
"""A lookup between sightings: after the first ``n`` of them, the row ``(BSUID, phone)``
resolves to (``_person``)."""


def merge_sightings(
    stored: dict[int, IdentityArgs],
    items: Sequence[IdentityArgs],
    probes: Sequence[Probe] = (),
) -> tuple[list[tuple[int, IdentityArgs]], list[IdentityArgs], list[Absorbed], list[int | None]]:
    """Sans-IO ``upsert_identities``: the stored rows (by id) that ``items`` change, with
    their new values, the rows to insert, in order (with their final values), the rows
    absorbed, in order (then deleted; ids from ``NEW_ROW`` up name inserted rows), and the
    row each probe resolves to when it is looked up (None: unknown then).

    ``stored`` must hold every row a sighting or a probe can find: those with one of their
    BSUIDs or wa_ids. The lookups and merges are ``upsert_identities``'s,
    run in memory; a new row takes an id from ``NEW_ROW`` up, so it ranks above the
    stored ones as its real id will.
    """
    merge = _Merge(stored)
    lookups = _Lookups(probes)
    for index, item in enumerate(items):
        lookups.resolve_upto(index, merge)
        merge.add(item)
    lookups.resolve_upto(len(items), merge)
    rows = merge.rows
    changed = [
        (key, rows[key]) for key in stored if key not in merge.gone and rows[key] != stored[key]
    ]
    return (
        changed,
        [rows[key] for key in range(NEW_ROW, merge.fresh)],
        merge.absorbed,
        lookups.found,
    )


class _Merge:
    """The rows of ``merge_sightings`` in memory, indexed by BSUID and by wa_id so that they
    are found as ``upsert_identities``'s and ``_person``'s SQL finds them."""

    __slots__ = ("absorbed", "by_user", "by_wa", "fresh", "gone", "rows")

    def __init__(self, stored: dict[int, IdentityArgs]) -> None:
        self.rows = dict(stored)
        self.by_user = {
            values[0]: key for key, values in self.rows.items() if values[0] is not None
        }
        self.by_wa: dict[str, set[int]] = {}
        for key, values in self.rows.items():
            if values[2] is not None:
                self.by_wa.setdefault(values[2], set()).add(key)
        self.fresh = NEW_ROW  # the id the next inserted row takes
        self.gone: set[int] = set()
        self.absorbed: list[Absorbed] = []

    def newest(self, wa_id: str, *, without_user_id: bool) -> int | None:
        """``_newest_by_wa_id``, in memory."""
        rows = self.rows
        keys = [
            key
            for key in self.by_wa.get(wa_id, ())
            if rows[key][2] == wa_id and not (without_user_id and rows[key][0] is not None)
        ]
        return max(keys, key=lambda key: (rows[key][4], key), default=None)

    def resolve(self, user_id: str | None, wa_id: str | None) -> int | None:
        """The row a BSUID and a phone find: the BSUID's row, else the newest row of the phone
        (without a BSUID when one is given); ``upsert_identities``'s and ``_person._people``'s
        lookup, in memory."""
        person = self.by_user.get(user_id) if user_id is not None else None
        if person is None and wa_id is not None:
            person = self.newest(wa_id, without_user_id=user_id is not None)
        return person

    def add(self, item: IdentityArgs) -> None:
        """Merge one sighting into the row it finds, or a new row; a sighting of a BSUID with
        the phone its row now holds absorbs that phone's phone-only rows."""
        user_id, wa_id = item[0], item[2]
        assert user_id is not None or wa_id is not None
        found = self.resolve(user_id, wa_id)
        before: IdentityArgs | None = None
        if found is None:
            found, self.fresh = self.fresh, self.fresh + 1
            values = item
        else:
            before = self.rows[found]
            values = merge_identity(before, item)
        if user_id is not None and wa_id is not None and values[2] == wa_id:
            values = self._absorb_phone_only(found, wa_id, values)
        self.rows[found] = values
        if values[0] is not None:
            self.by_user[values[0]] = found
        if before is not None and before[2] != values[2] and before[2] is not None:
            self.by_wa[before[2]].discard(found)
        if values[2] is not None:
            self.by_wa.setdefault(values[2], set()).add(found)

    def _absorb_phone_only(self, found: int, wa_id: str, values: IdentityArgs) -> IdentityArgs:
        """``values`` with the phone-only rows of ``wa_id`` other than ``found`` merged in, in
        id order; those rows are gone, absorbed into ``found``."""
        rows = self.rows
        for orphan in sorted(self.by_wa.get(wa_id, ())):
            if orphan != found and rows[orphan][0] is None and rows[orphan][2] == wa_id:
                values = merge_identity(values, rows[orphan])
                self.by_wa[wa_id].discard(orphan)
                self.gone.add(orphan)
                self.absorbed.append((orphan, found))
        return values


class _Lookups:
    """The probes of ``merge_sightings``, each resolved when the merge reaches its place
    among the sightings (in place order; equal places in probe order)."""

    __slots__ = ("_next", "_order", "_probes", "found")

    def __init__(self, probes: Sequence[Probe]) -> None:
        self._probes = probes
        self._order = sorted(range(len(probes)), key=lambda i: probes[i][0])
        self._next = 0
        self.found: list[int | None] = [None] * len(probes)

    def resolve_upto(self, upto: int, merge: _Merge) -> None:
        """Resolve, against the rows as they are now, every probe placed at or before ``upto``
        not resolved yet."""
        while self._next < len(self._order) and self._probes[self._order[self._next]][0] <= upto:
            probe = self._order[self._next]
            _, user_id, wa_id = self._probes[probe]
            self.found[probe] = merge.resolve(user_id, wa_id)
            self._next += 1


def lookup_ids(
    items: Sequence[IdentityArgs], probes: Sequence[Probe]
) -> tuple[list[str], list[str]]:
    """The BSUIDs and the wa_ids by which sightings and probes find their rows, each sorted
    (the one read of a batch's set-based merge)."""
    user_ids = sorted(
        {item[0] for item in items if item[0] is not None}
        | {p[1] for p in probes if p[1] is not None}
    )
    wa_ids = sorted(
        {item[2] for item in items if item[2] is not None}
        | {p[2] for p in probes if p[2] is not None}
    )
    return user_ids, wa_ids


def upsert_identities_together(
    s: Session, items: Sequence[IdentityArgs], probes: Sequence[Probe] = ()
) -> tuple[list[Absorbed], list[int | None]]:
    """``upsert_identities`` for many sightings (SQLite's group commit): one read of the
    rows they or the probes can find, ``merge_sightings``, then one write per changed, new
    or absorbed row; the rows absorbed, in order, and the row each probe resolved to (as
    ``_person`` would have found it at its place among the sightings, then followed to the
    row that absorbed it)."""
    if len(items) < 2 and not probes:
        return upsert_identities(s, items), []
    stored: dict[int, IdentityArgs] = {}
    user_ids, wa_ids = lookup_ids(items, probes)
    for column, values in (("user_id", user_ids), ("wa_id", wa_ids)):
        for part in chunks(values, _READ_CHUNK):
            for row in s.fetchall(
                f"SELECT {_COLUMNS} FROM svc_user_identities WHERE {column} IN {in_list(part)}",
                part,
            ):
                stored[int(row[0])] = _values(row)
    changed, added, absorbed, found = merge_sightings(stored, items, probes)
    for key, merged in changed:
        s.run(
            "UPDATE svc_user_identities SET user_id = ?, parent_user_id = ?, wa_id = ?,"
            " username = ?, last_seen_at = ? WHERE identity_id = ?",
            (*merged, key),
        )
    ids: list[int] = []
    for merged in added:
        inserted = s.fetchone(
            "INSERT INTO svc_user_identities (user_id, parent_user_id, wa_id, username,"
            " last_seen_at) VALUES (?, ?, ?, ?, ?) RETURNING identity_id",
            merged,
        )
        assert inserted is not None
        ids.append(int(inserted[0]))
    return delete_absorbed(s, absorbed, ids), survivors(found, absorbed, ids)


def delete_absorbed(s: Session, absorbed: Sequence[Absorbed], ids: Sequence[int]) -> list[Absorbed]:
    """Delete the absorbed rows of ``merge_sightings``, its new rows' stand-in ids replaced by
    ``ids`` (the identity ids they were inserted with, in order); the pairs as stored ids."""
    real = [(_stored_id(gone, ids), _stored_id(kept, ids)) for gone, kept in absorbed]
    for gone, _ in real:
        s.run("DELETE FROM svc_user_identities WHERE identity_id = ?", (gone,))
    return real


def survivors(
    found: Sequence[int | None], absorbed: Sequence[Absorbed], ids: Sequence[int]
) -> list[int | None]:
    """The rows ``merge_sightings``'s probes found, each followed to the row that absorbed it
    (as the queue it was placed in would have been folded), as stored ids."""
    kept = dict(absorbed)
    real: list[int | None] = []
    for key in found:
        while key is not None and key in kept:
            key = kept[key]
        real.append(None if key is None else _stored_id(key, ids))
    return real


def _stored_id(key: int, ids: Sequence[int]) -> int:
    return ids[key - NEW_ROW] if key >= NEW_ROW else key


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
) -> tuple[UserIdentityRecord, Absorbed | None]:
    """Re-key the identity of ``user`` to its new BSUID and/or wa_id; return the result,
    and the row absorbed if any.

    The old identifiers stop resolving (a phone number may be reassigned); the
    username and parent BSUID carry over. When the new BSUID already has a row
    (its sighting came first), the old row merges into it and is removed (absorbed:
    one person). An unknown ``user`` gets a new row with the new identifiers.
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
    absorbed: Absorbed | None = None
    if target is not None:
        if old is not None:
            s.run("DELETE FROM svc_user_identities WHERE identity_id = ?", (old[0],))
            absorbed = (int(old[0]), int(target[0]))
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
    record = UserIdentityRecord(
        user_id=values[0],
        parent_user_id=values[1],
        wa_id=values[2],
        username=values[3],
        last_seen_at=from_ms(values[4]),
    )
    return record, absorbed
