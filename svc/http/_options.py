"""The typed option groups of ``create_app``: request-body limits, logging, the Flows endpoint.

Each groups keywords that only mean something together, so a half-given pair cannot be
passed; the handler runtime's, the broadcast sender's and the outbox worker's options are
their own layers' records (``HandlerOptions``, ``BroadcastOptions``, ``OutboxWorkerOptions``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TextIO

from svc.flows import FlowHandler, FlowPrivateKey

from ._body import DEFAULT_BODY_READ_TIMEOUT, DEFAULT_MAX_PENDING_BODIES

__all__ = ["BodyLimits", "FlowsEndpoint", "LogOptions"]


@dataclass(frozen=True, slots=True, kw_only=True)
class BodyLimits:
    """The bound on every request body: one not complete within ``body_read_timeout`` seconds
    is answered 408 and its connection closed; beyond ``max_pending_bodies`` read at once by
    one worker, 503 with ``Retry-After`` before reading."""

    body_read_timeout: float = DEFAULT_BODY_READ_TIMEOUT
    max_pending_bodies: int = DEFAULT_MAX_PENDING_BODIES


@dataclass(frozen=True, slots=True, kw_only=True)
class LogOptions:
    """Where the service logs: ``logger`` (default ``svc.http``), ``log_stream`` for its
    JSON lines (default stderr), and ``access_log``: one ``svc.access`` line per request
    (method, templated route, status, duration)."""

    logger: logging.Logger | None = None
    log_stream: TextIO | None = None
    access_log: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class FlowsEndpoint:
    """The Flows data endpoint served at ``profile.flows_path``: the handler of its decrypted
    requests and the private key that unwraps them."""

    handler: FlowHandler
    private_key: FlowPrivateKey
