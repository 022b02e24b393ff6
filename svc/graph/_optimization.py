"""The max price of a marketing template (Marketing Messages API): ``optimization_spec``.

A marketing template sent through ``/marketing_messages`` may carry a max
price: Meta charges that amount per 1,000 deliveries or less, and its
delivery system optimizes against it. The object is ``optimization_spec``
(``bid_amount``, ``bid_strategy``) on template create, update and read; it
replaced ``bid_spec``, which the platform stopped accepting after
2026-07-31, so a ``bid_spec`` is refused here with that reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from svc._text import decimal_int

from ._errors import GraphRequestValidationError
from ._validate import check_choice, check_int

__all__ = ["BID_STRATEGIES", "OptimizationSpec", "refuse_bid_spec"]

BID_STRATEGIES: Final = ("LOWEST_COST_WITH_BID_CAP",)
MAX_BID_AMOUNT: Final = 2**31 - 1


@dataclass(frozen=True, slots=True, kw_only=True)
class OptimizationSpec:
    """A marketing template's max price.

    ``bid_amount`` is the most paid per 1,000 deliveries, in the smallest
    unit of the WhatsApp Business Account's currency (cents for USD, paise
    for INR): ``87000`` is USD 870.00 per 1,000 deliveries, 0.87 each.
    ``bid_strategy`` is ``LOWEST_COST_WITH_BID_CAP``, the one the platform offers.
    """

    bid_amount: int
    bid_strategy: str = "LOWEST_COST_WITH_BID_CAP"

    def wire(self) -> dict[str, object]:
        """The checked ``optimization_spec`` object."""
        return {
            "bid_amount": check_int(
                self.bid_amount, "optimization_spec.bid_amount", minimum=1, maximum=MAX_BID_AMOUNT
            ),
            "bid_strategy": check_choice(
                self.bid_strategy, "optimization_spec.bid_strategy", BID_STRATEGIES
            ),
        }

    @classmethod
    def from_api(cls, raw: Any) -> OptimizationSpec | None:
        """The spec of a template read back, when it has one (an amount sent as text is read)."""
        if not isinstance(raw, dict):
            return None
        amount = raw.get("bid_amount")
        if isinstance(amount, str):
            amount = decimal_int(amount)
        if isinstance(amount, bool) or not isinstance(amount, int):
            return None
        strategy = raw.get("bid_strategy")
        if not isinstance(strategy, str):
            return cls(bid_amount=amount)
        return cls(bid_amount=amount, bid_strategy=strategy)


def refuse_bid_spec(bid_spec: object) -> None:
    """Refuse a ``bid_spec``: the platform stopped accepting it after 2026-07-31."""
    if bid_spec is not None:
        raise GraphRequestValidationError(
            "bid_spec stopped working after 2026-07-31: set the max price with "
            "optimization_spec=OptimizationSpec(bid_amount=...)",
            field="bid_spec",
        )
