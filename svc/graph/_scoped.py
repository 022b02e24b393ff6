"""Scoped clients: a ``GraphClient`` bound to one phone number, WABA, group, business, app or
Multi-Partner Solution.

Each binds its id once (checked with ``check_path_segment``) and exposes
``request(method, edge, ...)`` for the helpers layered on top of it: message
sends come from the ``MessageSender`` mixins (``InteractiveSender``), admin
helpers are added the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ._admin import (
    AppAdmin,
    BusinessAdmin,
    GroupAdmin,
    PhoneNumberAdmin,
    SolutionAdmin,
    WABAAdmin,
)
from ._client import GraphClient, QueryValue
from ._errors import GraphRequestValidationError
from ._paths import check_path_segment
from ._send_interactive import InteractiveSender

__all__ = [
    "AppClient",
    "BusinessClient",
    "GroupClient",
    "PhoneNumberClient",
    "SolutionClient",
    "WABAClient",
]


class _ScopedClient:
    """The shared part: the wrapped client, the bound id and edge requests below it."""

    _ID_FIELD: ClassVar[str]
    """Named by the admin mixin's ``*Scoped`` base (``_admin_checks``), beside its property."""

    def __init__(self, client: GraphClient, scope_id: str) -> None:
        if client is None or not callable(getattr(client, "request", None)):
            raise GraphRequestValidationError(
                "client must be a GraphClient (an object with a request method)", field="client"
            )
        self._segment = check_path_segment(scope_id, field=self._ID_FIELD)
        self._client = client
        self._scope_id = scope_id

    @property
    def client(self) -> GraphClient:
        """The wrapped ``GraphClient``."""
        return self._client

    def path(self, edge: str = "") -> str:
        """The path ``/{id}/{edge}`` below the bound id (the node itself when ``edge`` is empty)."""
        if not isinstance(edge, str):
            raise GraphRequestValidationError("edge must be a string", field="edge")
        if not edge:
            return f"/{self._segment}"
        parts = [check_path_segment(part, field="edge") for part in edge.split("/")]
        return "/".join([f"/{self._segment}", *parts])

    async def request(
        self,
        method: str,
        edge: str = "",
        *,
        query: Mapping[str, QueryValue] | None = None,
        json: Any = None,
        content: bytes | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Any:
        """Send ``method`` to ``edge`` below the bound id and return the parsed answer."""
        return await self._client.request(
            method, self.path(edge), query=query, json=json, content=content, headers=headers
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._ID_FIELD}={self._scope_id!r})"


class PhoneNumberClient(_ScopedClient, InteractiveSender, PhoneNumberAdmin):
    """One business phone number: message sends and the ``/{phone_number_id}/...`` edges."""

    def __init__(self, client: GraphClient, *, phone_number_id: str) -> None:
        super().__init__(client, phone_number_id)

    async def _post_phone_edge(self, edge: str, payload: Mapping[str, Any]) -> Any:
        return await self.request("POST", edge, json=payload)


class WABAClient(_ScopedClient, WABAAdmin):
    """One WhatsApp Business Account: the ``/{waba_id}/...`` edges."""

    def __init__(self, client: GraphClient, *, waba_id: str) -> None:
        super().__init__(client, waba_id)


class GroupClient(_ScopedClient, GroupAdmin):
    """One WhatsApp group: the ``/{group_id}/...`` edges."""

    def __init__(self, client: GraphClient, *, group_id: str) -> None:
        super().__init__(client, group_id)


class BusinessClient(_ScopedClient, BusinessAdmin):
    """One business portfolio: the ``/{business_id}/...`` edges."""

    def __init__(self, client: GraphClient, *, business_id: str) -> None:
        super().__init__(client, business_id)


class AppClient(_ScopedClient, AppAdmin):
    """One Meta app: the ``/{app_id}/...`` edges (solutions, connected clients)."""

    def __init__(self, client: GraphClient, *, app_id: str) -> None:
        super().__init__(client, app_id)


class SolutionClient(_ScopedClient, SolutionAdmin):
    """One Multi-Partner Solution: the ``/{solution_id}/...`` edges."""

    def __init__(self, client: GraphClient, *, solution_id: str) -> None:
        super().__init__(client, solution_id)
