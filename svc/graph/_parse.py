"""Small readers that turn a parsed upstream answer into typed values, or raise.

A 2xx answer whose shape is wrong raises ``GraphSerializationError``; optional
fields that are absent (or of an unexpected type) read as ``None``. ``read_record``
reads a whole result record with them, each field as its type says.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Self, TypeVar, get_args, get_type_hints

from svc._json import loads_strict
from svc._text import decimal_int

from ._errors import GraphSerializationError

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

__all__ = [
    "ApiRecord",
    "Raw",
    "as_object",
    "first_data",
    "json_object",
    "object_list",
    "opt_bool",
    "opt_int",
    "opt_object",
    "opt_str",
    "read_record",
    "req_str",
    "str_tuple",
]


Raw = Mapping[str, Any]
"""A parsed Graph JSON object, as the results keep it in ``raw``."""

R = TypeVar("R", bound="DataclassInstance")


def as_object(value: Any, *, what: str) -> Mapping[str, Any]:
    """``value`` as a JSON object, or ``GraphSerializationError`` naming ``what``."""
    if not isinstance(value, Mapping):
        raise GraphSerializationError(f"{what}: expected a JSON object from the Graph API")
    return value


def json_object(body: bytes) -> dict[str, Any] | None:
    """The JSON object a body holds (read strictly), or ``None``: empty, not JSON, not an object."""
    try:
        parsed = loads_strict(body) if body else None
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


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
    if isinstance(value, str):
        return decimal_int(value, signed=True)
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


def first_data(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """The first object of ``obj["data"]``, or ``obj`` itself: edges answer either way."""
    items = object_list(obj.get("data"))
    return items[0] if items else obj


def read_record(cls: type[R], raw: Any, /, *, what: str, **values: Any) -> R:
    """The result record ``cls`` read from the JSON object ``raw``, field by field.

    Each field not in ``values`` is read under its own name as its type says
    (``_read_field``); ``values`` gives the fields read another way (another key,
    a nested object, a computed value). ``what`` names the answer in errors.
    """
    obj = as_object(raw, what=what)
    read = {
        name: _read_field(hint, obj, name, what=what)
        for name, hint in _field_types(cls)
        if name not in values
    }
    return cls(**read, **values)


def _read_field(hint: Any, obj: Mapping[str, Any], key: str, *, what: str) -> Any:
    """``obj[key]`` read as the type ``hint`` of a result field.

    ``str`` is required (``req_str``); ``str | None``, ``int | None``, ``bool | None``
    and ``Raw | None`` read with ``opt_*``; ``Raw`` is ``obj`` itself; tuples keep
    the items of their type; a record (``X | None`` or ``tuple[X, ...]``) is read by
    its own ``from_api`` from each JSON object.
    """
    if hint == str | None:
        return opt_str(obj, key)
    if hint == int | None:
        return opt_int(obj, key)
    if hint == bool | None:
        return opt_bool(obj, key)
    if hint == Raw | None:
        return opt_object(obj, key)
    if hint is str:
        return req_str(obj, key, what=what)
    if hint == Raw:
        return obj
    if hint == tuple[str, ...]:
        return str_tuple(obj.get(key))
    if hint == tuple[Raw, ...]:
        return object_list(obj.get(key))
    args = get_args(hint)
    record = args[0] if len(args) == 2 and hasattr(args[0], "from_api") else None
    if record is not None and args[1] is ...:
        return tuple(record.from_api(item) for item in object_list(obj.get(key)))
    if record is not None and args[1] is type(None):
        value = obj.get(key)
        return record.from_api(value) if isinstance(value, Mapping) else None
    raise TypeError(f"{what}: no reader for field {key!r} of type {hint!r}; give its value")


@functools.cache
def _field_types(cls: type[DataclassInstance]) -> tuple[tuple[str, Any], ...]:
    """The name and resolved type of each field of the dataclass ``cls``."""
    hints = get_type_hints(cls)
    return tuple((field.name, hints[field.name]) for field in dataclasses.fields(cls))


class ApiRecord:
    """A result record read wholly by its field types: ``from_api`` is ``read_record``.

    A subclass names its answer in ``_what`` (the errors say it, unless the call
    names it); a record with a field read another way writes its own ``from_api``.
    """

    __slots__ = ()
    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]
    _what: ClassVar[str]

    @classmethod
    def from_api(cls, raw: Any, *, what: str | None = None) -> Self:
        """The record read from the JSON object ``raw``, or ``GraphSerializationError``."""
        return read_record(cls, raw, what=cls._what if what is None else what)
