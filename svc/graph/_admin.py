"""The admin mixins each scoped client carries, composed in one place.

``_scoped`` adds ``PhoneNumberAdmin`` to ``PhoneNumberClient``, ``WABAAdmin``
to ``WABAClient``, ``GroupAdmin`` to ``GroupClient``, ``BusinessAdmin`` to
``BusinessClient``, ``AppAdmin`` to ``AppClient`` and ``SolutionAdmin`` to
``SolutionClient``; new admin areas are added here, not there. Every helper is
an ``async`` method with keyword-only arguments, validated before the
transport, built on the endpoint primitive.
"""

from __future__ import annotations

from ._calling import Calling
from ._flows import Flows
from ._groups import GroupAdmin as _GroupAdmin
from ._groups import PhoneGroups
from ._message_history import MessageHistory
from ._phone_admin import PhoneAdmin
from ._phone_setup import PhoneSetup
from ._portfolio import BusinessPortfolio
from ._preverified import PreverifiedNumbers
from ._schedules import Schedules
from ._solutions import AppSolutions, SolutionLifecycle, WabaSolutions
from ._templates import Templates
from ._thread_control import ThreadControl
from ._username import BusinessUsernames
from ._waba import WabaAccount
from ._waba_users import WabaUsers

__all__ = [
    "AppAdmin",
    "BusinessAdmin",
    "GroupAdmin",
    "PhoneNumberAdmin",
    "SolutionAdmin",
    "WABAAdmin",
]


class PhoneNumberAdmin(
    PhoneGroups, PhoneAdmin, PhoneSetup, BusinessUsernames, MessageHistory, Calling, ThreadControl
):
    """Admin helpers bound to one business phone number: groups, settings, calling, threads..."""


class WABAAdmin(WabaAccount, WabaUsers, Schedules, WabaSolutions, Templates, Flows):
    """Admin helpers bound to one WhatsApp Business Account: account, templates, Flows, ..."""


class GroupAdmin(_GroupAdmin):
    """Admin helpers bound to one group."""


class BusinessAdmin(BusinessPortfolio, PreverifiedNumbers):
    """Admin helpers bound to one business portfolio: accounts, pre-verified numbers, ..."""


class AppAdmin(AppSolutions):
    """Admin helpers bound to one Meta app: its Multi-Partner Solutions and clients."""


class SolutionAdmin(SolutionLifecycle):
    """Admin helpers bound to one Multi-Partner Solution."""
