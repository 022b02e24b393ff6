"""The hot writes the group commit runs together: one table of kinds for both adapters, the
record of a webhook delivery, and the sans-IO rules their set-based forms share.

A write method of the store (``_base``) hands the group commit (``_commit``) a job of one
``Kind``. A batch runs its jobs phase by phase, in the order of ``PHASES``; within a phase
every kind but ``Kind.CALL`` merges: the batch's jobs of that kind run as one call of the
adapter's set-based form (the ``Forms`` method the kind names below; ``sqlite/_writes.py``
and ``postgres/_writes.py``), which answers each job as if the single calls had run one
after another. A job that form cannot settle (``DEFER``), and every job of a phase whose
set-based run failed, runs alone through its single form (``_commit.run_alone``).

| kind | phase | set-based form (``Forms``) | single form |
|---|---|---|---|
| ``MESSAGE`` | 1 | ``record_messages`` | ``_ops.record_message`` |
| ``STATUS`` | 1 | ``append_statuses`` | ``_ops.append_message_status`` |
| ``DELIVERY`` | 1 | ``record_deliveries`` | ``Forms.record_delivery`` |
| ``CLAIM`` | 2 | ``claim_requests`` | ``_ops.claim_service_request`` |
| ``COMPLETE`` | 2 | ``complete_requests`` | ``_ops.complete_service_request`` |
| ``PAUSE`` | 3 | ``pause_templates`` | ``_broadcasts.pause_broadcasts_for_template`` |
| ``INBOX`` | 4 | each in turn | ``_inbox_ops.run_inbox_write`` |
| ``CALL`` | 5 | none: never merges | the job's own function |

The phases are the lock order of a batch: the projection's advisory locks (PostgreSQL takes
them for the whole phase in one sorted statement), then the claims' rows, then the
broadcasts, then the inbox's claims and completions (they share the transaction of the
webhook writes instead of each taking the writer lock; a batch's completions run before its
claims, which then find the queues they released).
"""

from __future__ import annotations

import enum
import itertools
from collections.abc import Callable, Collection, Sequence
from typing import Any, Final, NamedTuple, Protocol

from . import _broadcasts, _identity, _inbox_ops, _ops, _person
from ._identity import Absorbed, Probe
from ._person import InboxInsert, InboxPlacement
from ._records import UpdatesRecorded, WebhookEventResult
from ._session import Session
from ._validate import IdentityArgs, StatusArgs

__all__ = [
    "DEFER",
    "PHASES",
    "DeliveryWrite",
    "Forms",
    "InboxArgs",
    "Kind",
    "MessageArgs",
    "StatusArgs",
    "UpdateKeyRow",
    "event_answers",
    "first_events",
    "first_of_each_key",
    "first_recordings",
    "lock_keys",
    "place_inbox",
    "recorded_new",
    "updates_recorded",
]

MessageArgs = tuple[object, ...]
"""A checked message row in the store's column order (``_ops._MESSAGE_COLUMNS``), times in ms."""
InboxArgs = tuple[str, str, str | None, str, bytes, str | None, str | None, tuple[str, ...]]
"""A checked inbox row: update key, own queue key, business number id, kind, sealed update,
the user's BSUID and phone, and the user's own queue keys (``_person``)."""


class Kind(enum.Enum):
    """What a group-commit job is (the table above); ``CALL`` is any other call, run alone."""

    MESSAGE = "message"
    STATUS = "status"
    DELIVERY = "delivery"
    CLAIM = "claim"
    COMPLETE = "complete"
    PAUSE = "pause"
    INBOX = "inbox"
    CALL = "call"


PHASES: Final[tuple[tuple[Kind, ...], ...]] = (
    (Kind.MESSAGE, Kind.STATUS, Kind.DELIVERY),
    (Kind.CLAIM, Kind.COMPLETE),
    (Kind.PAUSE,),
    (Kind.INBOX,),
    (Kind.CALL,),
)
"""The order a batch runs its jobs in, phase by phase (see the module's table)."""


