"""The Groups routes: bearer-protected proxies of the Graph API's group operations.

Registered only with ``enable_group_routes``; each view checks the bearer and
its path id, then answers the Graph result as JSON (or a 4xx/5xx from
``Service.graph_call``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel
from quart import Response
from quart_trio import QuartTrio

from svc.graph import GraphRequestValidationError, GroupClient

from ._bodies import parse_body
from ._errors import malformed_path
from ._models import (
    FieldsQuery,
    GraphAnswer,
    GroupCreateBody,
    GroupUpdateBody,
    JoinRequestsBody,
    PageQuery,
    RemoveParticipantsBody,
)
from ._openapi import document_bearer_route
from ._requests import (
    check_path_id,
    json_response,
    parse_json,
    query_int,
    query_text,
    request_body,
)
from ._requests import require_bearer as bearer
from ._service import Service

__all__ = ["register_group_routes"]

View = TypeVar("View", bound=Callable[..., Awaitable[Response]])


def register_group_routes(app: QuartTrio, service: Service) -> None:
    """Add the Groups routes (bearer, proxied to the Graph API) under the API prefix."""
    routes = _GroupRoutes(app, service, service.secrets.service_bearer_token.encode("utf-8"))
    _register_groups(routes)
    _register_group(routes)
    _register_invite_link(routes)
    _register_participants(routes)
    _register_join_requests(routes)


@dataclass(frozen=True, slots=True)
class _GroupRoutes:
    """The app the Groups views are added to, and what each view does before its Graph call:
    the bearer checked, the path's group id and the body parsed (a 4xx when one is unusable)."""

    app: QuartTrio
    service: Service
    token: bytes

    def route(
        self,
        path: str,
        method: str,
        *,
        body: type[BaseModel] | None = None,
        query: type[BaseModel] | None = None,
    ) -> Callable[[View], View]:
        """Register a view at ``{prefix}/groups{path}``: a bearer route answering the Graph's
        JSON, described with its ``body`` or ``query`` model."""

        def register(view: View) -> View:
            document_bearer_route(GraphAnswer, body=body, query=query)(view)
            prefix = self.service.profile.api_prefix
            self.app.route(f"{prefix}/groups{path}", methods=[method])(view)
            return view

        return register

    def require_bearer(self) -> None:
        bearer(self.token)

    def group(self, group_id: str) -> GroupClient:
        """The bearer checked, the client of the path's group (a 4xx when either is unusable)."""
        self.require_bearer()
        try:
            return GroupClient(self.service.client, group_id=check_path_id(group_id))
        except GraphRequestValidationError:
            raise malformed_path("The group id is not usable.") from None

    async def body_of(self, model: type[BaseModel]) -> Any:
        data = parse_json(await request_body(self.service.profile.max_body_bytes))
        return parse_body(model, data)

    async def group_and_body(
        self, group_id: str, model: type[BaseModel]
    ) -> tuple[GroupClient, Any]:
        """``group(group_id)``, then the request body parsed as ``model``."""
        client = self.group(group_id)
        return client, await self.body_of(model)

    async def upstream(self, call: Callable[[], Awaitable[Any]]) -> Response:
        result = await self.service.graph_call("groups", call)
        return json_response(dict(result.raw))


def _page_args() -> dict[str, Any]:
    return {
        "limit": query_int("limit", default=None, low=1, high=1000),
        "after": query_text("after"),
        "before": query_text("before"),
    }


def _register_groups(routes: _GroupRoutes) -> None:
    """The business number's groups: list them, create one."""
    service = routes.service

    @routes.route("", "GET", query=PageQuery)
    async def list_groups() -> Response:
        """List groups of the business phone number."""
        routes.require_bearer()
        args = _page_args()
        return await routes.upstream(lambda: service.phone.list_groups(**args))

    @routes.route("", "POST", body=GroupCreateBody)
    async def create_group() -> Response:
        """Create a group (asynchronous: the answer carries request_id)."""
        routes.require_bearer()
        body = await routes.body_of(GroupCreateBody)
        return await routes.upstream(
            lambda: service.phone.create_group(
                subject=body.subject,
                description=body.description,
                join_approval_mode=body.joinApprovalMode,
            )
        )


def _register_group(routes: _GroupRoutes) -> None:
    """One group: read, update, delete."""

    @routes.route("/<group_id>", "GET", query=FieldsQuery)
    async def get_group(group_id: str) -> Response:
        """Get one group."""
        client = routes.group(group_id)
        fields = query_text("fields")
        return await routes.upstream(lambda: client.get_group(fields=fields))

    @routes.route("/<group_id>", "POST", body=GroupUpdateBody)
    async def update_group(group_id: str) -> Response:
        """Update a group's subject, description or join approval mode."""
        client, body = await routes.group_and_body(group_id, GroupUpdateBody)
        return await routes.upstream(
            lambda: client.update_group(
                subject=body.subject,
                description=body.description,
                join_approval_mode=body.joinApprovalMode,
            )
        )

    @routes.route("/<group_id>", "DELETE")
    async def delete_group(group_id: str) -> Response:
        """Delete a group."""
        return await routes.upstream(routes.group(group_id).delete_group)


def _register_invite_link(routes: _GroupRoutes) -> None:
    """A group's invite link: read it, reset it."""

    @routes.route("/<group_id>/invite-link", "GET")
    async def get_invite_link(group_id: str) -> Response:
        """Get the group's invite link."""
        return await routes.upstream(routes.group(group_id).get_invite_link)

    @routes.route("/<group_id>/invite-link", "POST")
    async def reset_invite_link(group_id: str) -> Response:
        """Reset the invite link (POST, never DELETE): the previous link stops working."""
        return await routes.upstream(routes.group(group_id).reset_invite_link)


def _register_participants(routes: _GroupRoutes) -> None:
    """A group's participants: remove some."""

    @routes.route("/<group_id>/participants", "DELETE", body=RemoveParticipantsBody)
    async def remove_participants(group_id: str) -> Response:
        """Remove up to 8 participants."""
        client, body = await routes.group_and_body(group_id, RemoveParticipantsBody)
        return await routes.upstream(lambda: client.remove_participants(wa_ids=list(body.waIds)))


def _register_join_requests(routes: _GroupRoutes) -> None:
    """A group's join requests: list, approve, reject."""

    @routes.route("/<group_id>/join-requests", "GET", query=PageQuery)
    async def list_join_requests(group_id: str) -> Response:
        """List open join requests."""
        client = routes.group(group_id)
        args = _page_args()
        return await routes.upstream(lambda: client.list_join_requests(**args))

    @routes.route("/<group_id>/join-requests", "POST", body=JoinRequestsBody)
    async def approve_join_requests(group_id: str) -> Response:
        """Approve join requests."""
        client, body = await routes.group_and_body(group_id, JoinRequestsBody)
        return await routes.upstream(
            lambda: client.approve_join_requests(join_request_ids=list(body.joinRequestIds))
        )

    @routes.route("/<group_id>/join-requests", "DELETE", body=JoinRequestsBody)
    async def reject_join_requests(group_id: str) -> Response:
        """Reject join requests (DELETE, never POST)."""
        client, body = await routes.group_and_body(group_id, JoinRequestsBody)
        return await routes.upstream(
            lambda: client.reject_join_requests(join_request_ids=list(body.joinRequestIds))
        )
