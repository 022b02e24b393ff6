"""How a list parameter travels to PostgreSQL: one delimited string where that is exact.

The set-based forms hand PostgreSQL whole columns as arrays (``?::text[]``,
``?::bigint[]``). psycopg adapts an array element by element in Python, which
made adapting parameters a large share of a batch's CPU; a column of strings or
integers joined with a separator is built in C and split by the server
(``string_to_array``). That is exact only when no element holds a separator, so
:func:`packed` checks it and answers None otherwise: that column then goes as a
binary array, as before.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Final

__all__ = ["PACKED_ARRAY", "array_casts", "packed", "placeholders"]

_SEP: Final = chr(31)  # ASCII unit separator: between elements
_NULL: Final = chr(30)  # ASCII record separator: an element that stands for NULL
PACKED_ARRAY: Final = "string_to_array(%s, chr(31), chr(30))"
"""The placeholder of a packed column: the server splits it back into a text array (NULLs kept);
the cast written after the ``?`` (``::bigint[]`` ...) then applies to that array."""
_CAST: Final = re.compile(r"::(text|bigint|integer)\[\]")
_NONE: Final = type(None)
_TEXT_TYPES: Final = frozenset({str, _NONE})
_INT_TYPES: Final = frozenset({int, _NONE})


@lru_cache(maxsize=512)
def array_casts(sql: str) -> tuple[str | None, ...]:
    """For each ``?`` of ``sql``: the element type of the array cast right after it, else None."""
    return tuple(
        match.group(1) if (match := _CAST.match(part)) else None for part in sql.split("?")[1:]
    )


def packed(values: Sequence[object], element: str) -> str | None:
    """``values`` as one string ``string_to_array`` splits back exactly, or None when it cannot.

    ``element`` is the array's element type: ``text`` takes strings, ``bigint``
    and ``integer`` take ints (not bools); None is allowed in both. A string
    holding a separator, and the one list ``[""]`` (which would split into no
    element at all), answer None.
    """
    if not values:
        return ""
    kinds = set(map(type, values))
    if not kinds <= (_TEXT_TYPES if element == "text" else _INT_TYPES):
        return None
    nulls = values.count(None) if _NONE in kinds else 0
    if element == "text":
        items = [_NULL if v is None else v for v in values] if nulls else values
        joined = _SEP.join(items)  # type: ignore[arg-type]  # checked: str or None
        if (
            joined.count(_SEP) != len(values) - 1
            or joined.count(_NULL) != nulls
            or (joined == "" and len(values) == 1)
        ):
            return None
        return joined
    if nulls:
        return _SEP.join(_NULL if v is None else str(v) for v in values)
    return _SEP.join(map(str, values))


@lru_cache(maxsize=512)
def placeholders(sql: str, forms: tuple[int, ...] = ()) -> str:
    """``sql`` with psycopg placeholders for each ``?``: 0 a plain ``%s``, 1 a binary ``%b``
    (a list psycopg adapts), 2 a packed column (:data:`PACKED_ARRAY`)."""
    if not any(forms):
        return sql.replace("?", "%s")
    parts = sql.split("?")
    out = [parts[0]]
    for form, part in zip(forms, parts[1:], strict=True):
        out.append(PACKED_ARRAY if form == 2 else "%b" if form else "%s")
        out.append(part)
    return "".join(out)
