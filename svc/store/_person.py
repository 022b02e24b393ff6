# ruff: noqa: S608  -- only constant columns and placeholder lists are interpolated.
"""One queue per person: the inbox's queue keys follow the identity map, written once over
:class:`Session` for both backends.

An inbox row whose update names a user waits in its person's queue: the key
``person_queue_key(number, identity_id)`` of the identity-map row its identifiers
resolve to (the row a sighting of them merges into), looked up in the record's
transaction after the delivery's sightings are merged. A row whose user the map does not
know (no sighting was recorded: the projection was left out, or the user has no storable
BSUID or phone) keeps the key it came with, the update's own (``svc.webhook.queue_key``).

A queue joins its person's when svc learns they are one: the keys a resolved row's
user had on its own (``InboxRow.aliases``) and the queues of identity rows absorbed into
another (``_identity.Absorbed``) are *folded*: their rows move under the person's key in
the same transaction, keeping their ids (so they run in recorded order across the
identifiers), and when two states meet the one written last survives. A moved row
remembers the key it was claimed under (``folded_from``, cleared by its next claim), so a
run in flight still finds its queue (``list_inbox_queue``) and its state's sealing key; a
moved state remembers the key it was sealed under (``sealed_for``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from svc.crypto import sha256_hex

from ._identity import Absorbed
from ._inbox_ops import write_user_state
from ._session import ADVISORY_NAMESPACE, Session, chunks, in_list

__all__ = [
    "InboxInsert",
    "InboxPlacement",
    "fold_people",
    "move_queues",
    "person_queue_key",
    "place_inbox_rows",
]

InboxPlacement = tuple[
    str, str, str | None, str, bytes, int, str | None, str | None, tuple[str, ...]
]
"""An inbox row to place: update key, own queue key, business number id, kind, sealed update,
recorded-at ms, then the user's BSUID and phone (to resolve the person) and its own keys."""
InboxInsert = tuple[str, str, str | None, str, bytes, int]
"""An inbox row to insert: update key, queue key, business number id, kind, sealed, at ms."""

_CHUNK: Final = 500
_NUMBERS: Final = (
    "WITH RECURSIVE n(v) AS (SELECT MIN(phone_number_id) FROM svc_user_state"
    " UNION ALL SELECT (SELECT MIN(phone_number_id) FROM svc_user_state"
    " WHERE phone_number_id > n.v) FROM n WHERE n.v IS NOT NULL)"
    " SELECT v FROM n WHERE v IS NOT NULL"
    " UNION SELECT DISTINCT phone_number_id FROM svc_inbox WHERE phone_number_id IS NOT NULL"
)
"""The business numbers with a queue or a state: the states' by a walk of their number
index (one probe per number), the inbox's (its waiting rows only) by a scan."""


def person_queue_key(number: str | None, identity_id: int) -> str:
    """The queue key of a person (an identity-map row) on a business number: SHA-256 hex of
    ``number NUL "person" NUL identity_id`` (a hash, as every queue key)."""
    return sha256_hex(f"{number or ''}\x00person\x00{identity_id}".encode())


def place_inbox_rows(
    s: Session,
    rows: Sequence[InboxPlacement],
    absorbed: Sequence[Absorbed] = (),
    people: Sequence[int | None] | None = None,
    batch: Sequence[int] | None = None,
) -> list[InboxInsert]:
    """The rows with their queue keys resolved (see the module docstring), after folding the
    queues of ``absorbed`` identity rows and of the resolved rows' own keys into their
    persons'. Runs after the sightings are merged, before the rows are inserted.

    ``people`` is each row's person when the caller resolved them already (a batch's
    set-based form, ``_identity.merge_sightings``' probes; else the map is read now), and
    ``batch`` each row's delivery in the batch (default: one delivery): a row left on its own
    key folds with the rows already stored only when a later delivery's row resolves, as
    when the deliveries are recorded one by one.
    """
    moves = _identity_moves(s, absorbed, {row[2] for row in rows})
    if people is None:
        found = _people(s, {(row[6], row[7]) for row in rows if row[6] or row[7]})
        people = [found.get((row[6], row[7])) for row in rows]
    index = batch if batch is not None else [0] * len(rows)
    later: dict[str, list[tuple[int, str]]] = {}  # own key -> (delivery, person's key)
    placed: list[InboxInsert] = []
    for (key, own, number, kind, sealed, at, _, _, aliases), person, i in zip(
        rows, people, index, strict=True
    ):
        queue = own if person is None else person_queue_key(number, person)
        if person is not None:
            for alias in (own, *aliases):
                if alias != queue:
                    moves.setdefault(alias, queue)
                    later.setdefault(alias, []).append((i, queue))
        placed.append((key, queue, number, kind, sealed, at))
    for n, (key, queue, number, kind, sealed, at) in enumerate(placed):
        for i, target in later.get(queue, ()):
            if i > index[n]:  # a later delivery of the batch folded this row's own queue
                placed[n] = (key, target, number, kind, sealed, at)
                break
    _lock_queues(s, {*moves, *moves.values(), *(row[1] for row in placed)})
    move_queues(s, moves)
    return placed


