"""The one receive path of a webhook POST: raw body and signature header in, a ``Delivery`` out.

``receive_delivery`` runs the checks of decisions.md section 3 in their order
(size cap when given, signature header, HMAC match, JSON, envelope), then
normalizes the envelope. It raises a ``WebhookError`` or returns a frozen
``Delivery`` holding everything the HTTP layer records and dispatches.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from dataclasses import field as _field
from typing import Any

from svc.crypto import hmac_sha256_matches

from ._errors import PayloadTooLargeError, SignatureMismatchError
from ._field_updates import GroupParticipantsUpdate
from ._keys import body_hash, event_key
from ._normalize import normalize
from ._signature import check_content_length, parse_envelope_floats, parse_signature_header
from ._updates import NormalizationResult, SystemUpdate, Update, UserIdUpdate
from ._values import UserIdentity

__all__ = ["Delivery", "HmacMatcher", "receive_delivery"]

HmacMatcher = Callable[[bytes, bytes, bytes], bool]
"""``matches(key, body, tag)``: whether ``tag`` is the HMAC-SHA256 of ``body``, in constant time."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Delivery:
    """One signed, parsed and normalized webhook POST.

    ``event_key`` and ``body_hash`` are the durable-dedupe keys the store
    records; they are computed on access, so a service without a store never
    pays for them. ``envelope`` and ``body`` are kept out of the repr.
    """

    envelope: Mapping[str, Any] = _field(repr=False)
    body: bytes = _field(repr=False)
    result: NormalizationResult
    may_hold_floats: bool = _field(default=True, repr=False)
    """False when the parse read no float: the event key then takes its faster, equal form."""

    @property
    def updates(self) -> tuple[Update, ...]:
        """Every update of the envelope, in payload order."""
        return self.result.updates

    @property
    def skipped_count(self) -> int:
        """How many items the normalizer skipped."""
        return sum(skip.count for skip in self.result.skipped)

    @property
    def identities(self) -> tuple[UserIdentity, ...]:
        """Every user identity the delivery names, deduplicated, in payload order.

        The ``user`` of each update that names one, plus the old and new
        identities of identity-change events and the participants a group event
        names, for the store's identity map.
        """
        seen: dict[UserIdentity, None] = {}
        for update in self.result.updates:
            found = [getattr(update, "user", None)]
            if isinstance(update, SystemUpdate):
                found.append(update.new_user)
            elif isinstance(update, UserIdUpdate):
                found.append(update.previous)
            elif isinstance(update, GroupParticipantsUpdate):
                found += update.participant_users
            for identity in found:
                if isinstance(identity, UserIdentity):
                    seen.setdefault(identity, None)
        return tuple(seen)

    @property
    def event_key(self) -> str:
        """SHA-256 hex of the canonical JSON of the envelope (stable across key order)."""
        return event_key(self.envelope, may_hold_floats=self.may_hold_floats)

    @property
    def body_hash(self) -> str:
        """SHA-256 hex of the raw body, exactly as received."""
        return body_hash(self.body)


def receive_delivery(
    body: bytes,
    signature: str | None,
    app_secret: str | bytes,
    *,
    max_body_bytes: int | None = None,
    content_length: int | None = None,
    matches: HmacMatcher = hmac_sha256_matches,
    received_at: int | None = None,
) -> Delivery:
    """Check and parse a webhook POST; raise the first ``WebhookError`` or return its ``Delivery``.

    With ``max_body_bytes`` a declared ``content_length`` or a body over the
    cap is refused before the signature is looked at (the HTTP layer may
    already have enforced the cap while reading). ``matches`` is the
    constant-time HMAC check (``svc.crypto``'s unless a provider is injected);
    ``received_at`` (Unix seconds, the caller's clock) is the time of a
    message without a readable timestamp.
    """
    key = app_secret.encode("utf-8") if isinstance(app_secret, str) else app_secret
    if max_body_bytes is not None:
        check_content_length(content_length, max_body_bytes=max_body_bytes)
        if len(body) > max_body_bytes:
            raise PayloadTooLargeError
    tag = parse_signature_header(signature)
    if not matches(key, body, tag):
        raise SignatureMismatchError
    envelope, floats = parse_envelope_floats(body)
    return Delivery(
        envelope=envelope,
        body=body,
        result=normalize(envelope, received_at=received_at),
        may_hold_floats=floats,
    )
