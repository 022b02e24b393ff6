"""Cursor pagination over the Graph API's paged list helpers, as an async iterator.

The next page is requested through the same helper with ``after=<cursor>``;
the ``paging.next`` URL is never fetched directly (it embeds a host and query
we did not build).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Generic, TypeVar

from ._errors import GraphRequestValidationError
from ._results import Page

__all__ = ["Paginator", "paginate"]

T = TypeVar("T")


class Paginator(Generic[T], AsyncIterator[T]):
    """Yields the items of successive pages until the last page or a cap.

    It stops cleanly when a page has no ``after`` cursor or no ``paging.next``,
    when the platform repeats a cursor, after ``max_pages`` pages or after
    ``max_items`` items. ``pages_fetched`` counts the requests made so far.
    """

    def __init__(
        self,
        fetch: Callable[..., Awaitable[Page[T]]],
        arguments: dict[str, Any],
        *,
        max_pages: int | None,
        max_items: int | None,
    ) -> None:
        self._fetch = fetch
        self._arguments = arguments
        self._max_pages = max_pages
        self._max_items = max_items
        self._buffer: list[T] = []
        self._cursor: str | None = None
        self._seen: set[str] = set()
        self._done = False
        self._yielded = 0
        self.pages_fetched = 0

    def __aiter__(self) -> Paginator[T]:
        return self

    async def __anext__(self) -> T:
        if self._max_items is not None and self._yielded >= self._max_items:
            raise StopAsyncIteration
        while not self._buffer:
            if self._done:
                raise StopAsyncIteration
            await self._next_page()
        self._yielded += 1
        return self._buffer.pop(0)

    async def _next_page(self) -> None:
        arguments = dict(self._arguments)
        if self._cursor is not None:
            arguments["after"] = self._cursor
        page = await self._fetch(**arguments)
        if not isinstance(page, Page):
            raise TypeError("paginate() needs a helper that returns a Page")
        self.pages_fetched += 1
        self._buffer.extend(page.items)
        cursor = page.next_cursor
        if (
            cursor is None
            or cursor in self._seen
            or (self._max_pages is not None and self.pages_fetched >= self._max_pages)
        ):
            self._done = True
        else:
            self._seen.add(cursor)
            self._cursor = cursor


def paginate(
    fetch: Callable[..., Awaitable[Page[T]]],
    /,
    *,
    max_pages: int | None = None,
    max_items: int | None = None,
    **arguments: Any,
) -> Paginator[T]:
    """Iterate every item of a paged list helper: ``async for g in paginate(phone.list_groups)``.

    ``arguments`` go to each call (``limit=50``, ``fields=...``); the first call
    may carry a starting ``after``. ``max_pages`` and ``max_items`` cap the walk.
    """
    for name, cap in (("max_pages", max_pages), ("max_items", max_items)):
        if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 1):
            raise GraphRequestValidationError(f"{name} must be a positive integer", field=name)
    if not callable(fetch):
        raise GraphRequestValidationError("paginate() needs a list helper to call", field="fetch")
    return Paginator(fetch, arguments, max_pages=max_pages, max_items=max_items)
