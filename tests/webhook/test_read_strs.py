"""``read_strs``: the string fields of a record read by key, as ``read_str`` reads each."""

from __future__ import annotations

from svc.webhook._read import read_str, read_strs


def test_each_key_reads_as_read_str_would_read_it() -> None:
    value = {"a": "x", "b": 1, "c": None, "d": ["y"], "e": ""}
    assert read_strs(value, "a", "b", "c", "d", "e", "missing") == {
        key: read_str(value.get(key)) for key in ("a", "b", "c", "d", "e", "missing")
    }
    assert read_strs(value, "a", "e") == {"a": "x", "e": ""}


def test_only_the_named_keys_are_read_in_the_order_named() -> None:
    value = {"a": "x", "b": "y", "c": "z"}
    assert list(read_strs(value, "c", "a")) == ["c", "a"]
    assert read_strs(value) == {}
