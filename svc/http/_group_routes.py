"""The Groups routes: bearer-protected proxies of the Graph API's group operations.

Registered only with ``enable_group_routes``; each view checks the bearer and
its path id, then answers the Graph result as JSON (or a 4xx/5xx from
``Service.graph_call``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
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
    prefix = service.profile.api_prefix
    token = service.secrets.service_bearer_token.encode("utf-8")

    def require_bearer() -> None:
        bearer(token)

    def group(group_id: str) -> GroupClient:
        """The bearer checked, the client of the path's group (a 4xx when either is unusable)."""
        require_bearer()
        try:
            return GroupClient(service.client, group_id=check_path_id(group_id))
        except GraphRequestValidationError:
            raise malformed_path("The group id is not usable.") from None

    async def body_of(model: type[BaseModel]) -> Any:
        return parse_body(model, parse_json(await request_body(service.profile.max_body_bytes)))

    async def group_and_body(group_id: str, model: type[BaseModel]) -> tuple[GroupClient, Any]:
        """``group(group_id)``, then the request body parsed as ``model``."""
        client = group(group_id)
        return client, await body_of(model)

    def page_args() -> dict[str, Any]:
        return {
            "limit": query_int("limit", default=None, low=1, high=1000),
            "after": query_text("after"),
            "before": query_text("before"),
        }

    def group_route(
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
            app.route(f"{prefix}/groups{path}", methods=[method])(view)
            return view

        return register

    async def upstream(call: Callable[[], Awaitable[Any]]) -> Response:
        result = await service.graph_call("groups", call)
        return json_response(dict(result.raw))

    @group_route("", "GET", query=PageQuery)
    async def list_groups() -> Response:
        """List groups of the business phone number."""
        require_bearer()
        args = page_args()
        return await upstream(lambda: service.phone.list_groups(**args))

    @group_route("", "POST", body=GroupCreateBody)
    async def create_group() -> Response:
        """Create a group (asynchronous: the answer carries request_id)."""
        require_bearer()
        body = await body_of(GroupCreateBody)
        return await upstream(
            lambda: service.phone.create_group(
                subject=body.subject,
                description=body.description,
                join_approval_mode=body.joinApprovalMode,
            )
        )

    @group_route("/<group_id>", "GET", query=FieldsQuery)
    async def get_group(group_id: str) -> Response:
        """Get one group."""
        client = group(group_id)
        fields = query_text("fields")
        return await upstream(lambda: client.get_group(fields=fields))

    @group_route("/<group_id>", "POST", body=GroupUpdateBody)
    async def update_group(group_id: str) -> Response:
        """Update a group's subject, description or join approval mode."""
        client, body = await group_and_body(group_id, GroupUpdateBody)
        return await upstream(
            lambda: client.update_group(
                subject=body.subject,
                description=body.description,
                join_approval_mode=body.joinApprovalMode,
            )
        )

    @group_route("/<group_id>", "DELETE")
    async def delete_group(group_id: str) -> Response:
        """Delete a group."""
        return await upstream(group(group_id).delete_group)

    @group_route("/<group_id>/invite-link", "GET")
    async def get_invite_link(group_id: str) -> Response:
        """Get the group's invite link."""
        return await upstream(group(group_id).get_invite_link)

    @group_route("/<group_id>/invite-link", "POST")
    async def reset_invite_link(group_id: str) -> Response:
        """Reset the invite link (POST, never DELETE): the previous link stops working."""
        return await upstream(group(group_id).reset_invite_link)

    @group_route("/<group_id>/participants", "DELETE", body=RemoveParticipantsBody)
    async def remove_participants(group_id: str) -> Response:
        """Remove up to 8 participants."""
        client, body = await group_and_body(group_id, RemoveParticipantsBody)
        return await upstream(lambda: client.remove_participants(wa_ids=list(body.waIds)))

    @group_route("/<group_id>/join-requests", "GET", query=PageQuery)
    async def list_join_requests(group_id: str) -> Response:
        """List open join requests."""
        client = group(group_id)
        args = page_args()
        return await upstream(lambda: client.list_join_requests(**args))

    @group_route("/<group_id>/join-requests", "POST", body=JoinRequestsBody)
    async def approve_join_requests(group_id: str) -> Response:
        """Approve join requests."""
        client, body = await group_and_body(group_id, JoinRequestsBody)
        return await upstream(
            lambda: client.approve_join_requests(join_request_ids=list(body.joinRequestIds))
        )

    @group_route("/<group_id>/join-requests", "DELETE", body=JoinRequestsBody)
    async def reject_join_requests(group_id: str) -> Response:
        """Reject join requests (DELETE, never POST)."""
        client, body = await group_and_body(group_id, JoinRequestsBody)
        return await upstream(
            lambda: client.reject_join_requests(join_request_ids=list(body.joinRequestIds))
        )
