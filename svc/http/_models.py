"""Pydantic models of the other routes: they validate group bodies and document replies."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Health(BaseModel):
    ok: bool
    service: str


class ErrorDetail(BaseModel):
    model_config = ConfigDict(extra="allow")

    code: str
    message: str
    upstreamCode: int | None = None
    upstreamSubcode: int | None = None
    upstreamType: str | None = None
    upstreamTraceId: str | None = None


class ErrorBody(BaseModel):
    error: ErrorDetail


class WebhookAck(BaseModel):
    status: Literal["ok"]
    received: int = Field(description="Normalized updates in the delivery.")
    dispatched: int = Field(
        description="Updates handed to the facade: new, for a served number, handled or not."
    )
    skipped: int = Field(
        description="Updates not dispatched (duplicates, other numbers) and malformed parts."
    )
    queued: int = Field(description="Dispatched updates recorded for a handler run.")


class MessageRecordOut(BaseModel):
    rowId: str
    waMessageId: str
    direction: Literal["inbound", "outbound"]
    fromPhone: str | None
    toPhone: str | None
    type: str
    status: str
    graphMessageId: str | None
    userId: str | None = Field(
        description="The user's business-scoped user id (BSUID), when known."
    )
    parentUserId: str | None = Field(
        description="The user's parent BSUID (linked portfolios), when known."
    )
    createdAt: str
    updatedAt: str


class MessagePageOut(BaseModel):
    items: list[MessageRecordOut]
    nextCursor: str | None


class WindowOut(BaseModel):
    open: bool
    lastInboundAt: str | None
    expiresAt: str | None
    remainingMs: int


_NUMBER = (
    "The business phone number id (one the service serves); absent: the default number. "
    "Rows stored before the service knew numbers count as the default number's."
)


class MessagesQuery(BaseModel):
    limit: int | None = None
    cursor: str | None = None
    user: str | None = Field(
        default=None,
        description="Only this user's rows: a phone number, a BSUID or a parent BSUID "
        "(resolved through the identity map to every identifier linked to it).",
    )
    phoneNumberId: str | None = Field(default=None, description=_NUMBER)


class NumberQuery(BaseModel):
    """The business number a read or window is about."""

    phoneNumberId: str | None = Field(default=None, description=_NUMBER)


class ChallengeQuery(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    hub_mode: str | None = None
    hub_verify_token: str | None = None
    hub_challenge: str | None = None


class IdempotencyHeaders(BaseModel):
    idempotency_key: str | None = None


class SignatureHeaders(BaseModel):
    x_hub_signature_256: str


class GroupCreateBody(_Strict):
    subject: str
    description: str | None = None
    joinApprovalMode: str | None = None


class GroupUpdateBody(_Strict):
    subject: str | None = None
    description: str | None = None
    joinApprovalMode: str | None = None


class RemoveParticipantsBody(_Strict):
    waIds: list[str]


class JoinRequestsBody(_Strict):
    joinRequestIds: list[str]


class PageQuery(BaseModel):
    limit: int | None = None
    after: str | None = None
    before: str | None = None


class FieldsQuery(BaseModel):
    fields: str | None = None


class GraphAnswer(BaseModel):
    """An upstream Graph answer passed through unchanged."""

    model_config = ConfigDict(extra="allow")

    request_id: str | None = None
    success: bool | None = None
    data: list[dict[str, Any]] | None = None


class StatusOut(BaseModel):
    model_config = ConfigDict(extra="allow")

    version: str
    uptimeSeconds: float
    graphApiVersion: str
    serviceMode: str
    routes: list[str]
    featureFlags: dict[str, bool]
    persistence: dict[str, Any] | None


class DiagnosticsOut(BaseModel):
    model_config = ConfigDict(extra="allow")

    service: str
    version: str
    graphApiVersion: str
    serviceMode: str
    runtime: str
    routes: list[str]
    featureFlags: dict[str, bool]
    persistence: dict[str, Any] | None
    metricFamilies: list[str]
    recentErrors: list[dict[str, Any]]
    configShape: dict[str, Any]
