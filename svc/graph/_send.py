"""Send helpers shared by ``PhoneNumberClient``: every message type of the spec, validated first.

``MessageSender`` is a mixin: the scoped client supplies ``_post_phone_edge``,
which POSTs a JSON payload to ``/{phone_number_id}/{edge}`` and returns the
parsed answer.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from typing import Any

__all__ = ["MessageSender"]


class MessageSender(abc.ABC):
    """Message sends for one business phone number (mixed into ``PhoneNumberClient``)."""

    @abc.abstractmethod
    async def _post_phone_edge(self, edge: str, payload: Mapping[str, Any]) -> Any:
        """POST ``payload`` as JSON to ``/{phone_number_id}/{edge}``; return the parsed answer."""
