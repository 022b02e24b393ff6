"""The message routes: sends (text and any message) and reads of the projection.

Every view checks the service bearer first (the send views also the
``Idempotency-Key``), then hands parsed inputs to ``Service``.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel
from quart import Response, request
from quart_schema import (
    hide,
)
from quart_trio import QuartTrio

from svc.graph import GraphRequestValidationError

from . import _message_reads as reads
from ._bodies import (
    MessageBody,
    SendAnswer,
    TextSendBody,
    chosen_number,
    is_group_body,
    is_read_receipt,
    parse_message_body,
    parse_text_body,
    to_payload,
)
from ._errors import malformed_body, malformed_path, malformed_query, method_not_allowed
from ._models import (
    IdempotencyHeaders,
    MessagePageOut,
    MessageRecordOut,
    MessagesQuery,
    NumberQuery,
    WindowOut,
)
from ._numbers import FIELD, ServedNumber
from ._openapi import document_bearer_route
from ._requests import (
    MAX_PATH_ID,
    check_path_id,
    check_user,
    parse_json,
    query_int,
    query_text,
    reply_response,
    request_body,
    require_bearer,
)
from ._service import Service, check_idempotency_key
from ._upstream import refusal_message

__all__ = ["register_message_routes"]


def register_message_routes(app: QuartTrio, service: Service) -> None:
    """Add the send and read routes under the API prefix."""
    token = service.secrets.service_bearer_token.encode("utf-8")
    _register_sends(app, service, token)
    _register_message_reads(app, service, token)
    _register_window(app, service, token)


async def _send(service: Service, token: bytes, parse: Callable[[object], BaseModel]) -> Response:
    """A send view's work: bearer, ``Idempotency-Key``, the body ``parse`` accepts, its number,
    then ``Service.send`` (a group body needs the group routes on)."""
    require_bearer(token)
    key = check_idempotency_key(request.headers.get("Idempotency-Key"))
    body = parse(parse_json(await request_body(service.profile.max_body_bytes)))
    if is_group_body(body) and not service.enable_group_routes:
        raise malformed_body("Group messages need the group routes enabled.")
    number = service.numbers.choose(chosen_number(body), source="body")
    try:
        payload = to_payload(body)
    except GraphRequestValidationError as exc:
        service.telemetry.send(
            family="messages", outcome="rejected", phone_number_id=number.phone_number_id
        )
        raise malformed_body(refusal_message(exc)) from None
    return reply_response(
        await service.send(
            payload, idempotency_key=key, project=not is_read_receipt(body), number=number
        )
    )


def _query_number(service: Service) -> ServedNumber:
    """The business number of a read (``phoneNumberId``; absent: the default)."""
    return service.numbers.choose(query_text(FIELD), source="query")


def _messages_query() -> tuple[int, str | None, str | None]:
    """The page query of ``GET {prefix}/messages``: ``limit``, ``cursor`` and the ``user`` key
    (a 400 naming the first unusable one)."""
    limit = query_int("limit", default=50, low=1, high=100)
    assert limit is not None
    cursor = query_text("cursor")
    if cursor is not None and len(cursor) > MAX_PATH_ID:
        raise malformed_query("cursor")
    user = query_text("user")
    key = None if user is None else check_user(user)
    if user is not None and key is None:
        raise malformed_query("user")
    return limit, cursor, key


def _register_sends(app: QuartTrio, service: Service, token: bytes) -> None:
    """``POST {prefix}/messages/text`` and ``POST {prefix}/messages``."""
    prefix = service.profile.api_prefix

    @app.route(f"{prefix}/messages/text", methods=["POST"])
    @document_bearer_route(SendAnswer, headers=IdempotencyHeaders, body=TextSendBody, error=400)
    async def send_text() -> Response:
        """Send a text message."""
        return await _send(service, token, parse_text_body)

    @app.route(f"{prefix}/messages", methods=["POST"], endpoint="send_message")
    @document_bearer_route(SendAnswer, headers=IdempotencyHeaders, body=MessageBody, error=400)
    async def send_message() -> Response:
        """Send any message: Graph-native text or a composer body."""
        return await _send(service, token, parse_message_body)


def _register_message_reads(app: QuartTrio, service: Service, token: bytes) -> None:
    """``GET {prefix}/messages`` (a page) and ``GET {prefix}/messages/{id}`` (one message)."""
    prefix = service.profile.api_prefix

    @app.route(f"{prefix}/messages", methods=["GET"], endpoint="list_messages")
    @document_bearer_route(MessagePageOut, query=MessagesQuery, error=503)
    async def list_messages() -> Response:
        """A page of projected messages, newest first."""
        require_bearer(token)
        limit, cursor, key = _messages_query()
        number = _query_number(service)
        return reply_response(
            await reads.list_messages(service, limit=limit, cursor=cursor, user=key, number=number)
        )

    @app.route(f"{prefix}/messages/", methods=["GET"], endpoint="message_empty_id")
    @hide
    async def message_empty_id() -> Response:
        require_bearer(token)
        raise malformed_path()

    @app.route(f"{prefix}/messages/<path:message_id>", methods=["GET"], endpoint="get_message")
    @document_bearer_route(MessageRecordOut, query=NumberQuery, error=404)
    async def get_message(message_id: str) -> Response:
        """One projected message by its platform id."""
        if message_id == "text":
            raise method_not_allowed(("POST",))
        require_bearer(token)
        checked = check_path_id(message_id)
        return reply_response(await reads.get_message(service, checked, _query_number(service)))


def _register_window(app: QuartTrio, service: Service, token: bytes) -> None:
    """``GET {prefix}/conversations/{user}/window``."""
    prefix = service.profile.api_prefix

    @app.route(f"{prefix}/conversations/<path:user>/window", methods=["GET"], endpoint="window")
    @document_bearer_route(WindowOut, query=NumberQuery, error=503)
    async def window(user: str) -> Response:
        """The 24-hour customer-service window of one user.

        ``user`` is a phone number (digits, optional leading ``+``), a
        business-scoped user id (BSUID, ``US.13491208655302741918``) or a parent
        BSUID (``US.ENT.11815799212886844830``); once a delivery has linked a
        phone and a BSUID, either finds the same window.
        """
        require_bearer(token)
        key = check_user(user)
        if key is None:
            raise malformed_path(
                "The user in the path must be a phone number (digits) or a business-scoped user id."
            )
        return reply_response(await reads.conversation_window(service, key, _query_number(service)))
