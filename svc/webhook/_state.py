"""``ctx.state``: a small JSON document kept per user (per queue) between a handler's runs.

The runtime loads it before a run and writes it with the run's completion only
when its canonical JSON changed (so a failed run writes nothing); this module is
the document itself: a mutable mapping of JSON values, size-capped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any, Final

__all__ = ["MAX_STATE_BYTES", "StateTooLarge", "UserState"]

MAX_STATE_BYTES: Final = 16 * 1024
"""The largest state, as canonical JSON (UTF-8): over it the run fails with ``StateTooLarge``."""
_ENCODER: Final = json.JSONEncoder(
    separators=(",", ":"), sort_keys=True, ensure_ascii=False, allow_nan=False
)


class StateTooLarge(ValueError):
    """A handler left ``ctx.state`` over ``MAX_STATE_BYTES`` of JSON: the run fails, and the
    state stays as it was."""


def _canonical(data: Mapping[str, Any]) -> bytes:
    try:
        return _ENCODER.encode(data).encode("utf-8", "surrogatepass")
    except (TypeError, ValueError) as exc:  # a value JSON cannot hold (a set, NaN, ...)
        raise TypeError(f"ctx.state holds only JSON values ({type(exc).__name__})") from None


class UserState(MutableMapping[str, Any]):
    """A mutable mapping of JSON values (str keys; str, numbers, bools, None, lists, dicts).

    ``clear()`` empties it, and an empty state is deleted when the run succeeds.
    Nested values may be changed in place (``state["cart"].append(item)``): the
    change is found by comparing the canonical JSON at the end of the run.
    """

    __slots__ = ("_data", "_loaded")

    def __init__(self, data: Mapping[str, Any] | None = None) -> None:
        self._data: dict[str, Any] = dict(data or {})
        self._loaded = _canonical(self._data) if self._data else b""

    @classmethod
    def from_json(cls, document: bytes) -> UserState:
        """The state of a stored document (a JSON object); ``ValueError`` if it is not one."""
        data = json.loads(document)
        if not isinstance(data, dict):
            raise ValueError("a state is a JSON object")
        return cls(data)

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __setitem__(self, key: str, value: Any) -> None:
        if not isinstance(key, str):
            raise TypeError("ctx.state keys are strings")
        _canonical({key: value})  # refused at once when not JSON
        self._data[key] = value

    def __delitem__(self, key: str) -> None:
        del self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def clear(self) -> None:
        """Forget everything: the state is deleted when the run succeeds."""
        self._data.clear()

    def __repr__(self) -> str:
        return f"UserState(keys={len(self._data)})"  # never the values: they are user data

    def document(self) -> bytes | None:
        """The canonical JSON to store (None: empty, delete it); ``StateTooLarge`` over the
        cap, ``TypeError`` for a value JSON cannot hold."""
        if not self._data:
            return None
        encoded = _canonical(self._data)
        if len(encoded) > MAX_STATE_BYTES:
            raise StateTooLarge(f"ctx.state is over {MAX_STATE_BYTES} bytes of JSON")
        return encoded

    @property
    def changed(self) -> bool:
        """Whether the document differs from the one loaded (compared as canonical JSON)."""
        return (_canonical(self._data) if self._data else b"") != self._loaded
