"""The admin mixins each scoped client carries, composed in one place.

``_scoped`` adds ``PhoneNumberAdmin`` to ``PhoneNumberClient``, ``WABAAdmin``
to ``WABAClient`` and ``GroupAdmin`` to ``GroupClient``; new admin areas are
added here, not there.
"""

from __future__ import annotations

from ._groups import GroupAdmin as _GroupAdmin
from ._groups import PhoneGroups

__all__ = ["GroupAdmin", "PhoneNumberAdmin", "WABAAdmin"]


class PhoneNumberAdmin(PhoneGroups):
    """Admin helpers bound to one business phone number."""


class WABAAdmin:
    """Admin helpers bound to one WhatsApp Business Account."""


class GroupAdmin(_GroupAdmin):
    """Admin helpers bound to one group."""
