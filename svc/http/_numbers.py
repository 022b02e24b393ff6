"""The business phone numbers one service serves: a client per number, the choice, the routing.

A profile names a default number and, optionally, more (``Profile.phone_numbers``);
each gets a ``PhoneNumberClient`` (its own ``GraphClient`` when it has its own
access token). Requests choose a number by id (absent: the default; unknown:
400); webhook updates are routed by their ``metadata.phone_number_id`` and
updates for a number the service does not serve are set apart, never projected
or dispatched.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal

from svc.graph import GraphClient, PhoneNumberClient
from svc.webhook import Delivery, Update

from ._errors import HttpError, malformed_body, malformed_query
from ._profile import Profile, ServiceSecrets

__all__ = [
    "FIELD",
    "NumberRouter",
    "RoutedDelivery",
    "ServedNumber",
    "build_numbers",
    "route_delivery",
]

FIELD: Final = "phoneNumberId"
"""The body field and query parameter that choose a business number."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ServedNumber:
    """One served business number: its ids, its clients, and whether it is the default.

    ``waba_id`` is the number's own WABA, else the profile's.
    """

    phone_number_id: str
    waba_id: str | None
    client: GraphClient
    phone: PhoneNumberClient
    default: bool


class NumberRouter:
    """The served numbers by id; closes the clients it created (not the shared one)."""

    def __init__(
        self, numbers: tuple[ServedNumber, ...], *, owned: tuple[GraphClient, ...] = ()
    ) -> None:
        self.default = next(number for number in numbers if number.default)
        self._by_id = {number.phone_number_id: number for number in numbers}
        self._owned = owned
        self.ids: Final[frozenset[str]] = frozenset(self._by_id)
        """Every served phone number id (read on every webhook: built once)."""

    def get(self, phone_number_id: str | None) -> ServedNumber | None:
        """The served number with this id, or None."""
        return None if phone_number_id is None else self._by_id.get(phone_number_id)

    def choose(self, phone_number_id: object, *, source: Literal["body", "query"]) -> ServedNumber:
        """The number a request names (absent: the default); 400 for one not served.

        ``source`` picks the error: ``malformed_body`` or ``malformed_query``.
        """
        if phone_number_id is None:
            return self.default
        number = self._by_id.get(phone_number_id) if isinstance(phone_number_id, str) else None
        if number is None:
            raise _unknown(source)
        return number

    async def aclose(self) -> None:
        """Close the per-number clients this router created."""
        for client in self._owned:
            await client.aclose()


def _unknown(source: Literal["body", "query"]) -> HttpError:
    if source == "query":
        return malformed_query(FIELD)
    return malformed_body(f"'{FIELD}' is not a phone number this service serves.")


def build_numbers(
    profile: Profile,
    secrets: ServiceSecrets,
    client: GraphClient,
    make_client: Callable[[str], GraphClient] | None = None,
) -> NumberRouter:
    """A router over the profile's numbers; ``client`` serves every number on the shared token.

    ``make_client(token)`` builds the client of a number with its own access
    token (the router closes it); without it every number uses ``client``.
    """
    numbers: list[ServedNumber] = []
    owned: list[GraphClient] = []
    for index, business in enumerate(profile.served_numbers):
        token = secrets.access_token_for(business.phone_number_id)
        own = client
        if make_client is not None and token != secrets.access_token:
            own = make_client(token)
            owned.append(own)
        numbers.append(
            ServedNumber(
                phone_number_id=business.phone_number_id,
                waba_id=business.waba_id or profile.waba_id,
                client=own,
                phone=PhoneNumberClient(own, phone_number_id=business.phone_number_id),
                default=index == 0,
            )
        )
    return NumberRouter(tuple(numbers), owned=tuple(owned))


@dataclass(frozen=True, slots=True, kw_only=True)
class RoutedDelivery:
    """A delivery reduced to the updates the service serves, and the updates set apart."""

    delivery: Delivery
    foreign: tuple[Update, ...]


def route_delivery(delivery: Delivery, served: frozenset[str]) -> RoutedDelivery:
    """Keep the updates for a served number (or for none: WABA-level changes); set apart the rest.

    The delivery keeps its body, so its event key and hash are unchanged.
    """
    kept: list[Update] = []
    foreign: list[Update] = []
    for update in delivery.updates:
        number = update.phone_number_id
        (kept if number is None or number in served else foreign).append(update)
    if not foreign:
        return RoutedDelivery(delivery=delivery, foreign=())
    result = dataclasses.replace(delivery.result, updates=tuple(kept))
    return RoutedDelivery(
        delivery=dataclasses.replace(delivery, result=result), foreign=tuple(foreign)
    )
