"""Typed account changes: ``account_update`` events, alerts, reviews, limits and throughput.

``read_account_details(field, value)`` gives the typed view of an account
change value (``AccountUpdate.details``), template changes included; every
field is optional, and a field this version does not type reads ``None``
(the raw value stays on the update).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, TypeAlias

from svc._text import decimal_int

from ._read import read_dict, read_graph_id, read_list, read_objects, read_str, read_strs
from ._template_values import TEMPLATE_READERS, TemplateChange

__all__ = [
    "THROUGHPUT_UPGRADE",
    "AccountAlert",
    "AccountDetails",
    "AccountEvent",
    "AccountRestriction",
    "AccountReview",
    "BusinessCapabilities",
    "PhoneNumberQualityChange",
    "WabaInfo",
]

THROUGHPUT_UPGRADE: Final = "THROUGHPUT_UPGRADE"
"""The ``phone_number_quality_update`` event of a number upgraded to higher throughput."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AccountRestriction:
    """One restriction of an ``ACCOUNT_RESTRICTION`` event; ``expiration`` as sent (ISO 8601)."""

    type: str | None = None
    expiration: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class WabaInfo:
    """The ``waba_info`` of partner, ad-account and terms events: the account and its partners.

    ``partner_app_id`` comes with ``PARTNER_APP_INSTALLED``/``UNINSTALLED``;
    ``solution_id`` and ``solution_partner_business_ids`` with multi-partner
    solutions; ``ad_account_linked`` with ``AD_ACCOUNT_LINKED``.
    """

    waba_id: str | None = None
    owner_business_id: str | None = None
    partner_app_id: str | None = None
    solution_id: str | None = None
    solution_partner_business_ids: tuple[str, ...] = ()
    ad_account_linked: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class AccountEvent:
    """``account_update``: bans, violations, restrictions, partner and offboarding events.

    ``event`` is the platform word (``DISABLED_UPDATE``, ``ACCOUNT_VIOLATION``,
    ``ACCOUNT_RESTRICTION``, ``PARTNER_ADDED``, ``PARTNER_REMOVED``,
    ``PARTNER_APP_INSTALLED``, ``ACCOUNT_OFFBOARDED``, ``ACCOUNT_RECONNECTED``,
    ...). ``ban_states``/``ban_date`` come from ``ban_info``,
    ``violation_type`` from ``violation_info``, ``restrictions`` from
    ``restriction_info``, ``disconnection_reason`` from ``disconnection_info``
    (a business that used both the app and the API was disconnected), and
    ``country`` with a primary-location update.
    """

    event: str | None = None
    ban_states: tuple[str, ...] = ()
    ban_date: str | None = None
    violation_type: str | None = None
    restrictions: tuple[AccountRestriction, ...] = ()
    waba_info: WabaInfo | None = None
    disconnection_reason: str | None = None
    country: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class AccountAlert:
    """``account_alerts``: an alert about an entity (``WABA``, ``PHONE_NUMBER``, ``BUSINESS``)."""

    entity_type: str | None = None
    entity_id: str | None = None
    alert_severity: str | None = None
    alert_status: str | None = None
    alert_type: str | None = None
    alert_description: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class AccountReview:
    """``account_review_update``: the review ``decision`` (``APPROVED``, ``REJECTED``, ...)."""

    decision: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PhoneNumberQualityChange:
    """``phone_number_quality_update``: a number's messaging limit or throughput changed.

    ``event`` is the platform word (``THROUGHPUT_UPGRADE``, ``UPGRADE``,
    ``DOWNGRADE``, ``FLAGGED``, ``UNFLAGGED``, ``ONBOARDING``, ...); the limits
    are as sent (``TIER_2K``, ``TIER_UNLIMITED``). A number upgraded to higher
    throughput (80 to 1,000 messages per second, automatic) sends
    ``THROUGHPUT_UPGRADE``: during the upgrade, up to about a minute, the
    number answers sends with error 131057; after it, ``throughput_upgraded``.
    """

    event: str | None = None
    display_phone_number: str | None = None
    old_limit: str | None = None
    current_limit: str | None = None
    max_daily_conversations_per_business: str | None = None

    @property
    def throughput_upgraded(self) -> bool:
        """True for the event announcing the number's upgrade to higher throughput."""
        return self.event == THROUGHPUT_UPGRADE


