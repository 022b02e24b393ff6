"""Small readers that turn a parsed upstream answer into typed values, or raise.

A 2xx answer whose shape is wrong raises ``GraphSerializationError``; optional
fields that are absent (or of an unexpected type) read as ``None``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._errors import GraphSerializationError

__all__ = [
    "Raw",
    "as_object",
    "object_list",
    "opt_bool",
    "opt_int",
    "opt_object",
    "opt_str",
    "req_str",
    "str_tuple",
]


Raw = Mapping[str, Any]
"""A parsed Graph JSON object, as the results keep it in ``raw``."""


def as_object(value: Any, *, what: str) -> Mapping[str, Any]:
    """``value`` as a JSON object, or ``GraphSerializationError`` naming ``what``."""
    if not isinstance(value, Mapping):
        raise GraphSerializationError(f"{what}: expected a JSON object from the Graph API")
    return value


def opt_str(obj: Mapping[str, Any], key: str) -> str | None:
    value = obj.get(key)
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def req_str(obj: Mapping[str, Any], key: str, *, what: str) -> str:
    value = opt_str(obj, key)
    if value is None or not value:
        raise GraphSerializationError(f"{what}: the answer has no {key!r}")
    return value


def opt_int(obj: Mapping[str, Any], key: str) -> int | None:
    value = obj.get(key)
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isascii() and value.lstrip("-").isdigit():
        return int(value)
    return None


def opt_bool(obj: Mapping[str, Any], key: str) -> bool | None:
    value = obj.get(key)
    return value if isinstance(value, bool) else None


def opt_object(obj: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    value = obj.get(key)
    return value if isinstance(value, Mapping) else None


def object_list(value: Any) -> tuple[Mapping[str, Any], ...]:
    """The JSON objects of a list (other items are skipped); ``()`` when not a list."""
    if not isinstance(value, list):
        return ()
    return tuple(item for item in value if isinstance(item, Mapping))


def str_tuple(value: Any) -> tuple[str, ...]:
    """The strings of a list (other items are skipped); ``()`` when not a list."""
    if not isinstance(value, list):
        return ()
    return tuple(item for item in value if isinstance(item, str))