def fold_people(s: Session, absorbed: Sequence[Absorbed]) -> None:
    """Fold the queues of ``absorbed`` identity rows into their survivors' (a call outside a
    delivery: a sighting recorded alone, an identity change)."""
    if absorbed:
        moves = _identity_moves(s, absorbed, ())
        _lock_queues(s, {*moves, *moves.values()})
        move_queues(s, moves)


def _identity_moves(
    s: Session, absorbed: Sequence[Absorbed], numbers: Iterable[str | None]
) -> dict[str, str]:
    """Each absorbed row's queue key -> its survivor's, on every business number in use."""
    if not absorbed:
        return {}
    every = {None, *numbers, *(str(row[0]) for row in s.fetchall(_NUMBERS))}
    return {
        person_queue_key(number, gone): person_queue_key(number, survivor)
        for gone, survivor in absorbed
        for number in sorted(every, key=lambda n: n or "")
    }


def _people(
    s: Session, users: set[tuple[str | None, str | None]]
) -> dict[tuple[str | None, str | None], int]:
    """The identity-map row each ``(BSUID, phone)`` resolves to, as a sighting of them finds
    it: the BSUID's row, else (with a BSUID) the newest phone-only row of the phone, else
    (without) the newest row of the phone. Pairs the map does not know are left out."""
    if not users:
        return {}
    found: dict[int, tuple[str | None, str | None, int]] = {}
    user_ids = sorted({u for u, _ in users if u is not None})
    wa_ids = sorted({w for _, w in users if w is not None})
    for column, values in (("user_id", user_ids), ("wa_id", wa_ids)):
        for part in chunks(values, _CHUNK):
            for identity_id, user_id, wa_id, seen in s.fetchall(
                "SELECT identity_id, user_id, wa_id, last_seen_at FROM svc_user_identities"
                f" WHERE {column} IN {in_list(part)}",
                part,
            ):
                found[int(identity_id)] = (user_id, wa_id, int(seen))
    by_user = {values[0]: key for key, values in found.items() if values[0] is not None}

    def newest(wa_id: str, *, phone_only: bool) -> int | None:
        keys = [
            key
            for key, values in found.items()
            if values[1] == wa_id and not (phone_only and values[0] is not None)
        ]
        return max(keys, key=lambda key: (found[key][2], key), default=None)

    people: dict[tuple[str | None, str | None], int] = {}
    for user_id, wa_id in users:
        person = by_user.get(user_id) if user_id is not None else None
        if person is None and wa_id is not None:
            person = newest(wa_id, phone_only=user_id is not None)
        if person is not None:
            people[(user_id, wa_id)] = person
    return people


def _lock_queues(s: Session, keys: set[str]) -> None:
    """PostgreSQL: the queues' advisory locks (as ``DeliveryWrite.lock_keys`` names them), in
    one sorted statement, so a queue's ids rise in commit order whichever identifier
    reached it. The caller took its delivery's locks before: these come after them."""
    if keys and s.dialect == "postgres":
        s.run(
            "SELECT pg_advisory_xact_lock(?, hashtext(x)) FROM unnest(?::text[]) AS x",
            (ADVISORY_NAMESPACE, sorted(f"inbox:{key}" for key in keys)),
        )


def move_queues(s: Session, moves: dict[str, str]) -> None:
    """Move the rows and the states of each queue ``from -> to``: the rows keep their ids
    (their order) and remember the key their run was claimed under; of the states that
    meet, the one written last survives (the target's at a tie), with its sealing key."""
    froms = sorted(moves)
    if not froms:
        return
    waiting: set[str] = set()
    for part in chunks(froms, _CHUNK):
        waiting.update(
            str(row[0])
            for row in s.fetchall(
                f"SELECT DISTINCT queue_key FROM svc_inbox WHERE queue_key IN {in_list(part)}",
                part,
            )
        )
    for target, sources in _by_target(moves, waiting).items():
        for part in chunks(sources, _CHUNK):
            s.run(
                "UPDATE svc_inbox SET queue_key = ?, folded_from = COALESCE(folded_from,"
                f" queue_key) WHERE queue_key IN {in_list(part)}",
                (target, *part),
            )
    keys = sorted({*froms, *moves.values()})
    states: dict[str, tuple[str | None, bytes, int, int, str]] = {}
    for part in chunks(keys, _CHUNK):
        for key, number, sealed, expires_at, updated_at, sealed_for in s.fetchall(
            "SELECT queue_key, phone_number_id, sealed, expires_at, updated_at, sealed_for"
            f" FROM svc_user_state WHERE queue_key IN {in_list(part)}",
            part,
        ):
            states[str(key)] = (
                number,
                bytes(sealed),
                int(expires_at),
                int(updated_at),
                str(sealed_for or key),
            )
    for target, sources in _by_target(moves, states.keys()).items():
        met = [(states[key][3], key == target, key) for key in (target, *sources) if key in states]
        winner = max(met)[2]
        for part in chunks(sources, _CHUNK):
            s.run(f"DELETE FROM svc_user_state WHERE queue_key IN {in_list(part)}", part)
        if winner != target:
            write_user_state(s, target, *states[winner])


def _by_target(moves: dict[str, str], present: Iterable[str]) -> dict[str, list[str]]:
    """The moves whose source is ``present``, grouped by target, sources sorted."""
    grouped: dict[str, list[str]] = {}
    for source in sorted(set(present) & moves.keys()):
        grouped.setdefault(moves[source], []).append(source)
    return grouped