@dataclass(frozen=True, slots=True, kw_only=True)
class BusinessCapabilities:
    """``business_capability_update``: the account's or portfolio's limits (``-1``: unlimited)."""

    max_daily_conversation_per_phone: int | None = None
    max_daily_conversations_per_business: int | None = None
    max_phone_numbers_per_business: int | None = None
    max_phone_numbers_per_waba: int | None = None


AccountDetails: TypeAlias = (
    TemplateChange
    | AccountEvent
    | AccountAlert
    | AccountReview
    | PhoneNumberQualityChange
    | BusinessCapabilities
)


def _strings(value: Any) -> tuple[str, ...]:
    """A string or a list of strings, as a tuple (other entries left out)."""
    if type(value) is str:
        return (value,)
    return tuple(item for item in read_list(value) if type(item) is str)


def _waba_info(value: Any) -> WabaInfo | None:
    if type(value) is not dict:
        return None
    partners = tuple(
        ident
        for ident in (
            read_graph_id(p) for p in read_list(value.get("solution_partner_business_ids"))
        )
        if ident is not None
    )
    return WabaInfo(
        waba_id=read_graph_id(value.get("waba_id")),
        owner_business_id=read_graph_id(value.get("owner_business_id")),
        partner_app_id=read_graph_id(value.get("partner_app_id")),
        solution_id=read_graph_id(value.get("solution_id")),
        solution_partner_business_ids=partners,
        ad_account_linked=read_graph_id(value.get("ad_account_linked")),
    )


def _account_event(value: Mapping[str, Any]) -> AccountDetails:
    ban = read_dict(value.get("ban_info"))
    restrictions = value.get("restriction_info")
    if type(restrictions) is dict:
        restrictions = [restrictions]
    return AccountEvent(
        **read_strs(value, "event", "country"),
        ban_states=_strings(ban.get("waba_ban_state")),
        ban_date=read_str(ban.get("waba_ban_date")),
        violation_type=read_str(read_dict(value.get("violation_info")).get("violation_type")),
        restrictions=tuple(
            AccountRestriction(
                type=read_str(r.get("restriction_type")), expiration=read_str(r.get("expiration"))
            )
            for r in read_objects(restrictions)
        ),
        waba_info=_waba_info(value.get("waba_info")),
        disconnection_reason=read_str(read_dict(value.get("disconnection_info")).get("reason")),
    )


def _account_alert(value: Mapping[str, Any]) -> AccountDetails:
    info = read_dict(value.get("alert_info"))
    return AccountAlert(
        entity_type=read_str(value.get("entity_type")),
        entity_id=read_graph_id(value.get("entity_id")),
        **read_strs(info, "alert_severity", "alert_status", "alert_type", "alert_description"),
    )


def _account_review(value: Mapping[str, Any]) -> AccountDetails:
    return AccountReview(decision=read_str(value.get("decision")))


def _limit_text(value: Any) -> str | None:
    """A limit sent as a word (``TIER_2K``) or a number, as text."""
    if type(value) is int:
        return str(value)
    return read_str(value)


def _limit(value: Any) -> int | None:
    """A limit sent as a number (``2000``, ``-1`` for unlimited) or its decimal text."""
    if type(value) is int:
        return value
    return decimal_int(value, signed=True, max_digits=15) if type(value) is str else None


def _quality_change(value: Mapping[str, Any]) -> AccountDetails:
    return PhoneNumberQualityChange(
        **read_strs(value, "event", "display_phone_number"),
        old_limit=_limit_text(value.get("old_limit")),
        current_limit=_limit_text(value.get("current_limit")),
        max_daily_conversations_per_business=_limit_text(
            value.get("max_daily_conversations_per_business")
        ),
    )


def _capabilities(value: Mapping[str, Any]) -> AccountDetails:
    return BusinessCapabilities(
        max_daily_conversation_per_phone=_limit(value.get("max_daily_conversation_per_phone")),
        max_daily_conversations_per_business=_limit(
            value.get("max_daily_conversations_per_business")
        ),
        max_phone_numbers_per_business=_limit(value.get("max_phone_numbers_per_business")),
        max_phone_numbers_per_waba=_limit(value.get("max_phone_numbers_per_waba")),
    )


_READERS = {
    **TEMPLATE_READERS,
    "account_update": _account_event,
    "account_alerts": _account_alert,
    "account_review_update": _account_review,
    "phone_number_quality_update": _quality_change,
    "business_capability_update": _capabilities,
}


def read_account_details(field: str, value: Mapping[str, Any]) -> AccountDetails | None:
    """The typed view of an account change value; ``None`` for a field not typed here."""
    reader = _READERS.get(field)
    return reader(value) if reader is not None else None
