"""The strict JSON decoder every inbound parse shares: JSON numbers only, all of them finite.

``NaN``, ``Infinity`` and ``-Infinity`` are not JSON, and a literal whose value
overflows a float (``1e999``) would read as infinity: both raise ``ValueError``
at the parse, so an infinite or undefined number never reaches hashing,
validation or storage, where it would fail late (a 500) instead of early (a 400).

A leaf module: it imports nothing from svc, so every layer may use it.
"""

from __future__ import annotations

import json
import math
from typing import Any, Final

__all__ = ["STRICT_DECODER", "finite_float", "loads_strict"]


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def finite_float(text: str) -> float:
    """The float a JSON number literal spells, or ``ValueError`` when it is not finite."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError("a JSON number out of the float range")
    return value


STRICT_DECODER: Final = json.JSONDecoder(parse_constant=_reject_constant, parse_float=finite_float)
"""Built once: ``json.loads(..., parse_constant=...)`` would build a decoder per call."""


def loads_strict(text: str) -> Any:
    """``json.loads(text)`` with only finite numbers: ``ValueError`` (a ``JSONDecodeError`` or
    a non-finite number) otherwise, ``RecursionError`` for nesting too deep."""
    return STRICT_DECODER.decode(text)
