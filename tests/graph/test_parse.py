"""``read_record``: a result record read field by field from its types, as ``from_api`` did."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from svc.graph import (
    Flow,
    GraphSerializationError,
    OptimizationSpec,
    PhoneNumberInfo,
    Template,
)
from svc.graph._parse import ApiRecord, Raw, read_record


@dataclass(frozen=True, slots=True, kw_only=True)
class Item:
    name: str | None
    raw: Raw

    @classmethod
    def from_api(cls, raw: Raw) -> Item:
        return read_record(cls, raw, what="item")


@dataclass(frozen=True, slots=True, kw_only=True)
class Record:
    id: str
    label: str | None
    count: int | None
    enabled: bool | None
    settings: Raw | None
    tags: tuple[str, ...]
    blobs: tuple[Raw, ...]
    items: tuple[Item, ...]
    first: Item | None
    raw: Raw


def read(obj: Any, **values: Any) -> Record:
    return read_record(Record, obj, what="record", **values)


def test_each_field_is_read_by_its_name_and_type() -> None:
    obj = {
        "id": "7",
        "label": "kettle",
        "count": "12",
        "enabled": False,
        "settings": {"a": 1},
        "tags": ["x", 1, "y", None],
        "blobs": [{"b": 2}, "no", 3],
        "items": [{"name": "one"}, "no", {"name": 2}],
        "first": {"name": "head"},
    }
    record = read(obj)
    assert record == Record(
        id="7",
        label="kettle",
        count=12,
        enabled=False,
        settings={"a": 1},
        tags=("x", "y"),
        blobs=({"b": 2},),
        items=(Item(name="one", raw={"name": "one"}), Item(name="2", raw={"name": 2})),
        first=Item(name="head", raw={"name": "head"}),
        raw=obj,
    )
    assert record.raw is obj


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("label", 5, "5"),
        ("label", True, None),
        ("label", 1.5, None),
        ("label", ["a"], None),
        ("count", True, None),
        ("count", "-3", -3),
        ("count", "1.5", None),
        ("count", "١٢", None),
        ("count", "--3", None),  # str.isdigit of "3" after the dashes: int refused it
        ("count", "9" * 5000, None),  # int refuses past 4,300 digits
        ("count", "9" * 18, 10**18 - 1),
        ("count", 1.5, None),
        ("enabled", "true", None),
        ("enabled", 1, None),
        ("settings", ["a"], None),
        ("settings", "a", None),
        ("tags", "xy", ()),
        ("blobs", {"b": 2}, ()),
        ("items", {"name": "one"}, ()),
        ("first", "head", None),
        ("first", [{"name": "head"}], None),
    ],
)
def test_a_wrong_typed_value_reads_as_the_opt_readers_say(
    key: str, value: object, expected: object
) -> None:
    assert getattr(read({"id": "7", key: value}), key) == expected


def test_everything_absent_but_the_required_field() -> None:
    assert read({"id": 7}) == Record(
        id="7", label=None, count=None, enabled=None, settings=None, tags=(), blobs=(),
        items=(), first=None, raw={"id": 7},
    )


@pytest.mark.parametrize("obj", [{}, {"id": ""}, {"id": None}, {"id": True}, {"id": 1.5}])
def test_a_missing_required_field_names_the_answer_and_the_key(obj: dict[str, Any]) -> None:
    with pytest.raises(GraphSerializationError, match=r"^record: the answer has no 'id'$"):
        read(obj)


@pytest.mark.parametrize("raw", [None, [], "id", 3])
def test_an_answer_that_is_not_an_object_is_refused(raw: object) -> None:
    with pytest.raises(
        GraphSerializationError, match=r"^record: expected a JSON object from the Graph API$"
    ):
        read(raw)


def test_given_values_replace_the_reading_and_are_not_checked() -> None:
    sub = {"id": "inner", "label": "from sub"}
    record = read(sub, label="given", count=None, raw={"outer": True})
    assert (record.id, record.label, record.raw) == ("inner", "given", {"outer": True})
    assert read({}, id="computed").id == "computed"


def test_a_given_value_for_no_field_is_an_error() -> None:
    with pytest.raises(TypeError):
        read({"id": "7"}, lable="typo")


def test_a_field_it_has_no_reader_for_must_be_given() -> None:
    @dataclass(frozen=True, slots=True, kw_only=True)
    class Odd:
        when: float
        raw: Raw

    with pytest.raises(TypeError, match="'when'"):
        read_record(Odd, {"when": 1.0}, what="odd")
    assert read_record(Odd, {}, what="odd", when=2.0) == Odd(when=2.0, raw={})


def test_records_keep_their_error_messages() -> None:
    with pytest.raises(GraphSerializationError, match=r"^flow: the answer has no 'id'$"):
        Flow.from_api({"name": "x"})
    with pytest.raises(GraphSerializationError, match=r"^phone number: the answer has no 'id'$"):
        PhoneNumberInfo.from_api({"throughput": {"level": "HIGH"}})
    with pytest.raises(GraphSerializationError, match=r"^template: expected a JSON object"):
        Template.from_api([])


def test_nested_records_use_their_own_from_api() -> None:
    flow = Flow.from_api({
        "id": "1",
        "validation_errors": [{"error": "E", "line_start": "4"}, 5],
        "preview": {"preview_url": "https://p", "expires_at": 9},
    })
    assert [(i.error, i.line_start) for i in flow.validation_errors] == [("E", 4)]
    assert flow.preview is not None
    assert (flow.preview.preview_url, flow.preview.expires_at) == ("https://p", "9")
    assert Flow.from_api({"id": "1", "preview": "soon"}).preview is None
    spec = Template.from_api({"id": "1", "optimization_spec": {"bid_amount": "900"}})
    assert spec.optimization_spec == OptimizationSpec(bid_amount=900)
    assert Template.from_api({"id": "1", "optimization_spec": [1]}).optimization_spec is None


@dataclass(frozen=True, slots=True, kw_only=True)
class Named(ApiRecord):
    _what = "named thing"

    id: str
    raw: Raw


def test_an_api_record_reads_itself_and_names_its_answer() -> None:
    named = Named.from_api({"id": 3})
    assert named == Named(id="3", raw={"id": 3})
    assert not hasattr(named, "__dict__")
    with pytest.raises(GraphSerializationError, match=r"^named thing: the answer has no 'id'$"):
        Named.from_api({})
    with pytest.raises(GraphSerializationError, match=r"^named thing: expected a JSON object"):
        Named.from_api("id")


def test_a_call_may_name_the_answer_in_the_records_stead() -> None:
    with pytest.raises(GraphSerializationError, match=r"^create schedule: the answer has no 'id'$"):
        Named.from_api({}, what="create schedule")
    assert Named.from_api({"id": "1"}, what="") == Named(id="1", raw={"id": "1"})