class DeliveryWrite(NamedTuple):
    """One checked webhook delivery, as ``record_webhook_updates`` hands it to the group commit.

    Its rows commit together or not at all: the event row, the update keys (a key stored
    before is a duplicate, ``recorded_new``), the inbox rows of the keys it recorded new
    (``place_inbox``), the message rows, the status events and the identity sightings.
    (A named tuple: one is built per delivery on the event loop, and a tuple's construction
    is the cheapest immutable record's.)
    """

    event_key: str
    event_hash: str
    received_at: int
    """Epoch ms; the received time of the keys it records."""
    messages: tuple[MessageArgs, ...] = ()
    statuses: tuple[StatusArgs, ...] = ()
    identities: tuple[IdentityArgs, ...] = ()
    update_keys: tuple[str, ...] = ()
    inbox: tuple[InboxArgs, ...] = ()
    """The updates to run, in queue order: the rows of the keys this delivery records new
    go in the inbox (``place_inbox``), due at ``received_at``."""

    def __reduce__(self) -> tuple[Any, ...]:
        # To the writer process (``_child``) as its plain tuple, rebuilt in C: a named
        # tuple's own pickling runs Python code per delivery on each side.
        return (tuple.__new__, (DeliveryWrite, tuple(self)))

    def lock_keys(self) -> tuple[str, ...]:
        """The sorted advisory-lock keys of its rows (PostgreSQL): message ids, identities
        and inbox queues (an inbox row's id is drawn under its queue's lock, so a queue's
        ids rise in commit order and no claim sees a later row before an earlier one)."""
        return tuple(
            sorted(
                {str(values[1]) for values in self.messages}
                | {event[0] for event in self.statuses}
                | set(_identity.lock_keys(self.identities))
                | {f"inbox:{row[1]}" for row in self.inbox}
            )
        )


def lock_keys(kind: Kind, args: Any) -> tuple[str, ...]:
    """The advisory-lock keys a job of ``kind`` holds on PostgreSQL (none but the projection's)."""
    if kind is Kind.MESSAGE:
        return (str(args[1]),)
    if kind is Kind.STATUS:
        return (str(args[0]),)
    if kind is Kind.DELIVERY:
        return args.lock_keys()  # type: ignore[no-any-return]
    return ()


class Forms(Protocol):
    """An adapter's set-based forms: ``SqliteForms`` (``sqlite/_writes.py``) and
    ``PostgresForms`` (``postgres/_writes.py``), a batch connection's ``forms``.

    Each takes the arguments of a batch's jobs of one kind, in order, and answers each as if
    the single calls had run one after another in that order; ``DEFER`` for one it leaves to
    its single form. PostgreSQL's caller holds the jobs' advisory locks.
    """

    def record_deliveries(self, s: Session, items: Sequence[DeliveryWrite]) -> list[object]: ...

    def record_delivery(self, s: Session, item: DeliveryWrite) -> UpdatesRecorded:
        """One delivery on its own (its own locks taken): the single form of ``DELIVERY``."""
        ...

    def record_messages(self, s: Session, items: Sequence[MessageArgs]) -> list[object]: ...

    def append_statuses(self, s: Session, items: Sequence[StatusArgs]) -> list[object]: ...

    def claim_requests(self, s: Session, items: Sequence[tuple[str, str, int]]) -> list[object]: ...

    def complete_requests(
        self, s: Session, items: Sequence[tuple[str, str, str, int, int | None]]
    ) -> list[object]: ...

    def pause_templates(
        self, s: Session, items: Sequence[tuple[str, str | None, int]]
    ) -> list[object]: ...


def set_based(forms: Forms, s: Session, kind: Kind, items: list[Any]) -> list[object]:
    """The set-based form of ``kind`` (the table above) over ``items``."""
    match kind:
        case Kind.DELIVERY:
            return forms.record_deliveries(s, items)
        case Kind.MESSAGE:
            return forms.record_messages(s, items)
        case Kind.STATUS:
            return forms.append_statuses(s, items)
        case Kind.CLAIM:
            return forms.claim_requests(s, items)
        case Kind.COMPLETE:
            return forms.complete_requests(s, items)
        case Kind.PAUSE:
            return forms.pause_templates(s, items)
        case Kind.INBOX:
            return [_inbox_ops.run_inbox_write(s, item) for item in items]
        case Kind.CALL:
            raise AssertionError("a CALL job never merges")


def run_alone(forms: Forms, s: Session, kind: Kind, args: Any) -> object:
    """The single form of a job of ``kind`` (the table above)."""
    match kind:
        case Kind.DELIVERY:
            return forms.record_delivery(s, args)
        case Kind.MESSAGE:
            return _ops.record_message(s, args)
        case Kind.STATUS:
            return _ops.append_message_status(s, *args)
        case Kind.CLAIM:
            return _ops.claim_service_request(s, *args)
        case Kind.COMPLETE:
            return _ops.complete_service_request(s, *args)
        case Kind.PAUSE:
            return _broadcasts.pause_broadcasts_for_template(s, *args)
        case Kind.INBOX:
            return _inbox_ops.run_inbox_write(s, args)
        case Kind.CALL:
            call: Callable[..., object]
            call, call_args = args
            return call(s, *call_args)


class _Defer:
    __slots__ = ()

    def __repr__(self) -> str:
        return "DEFER"


DEFER: Final = _Defer()
"""A set-based form's answer for a job it leaves to its single form."""


# --- the sans-IO rules of the set-based delivery forms ------------------------------------


