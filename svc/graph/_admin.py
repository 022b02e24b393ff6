"""The admin mixins each scoped client carries, composed in one place.

``_scoped`` adds ``PhoneNumberAdmin`` to ``PhoneNumberClient``, ``WABAAdmin``
to ``WABAClient`` and ``GroupAdmin`` to ``GroupClient``; new admin areas are
added here, not there. Every helper is an ``async`` method with keyword-only
arguments, validated before the transport, built on the endpoint primitive.
"""

from __future__ import annotations

from ._calling import Calling
from ._flows import Flows
from ._groups import GroupAdmin as _GroupAdmin
from ._groups import PhoneGroups
from ._phone_admin import PhoneAdmin
from ._templates import Templates
from ._thread_control import ThreadControl
from ._waba import WabaAccount

__all__ = ["GroupAdmin", "PhoneNumberAdmin", "WABAAdmin"]


class PhoneNumberAdmin(PhoneGroups, PhoneAdmin, Calling, ThreadControl):
    """Admin helpers bound to one business phone number: groups, settings, calling, threads..."""


class WABAAdmin(WabaAccount, Templates, Flows):
    """Admin helpers bound to one WhatsApp Business Account: account, templates, Flows."""


class GroupAdmin(_GroupAdmin):
    """Admin helpers bound to one group."""
