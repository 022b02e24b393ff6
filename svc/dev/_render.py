"""The handler runtime's events as the inspector draws them and as the terminal prints them.

``describe(event)`` gives the page's record of one ``svc.runtime`` event: the step it
puts the update in (pending, running, waiting, consumed, done, retried, dead), with
attempts, durations, the waits' timeouts, a run's traceback and a written state
decoded. ``terminal_line(record)`` is the same record as one readable line (the
traceback on the lines below it). Both show user data (state, tracebacks): only
``svc dev`` uses them.
"""

from __future__ import annotations

import json
import traceback
from typing import Any, Protocol

from svc.runtime import (
    RunEnded,
    RunStarted,
    RuntimeEvent,
    StateWritten,
    UpdateQueued,
    UpdateTaken,
    WaitEnded,
    WaitStarted,
)

__all__ = ["describe", "terminal_line"]

_ENDED_STEP = {"success": "done", "error": "retried", "timeout": "retried", "dead": "dead"}


def _state(document: bytes | None) -> Any:
    if document is None:
        return None
    try:
        return json.loads(document)
    except ValueError:
        return document.decode("utf-8", "replace")


class _OfAnUpdate(Protocol):
    """The fields every event about one update has."""

    @property
    def update_key(self) -> str: ...

    @property
    def queue(self) -> str: ...


def _record(step: str, event: _OfAnUpdate, **details: Any) -> dict[str, Any]:
    return {"step": step, "update": event.update_key, "queue": event.queue, **details}


def describe(event: RuntimeEvent) -> dict[str, Any]:
    """The inspector's record of ``event``: ``step``, the update and queue, and its details."""
    if isinstance(event, UpdateQueued):
        return _record("pending", event, kind=event.kind)
    if isinstance(event, RunStarted):
        return _record("running", event, kind=event.kind, attempt=event.attempt)
    if isinstance(event, WaitStarted):
        return _record("waiting", event, listener=event.listener, timeout=event.timeout)
    if isinstance(event, WaitEnded):
        step = "running" if event.taken is not None else "wait timed out"
        return _record(step, event, listener=event.listener, taken=event.taken)
    if isinstance(event, UpdateTaken):
        return _record("consumed", event, by=event.by, how=event.how)
    if isinstance(event, RunEnded):
        record = _record(
            _ENDED_STEP[event.outcome],
            event,
            kind=event.kind,
            attempt=event.attempt,
            outcome=event.outcome,
            seconds=round(event.seconds, 4),
        )
        if event.reason is not None:
            record["reason"] = event.reason
        if event.retry_in is not None:
            record["retry_in"] = round(event.retry_in, 3)
        if event.error is not None:
            record["error"] = type(event.error).__name__
            record["traceback"] = "".join(traceback.format_exception(event.error)).rstrip()
        return record
    if isinstance(event, StateWritten):
        return {"step": "state", "queue": event.queue, "state": _state(event.document),
                "deleted": event.document is None}
    # An event kind this build does not know yet: shown by its name, never dropped.
    return {"step": type(event).__name__, "update": str(getattr(event, "update_key", "")),
            "queue": str(getattr(event, "queue", ""))}


def terminal_line(record: dict[str, Any]) -> str:
    """One line of ``svc dev``'s terminal for a ``describe`` record (a traceback follows it)."""
    step = record["step"]
    if step == "state":
        shown = "deleted" if record["deleted"] else json.dumps(record["state"], ensure_ascii=False)
        return f"dev: state queue={record['queue'][:12]} {shown}"
    parts = [f"dev: {step}", record.get("kind", ""), f"update={record['update'][:12]}"]
    if "attempt" in record:
        parts.append(f"attempt={record['attempt']}")
    if "seconds" in record:
        parts.append(f"{record['seconds'] * 1000:.1f} ms")
    if "listener" in record:
        parts.append(f"listener={record['listener']}")
    if "timeout" in record:
        parts.append(f"timeout={record['timeout']:g} s")
    if record.get("taken"):
        parts.append(f"took={record['taken'][:12]}")
    if "by" in record:
        parts.append(f"by={record['by'][:12]} ({record['how']})")
    if "retry_in" in record:
        parts.append(f"retry in {record['retry_in']:g} s")
    if "reason" in record:
        parts.append(f"reason={record['reason']}")
    if "error" in record:
        parts.append(f"error={record['error']}")
    line = " ".join(part for part in parts if part)
    if "traceback" in record:
        line += "\n" + record["traceback"]
    return line
