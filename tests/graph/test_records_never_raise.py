"""Every result record reads any answer: each ``ApiRecord``'s ``from_api`` over objects whose
fields hold odd values (numbers as odd text, huge integers, surrogates, lists for objects, ...)
returns a record or raises ``GraphSerializationError``, never anything else, and every field and
property of what it returns reads."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import svc.graph
from svc.graph import GraphSerializationError
from svc.graph._parse import ApiRecord

for _module in pkgutil.iter_modules(svc.graph.__path__):
    importlib.import_module(f"svc.graph.{_module.name}")


def _records(cls: type) -> list[type]:
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *_records(sub)]
    return found


RECORDS = sorted(set(_records(ApiRecord)), key=lambda cls: cls.__name__)
LEAVES = st.sampled_from(
    [
        "--5", "²", "9" * 5000, "", "\ud800", "x", "1", -1, 0, 5, 2**70, 0.5, 1e308, True,
        None, [], {}, [1], ["a"], [{}], [{"id": "1"}], {"a": 1}, {"data": [{}]},
    ]
)  # fmt: skip


def _value(keys: list[str]) -> st.SearchStrategy[Any]:
    return st.recursive(
        LEAVES,
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(keys), inner, max_size=4)
        ),
        max_leaves=6,
    )


def test_every_record_module_was_found() -> None:
    assert len(RECORDS) >= 50


@pytest.mark.parametrize("cls", RECORDS, ids=lambda cls: cls.__name__)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_an_answer_with_odd_values_reads_or_is_refused(cls: type, data: st.DataObject) -> None:
    keys = sorted({field.name for field in dataclasses.fields(cls)} | {"id", "data", "paging"})
    raw = data.draw(st.dictionaries(st.sampled_from(keys), _value(keys), max_size=8))
    try:
        record = cls.from_api(raw)  # type: ignore[attr-defined]
    except GraphSerializationError:
        return
    for field in dataclasses.fields(record):
        getattr(record, field.name)
    for name, _ in inspect.getmembers(type(record), lambda m: isinstance(m, property)):
        getattr(record, name)
