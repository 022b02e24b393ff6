"""The Quart views of the signed ingress paths: webhook verification, the webhook POST stub, Flows.

The webhook POST itself is answered by the lean ASGI front (``_front``), which
sees every request before Quart does; its Quart view here only describes the
route to the OpenAPI document and the route table.
"""

from __future__ import annotations

from typing import NoReturn

from quart import Response, request
from quart_schema import document_headers, document_querystring, document_response
from quart_trio import QuartTrio

from svc.flows import MAX_FLOW_BYTES, FlowHandler, FlowPrivateKey, handle_flow_request
from svc.webhook import WebhookError, verify_challenge

from ._errors import webhook_refused
from ._models import ChallengeQuery, ErrorBody, SignatureHeaders, WebhookAck
from ._requests import request_body
from ._service import Service

__all__ = ["register_flows_route", "register_webhook_routes"]


def register_webhook_routes(app: QuartTrio, service: Service) -> None:
    """Add the webhook verification GET and the documentation-only POST at the webhook path."""
    webhook_path = service.profile.webhook_path

    @app.route(webhook_path, methods=["GET"], endpoint="webhook_challenge")
    @document_querystring(ChallengeQuery)
    async def webhook_challenge() -> Response:
        """Webhook verification (hub.mode, hub.verify_token, hub.challenge)."""
        try:
            challenge = verify_challenge(
                request.args, verify_token=service.secrets.webhook_verify_token
            )
        except WebhookError as exc:
            raise webhook_refused(exc) from None
        # The echoed text is the caller's: nosniff keeps a browser from reading it as HTML.
        return Response(
            challenge,
            status=200,
            content_type="text/plain; charset=utf-8",
            headers={"X-Content-Type-Options": "nosniff"},
        )

    @app.route(webhook_path, methods=["POST"], endpoint="webhook_ingest")
    @document_headers(SignatureHeaders)
    @document_response(WebhookAck)
    @document_response(ErrorBody, 401)
    async def webhook_ingest() -> NoReturn:
        """Webhook ingress (signed with X-Hub-Signature-256); served by the lean path.

        A documentation stub that never runs: it exists only so the OpenAPI
        document and the route table describe the POST, which the ASGI front serves.
        """
        # The front answers every webhook POST before Quart sees it; getting here is a bug.
        raise AssertionError("the webhook POST is served by the ASGI front, never by Quart")


def register_flows_route(
    app: QuartTrio, service: Service, handler: FlowHandler, key: FlowPrivateKey
) -> None:
    """Add the WhatsApp Flows data endpoint at ``profile.flows_path``."""
    assert service.profile.flows_path is not None

    @app.route(service.profile.flows_path, methods=["POST"], endpoint="flows_endpoint")
    @document_headers(SignatureHeaders)
    async def flows_endpoint() -> Response:
        """WhatsApp Flows data endpoint: an encrypted request in, an encrypted answer out."""
        body = await request_body(MAX_FLOW_BYTES)
        answer = await handle_flow_request(
            body,
            request.headers.get("X-Hub-Signature-256"),
            private_key=key,
            app_secret=service.secrets.webhook_app_secret,
            handler=handler,
            logger=service.logger,
        )
        return Response(answer.body, status=answer.status, content_type=answer.content_type)