def first_of_each_key(keys: Sequence[object]) -> dict[object, int]:
    """Each key and the index of its first occurrence, in order."""
    first: dict[object, int] = {}
    for i, key in enumerate(keys):
        first.setdefault(key, i)
    return first


def first_events(
    deliveries: Sequence[DeliveryWrite],
) -> tuple[list[str], dict[object, int], list[tuple[str, str, int]]]:
    """A batch's event keys, each key's first delivery (``first_of_each_key``) and the event
    rows of those first deliveries (key, hash, received-at ms): the only ones that can be new."""
    keys = [item.event_key for item in deliveries]
    first = first_of_each_key(keys)
    rows = [
        (item.event_key, item.event_hash, item.received_at)
        for item in (deliveries[i] for i in first.values())
    ]
    return keys, first, rows


def event_answers(
    keys: Sequence[object], first: dict[object, int], inserted: Collection[object]
) -> list[WebhookEventResult]:
    """``record_webhook_event``'s answers for event ``keys`` recorded in order, given which
    keys the set-based insert stored: only a stored key's first occurrence is new."""
    return [
        WebhookEventResult.RECORDED
        if key in inserted and first[key] == i
        else WebhookEventResult.DUPLICATE
        for i, key in enumerate(keys)
    ]


UpdateKeyRow = tuple[str, str, int, int]
"""The first recording of an update key in a batch: key, event key, received-at ms, the
index of its delivery."""


def first_recordings(deliveries: Sequence[DeliveryWrite]) -> dict[str, UpdateKeyRow]:
    """Each update key of a batch's deliveries and its first recording, in order."""
    first: dict[str, UpdateKeyRow] = {}
    for index, item in enumerate(deliveries):
        for key in item.update_keys:
            if key not in first:
                first[key] = (key, item.event_key, item.received_at, index)
    return first


def recorded_new(first: dict[str, UpdateKeyRow], inserted: Collection[str]) -> set[tuple[int, str]]:
    """``(delivery index, key)`` of each update key the batch recorded for the first time:
    a key the insert stored is new for its first delivery only; every other recording of a
    key (stored before, or earlier in the batch) is a duplicate, as the serial calls say."""
    return {(row[3], key) for key, row in first.items() if key in inserted}


def _new_inbox_rows(
    deliveries: Sequence[DeliveryWrite], new: Collection[tuple[int, str]]
) -> list[tuple[int, InboxArgs]]:
    """Each delivery's rows whose key it recorded new (``recorded_new``: a key new in the
    batch is new for its first delivery only), a key's first row only, with the delivery's
    index."""
    rows: list[tuple[int, InboxArgs]] = []
    taken: set[str] = set()
    for index, item in enumerate(deliveries):
        for row in item.inbox:
            if (index, row[0]) in new and row[0] not in taken:
                taken.add(row[0])
                rows.append((index, row))
    return rows


Upsert = Callable[
    [Session, Sequence[IdentityArgs], Sequence[Probe]], tuple[list[Absorbed], list[int | None]]
]
"""An adapter's merge of a batch's sightings: the rows absorbed and each probe's row."""


def place_inbox(
    s: Session,
    deliveries: Sequence[DeliveryWrite],
    new: Collection[tuple[int, str]],
    upsert: Upsert,
) -> list[InboxInsert]:
    """Merge a batch's identity sightings in delivery order (the adapter's ``upsert``), then
    give the inbox rows of the keys it recorded new (``_new_inbox_rows``) their persons'
    queues (``_person.place_inbox_rows``): the rows to insert, in order.

    Each row's user is looked up as of the end of its delivery's sightings (a probe of
    ``_identity.merge_sightings``): where the deliveries run one by one would resolve it.
    """
    rows = _new_inbox_rows(deliveries, new)
    ends = list(itertools.accumulate(len(item.identities) for item in deliveries))
    absorbed, people = upsert(
        s,
        [sighting for item in deliveries for sighting in item.identities],
        [(ends[index], row[5], row[6]) for index, row in rows],
    )
    if not rows and not absorbed:
        return []
    placements: list[InboxPlacement] = [
        (key, queue, number, kind, sealed, deliveries[index].received_at, user_id, wa_id, aliases)
        for index, (key, queue, number, kind, sealed, user_id, wa_id, aliases) in rows
    ]
    return _person.place_inbox_rows(s, placements, absorbed, people, [i for i, _ in rows])


def updates_recorded(
    deliveries: Sequence[DeliveryWrite],
    events: Sequence[WebhookEventResult],
    new: Collection[tuple[int, str]],
) -> list[object]:
    """Each delivery's answer: its event's outcome and the update keys it recorded new."""
    return [
        UpdatesRecorded(
            event=event,
            new=tuple(key for key in dict.fromkeys(item.update_keys) if (i, key) in new),
        )
        for i, (event, item) in enumerate(zip(events, deliveries, strict=True))
    ]
