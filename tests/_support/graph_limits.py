"""The platform's send limits, as a fake Graph enforces them: throughput and the pair limit.

``GraphLimits(rate=50)`` is a token bucket of ``rate`` tokens (one second's
worth) refilled at ``rate`` per second: a send finding it empty is refused with
130429. A send to a recipient who got one less than ``pair_window`` seconds ago
is refused with 131056. The clock is passed to ``check`` (trio's mock clock in
process, ``time.monotonic`` in the socket fake), so tests never sleep.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from typing import Any

THROUGHPUT_CODE = 130429
PAIR_CODE = 131056


class GraphLimits:
    """Decides, per send, whether the platform would accept it; counts what it answered."""

    def __init__(self, *, rate: float, pair_window: float = 6.0) -> None:
        self.rate = rate
        self.pair_window = pair_window
        self.tokens = rate
        self.last: float | None = None
        self.last_sent: dict[str, float] = {}
        self.just_messaged: set[str] = set()
        """Recipients messaged elsewhere a moment before their first send here: that send
        is refused with the pair code whenever it comes (not relative to a start time that
        a busy machine's clock jumps could carry past the window)."""
        self.accepted: Counter[str] = Counter()
        self.refused: Counter[int] = Counter()
        self.accepted_times: list[float] = []
        self.lock = threading.Lock()

    def check(self, body: bytes, now: float) -> int | None:
        """None to accept the send of ``body`` at ``now``, else the error code to answer."""
        try:
            data: Any = json.loads(body)
            who = str(data.get("to") or data.get("recipient") or "")
        except (ValueError, AttributeError):
            who = ""
        with self.lock:
            if self.last is not None:
                self.tokens = min(self.rate, self.tokens + (now - self.last) * self.rate)
            self.last = now
            if self.tokens < 1:
                self.refused[THROUGHPUT_CODE] += 1
                return THROUGHPUT_CODE
            if who in self.just_messaged:
                self.just_messaged.discard(who)
                self.last_sent[who] = now
            previous = self.last_sent.get(who)
            if previous is not None and now - previous < self.pair_window:
                self.refused[PAIR_CODE] += 1
                return PAIR_CODE
            self.tokens -= 1
            self.last_sent[who] = now
            self.accepted[who] += 1
            self.accepted_times.append(now)
            return None

    @staticmethod
    def error_body(code: int) -> dict[str, Any]:
        """The platform's error answer for ``code`` (HTTP 400 for 131056, 429 for 130429)."""
        return {
            "error": {
                "message": f"(#{code}) rate limit",
                "type": "OAuthException",
                "code": code,
                "fbtrace_id": "AbCdEf",
            }
        }

    @staticmethod
    def status(code: int) -> int:
        return 429 if code == THROUGHPUT_CODE else 400

    def duplicates(self) -> dict[str, int]:
        """Recipients the fake accepted more than one send for."""
        return {who: n for who, n in self.accepted.items() if n > 1}
