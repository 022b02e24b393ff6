"""The strict JSON decoder every inbound parse shares: finite numbers, bounded nesting.

``NaN``, ``Infinity`` and ``-Infinity`` are not JSON, and a literal whose value
overflows a float (``1e999``) would read as infinity: both raise ``ValueError``
at the parse, so an infinite or undefined number never reaches hashing,
validation or storage, where it would fail late (a 500) instead of early (a 400).

Nesting is bounded the same way: a document whose arrays and objects nest
deeper than ``MAX_JSON_DEPTH`` raises ``JsonTooDeepError`` (a ``ValueError``)
at the parse, so nothing deeper reaches the recursive code after it
(canonical JSON, pydantic, the projection), which would fail late with a
``RecursionError``.

A leaf module: it imports nothing from svc, so every layer may use it.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Callable
from typing import Any, Final

__all__ = [
    "MAX_JSON_DEPTH",
    "STRICT_DECODER",
    "JsonTooDeepError",
    "check_json_depth",
    "decode_bounded",
    "finite_float",
    "json_depth_exceeds",
    "loads_strict",
]

MAX_JSON_DEPTH: Final = 64
"""The deepest nesting of arrays and objects svc reads (the outermost one is depth 1).

The platform's own documents nest about 10 deep (an envelope, its entry,
change, value, message and the message's content); 64 leaves room for
application data (a Flow's ``data``) and stays far below the interpreter's
recursion limit (1,000) and orjson's (255).
"""

_STRING: Final = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
"""A JSON string token (escapes included), in the unrolled form."""
_BRACKET: Final = re.compile(r"[\[\]{}]")
_STEP: Final = {"[": 1, "{": 1, "]": -1, "}": -1}


class JsonTooDeepError(ValueError):
    """A JSON document nests arrays and objects deeper than the limit."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"JSON nests deeper than {limit} levels")
        self.limit = limit


def json_depth_exceeds(text: str, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether the valid JSON ``text`` nests arrays and objects deeper than ``limit``.

    Call it on text that parsed: brackets inside strings do not count, and on
    text that is not JSON the string scan can take quadratic time. A text
    with at most ``limit`` opening brackets cannot be deeper, which two
    ``str.count`` calls settle for almost every document; the rest are scanned
    without a Python-level loop (strings removed, brackets summed).
    """
    if text.count("{") + text.count("[") <= limit:
        return False
    brackets = _BRACKET.findall(_STRING.sub("", text))
    return max(itertools.accumulate(map(_STEP.__getitem__, brackets)), default=0) > limit


def check_json_depth(text: str, limit: int = MAX_JSON_DEPTH) -> None:
    """Raise ``JsonTooDeepError`` when the valid JSON ``text`` nests deeper than ``limit``."""
    if json_depth_exceeds(text, limit):
        raise JsonTooDeepError(limit)


def decode_bounded(decode: Callable[[str], Any], text: str) -> Any:
    """``decode(text)``, refused with ``JsonTooDeepError`` past ``MAX_JSON_DEPTH`` levels.

    The parse comes first (the bracket scan is linear only on valid JSON); a
    document deep enough to exhaust the parser's own recursion is refused the
    same way. Nothing is returned until the depth is known to be within the limit.
    """
    try:
        value = decode(text)
    except RecursionError:
        raise JsonTooDeepError(MAX_JSON_DEPTH) from None
    check_json_depth(text)
    return value


def finite_float(text: str) -> float:
    """The float a JSON number literal spells, or ``ValueError`` when it is not finite."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError("a JSON number out of the float range")
    return value


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


STRICT_DECODER: Final = json.JSONDecoder(parse_constant=_reject_constant, parse_float=finite_float)
"""Built once: ``json.loads(..., parse_constant=...)`` would build a decoder per call."""


def loads_strict(text: str | bytes) -> Any:
    """``json.loads(text)`` with only finite numbers and at most ``MAX_JSON_DEPTH`` levels.

    Raises ``ValueError`` otherwise: a ``JSONDecodeError``, a non-finite
    number, a ``JsonTooDeepError``, or (bytes) a ``UnicodeDecodeError``.
    Bytes are read as UTF-8.
    """
    if not isinstance(text, str):
        text = bytes(text).decode("utf-8")
    return decode_bounded(STRICT_DECODER.decode, text)
