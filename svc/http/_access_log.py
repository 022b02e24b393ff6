"""The opt-in access log: one JSON line per answered request (``create_app(access_log=True)``).

A line holds the method (a standard one, else ``other``), the templated route
(``/api/messages/:id``, ``unmatched`` for any other path), the status and the
duration. It never holds a path, a query, a header, an id, a phone number or a
token: the route template is the only part of the request that is written.
"""

from __future__ import annotations

import json
import logging
from typing import TextIO

__all__ = ["AccessLog"]


class AccessLog:
    """Writes ``{"event":"svc.access",...}`` lines to a stream; a failed write is only counted."""

    def __init__(self, stream: TextIO, logger: logging.Logger) -> None:
        self._stream = stream
        self._logger = logger

    def record(self, *, method: str, route: str, status: int, seconds: float) -> None:
        """One answered request (``method`` clamped and ``route`` templated by the caller)."""
        line = {
            "event": "svc.access",
            "method": method,
            "route": route,
            "status": status,
            "durationMs": round(seconds * 1000, 3),
        }
        try:
            self._stream.write(json.dumps(line, separators=(",", ":")) + "\n")
            self._stream.flush()
        except (OSError, ValueError):
            self._logger.warning("could not write an svc.access line")
