"""Cursor pagination: follows `after` while `paging.next` exists, stops cleanly, honours caps."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from svc.graph import DEFAULT_API_VERSION, GraphRequestValidationError, Page, Paginator, paginate

from ._admin_wire import GROUP_ID, PHONE_ID, Upstream, assert_wire


def page(ids: list[str], after: str | None, *, next_link: bool = True) -> dict[str, Any]:
    paging: dict[str, Any] = {"cursors": {"before": "B"}}
    if after is not None:
        paging["cursors"]["after"] = after
        if next_link:
            paging["next"] = f"https://graph.facebook.com/{DEFAULT_API_VERSION}/x?after={after}"
    return {"data": {"groups": [{"id": i, "subject": i} for i in ids]}, "paging": paging}


async def collect(iterator: Paginator[Any]) -> list[str]:
    return [item.id async for item in iterator]


async def test_walks_every_page_and_stops_without_next() -> None:
    up = Upstream(page(["g1", "g2"], "c1"), page(["g3"], "c2"), page(["g4"], "c3", next_link=False))
    iterator = paginate(up.phone().list_groups, limit=2)
    assert await collect(iterator) == ["g1", "g2", "g3", "g4"]
    assert iterator.pages_fetched == 3
    assert_wire(up.requests[0], "GET", f"/{PHONE_ID}/groups", query={"limit": "2"})
    assert_wire(up.requests[1], "GET", f"/{PHONE_ID}/groups", query={"limit": "2", "after": "c1"})
    assert_wire(up.requests[2], "GET", f"/{PHONE_ID}/groups", query={"limit": "2", "after": "c2"})


async def test_stops_when_no_after_cursor() -> None:
    up = Upstream(page(["g1"], None))
    assert await collect(paginate(up.phone().list_groups)) == ["g1"]
    assert len(up.requests) == 1


async def test_empty_first_page() -> None:
    up = Upstream({"data": [], "paging": {"cursors": {}}})
    assert await collect(paginate(up.group(GROUP_ID).list_join_requests)) == []
    assert len(up.requests) == 1


async def test_max_pages_cap() -> None:
    up = Upstream(page(["g1"], "c1"), page(["g2"], "c2"), page(["g3"], "c3"))
    iterator = paginate(up.phone().list_groups, max_pages=2)
    assert await collect(iterator) == ["g1", "g2"]
    assert len(up.requests) == 2


async def test_max_items_cap_stops_requesting() -> None:
    up = Upstream(page(["g1", "g2"], "c1"), page(["g3", "g4"], "c2"), page(["g5"], "c3"))
    assert await collect(paginate(up.phone().list_groups, max_items=3)) == ["g1", "g2", "g3"]
    assert len(up.requests) == 2


async def test_repeated_cursor_stops_the_walk() -> None:
    up = Upstream(page(["g1"], "same"), page(["g2"], "same"), page(["g3"], "same"))
    assert await collect(paginate(up.phone().list_groups)) == ["g1", "g2"]
    assert len(up.requests) == 2


async def test_caller_starting_cursor_is_used_first() -> None:
    up = Upstream(page(["g9"], None))
    await collect(paginate(up.phone().list_groups, after="start"))
    assert_wire(up.only, "GET", f"/{PHONE_ID}/groups", query={"after": "start"})


@pytest.mark.parametrize("cap", [0, -1, True, 1.5, "2"])
def test_invalid_caps_are_rejected(cap: Any) -> None:
    with pytest.raises(GraphRequestValidationError):
        paginate(Upstream().phone().list_groups, max_pages=cap)
    with pytest.raises(GraphRequestValidationError):
        paginate(Upstream().phone().list_groups, max_items=cap)


async def test_helper_validation_still_applies() -> None:
    up = Upstream()
    with pytest.raises(GraphRequestValidationError):
        await collect(paginate(up.phone().list_groups, limit=0))
    assert up.requests == []


@settings(max_examples=40)
@given(
    sizes=st.lists(st.integers(min_value=0, max_value=4), min_size=1, max_size=6),
    max_pages=st.none() | st.integers(min_value=1, max_value=8),
    max_items=st.none() | st.integers(min_value=1, max_value=30),
)
async def test_property_caps(
    sizes: list[int], max_pages: int | None, max_items: int | None
) -> None:
    answers = []
    counter = 0
    for index, size in enumerate(sizes):
        ids = [f"g{counter + k}" for k in range(size)]
        counter += size
        last = index == len(sizes) - 1
        answers.append(page(ids, None if last else f"c{index}"))
    up = Upstream(*answers)
    got = await collect(paginate(up.phone().list_groups, max_pages=max_pages, max_items=max_items))
    pages_allowed = sizes[: max_pages] if max_pages is not None else sizes
    expected = [f"g{k}" for k in range(sum(pages_allowed))]
    if max_items is not None:
        expected = expected[:max_items]
    assert got == expected
    assert len(up.requests) <= len(pages_allowed)


def test_page_next_cursor_needs_both_after_and_next() -> None:
    parsed = Page.from_api(page(["g"], "c"), dict, what="t", nested_key="groups")
    assert parsed.next_cursor == "c"
    parsed = Page.from_api(page(["g"], "c", next_link=False), dict, what="t", nested_key="groups")
    assert parsed.next_cursor is None
