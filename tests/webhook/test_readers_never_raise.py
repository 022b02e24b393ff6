"""Every typed reader of an update answers for any value in any place of a delivery: a leaf of
a real fixture replaced by an odd value (a number as odd text, a surrogate, a huge integer, a
list where an object stood, ...) normalizes, and every public property of every update, and of
what those hold, reads without raising (an unreadable value reads as None or is skipped)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from svc.webhook import normalize

FIXTURES = sorted((Path(__file__).parent / "fixtures").glob("*.json"))
ODD = st.sampled_from(
    [
        "--5", "²", "1٣", "9" * 5000, "", " ", "\ud800", -1, 2**70, 1e308, -0.0, True, None,
        [], {}, [1], {"a": 1}, "nan", "0x10", "1e5", "TIER_2K", "2024-13-45T99:99:99Z",
    ]
)  # fmt: skip


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(value, dict):
        return [p for key, item in value.items() for p in _leaves(item, (*path, key))]
    if isinstance(value, list):
        return [p for index, item in enumerate(value) for p in _leaves(item, (*path, index))]
    return [path]


def _read_all(value: Any, depth: int = 0) -> None:
    """Read every public property and dataclass field, three levels down."""
    if depth > 3 or value is None or isinstance(value, (str, bytes, int, float, dict)):
        return
    if isinstance(value, (list, tuple)):
        for item in value[:20]:
            _read_all(item, depth + 1)
        return
    names = {name for name in dir(type(value)) if not name.startswith("_")}
    for name in sorted(names):
        attribute = getattr(type(value), name, None)
        if callable(attribute) and not isinstance(attribute, property):
            continue
        _read_all(getattr(value, name), depth + 1)
    if dataclasses.is_dataclass(value):
        for field in dataclasses.fields(value):
            _read_all(getattr(value, field.name), depth + 1)


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda path: path.stem)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_an_odd_value_anywhere_reads_as_nothing_never_an_error(
    fixture: Path, data: st.DataObject
) -> None:
    envelope = json.loads(fixture.read_text())
    # Inside a change's value (four keys down), each leaf is replaced at even odds.
    for *parents, last in _leaves(envelope):
        if len(parents) < 4 or not data.draw(st.booleans()):
            continue
        holder = envelope
        for key in parents:
            holder = holder[key]
        holder[last] = data.draw(ODD)
    for update in normalize(envelope).updates:
        _read_all(update)
