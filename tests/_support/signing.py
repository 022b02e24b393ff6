"""The ``X-Hub-Signature-256`` value the platform sends with a webhook or Flows body.

An independent reference implementation: tests may call ``hmac`` directly, ``svc`` may not.
Both arguments are keyword-only, so a body and a secret can never be swapped.
"""

from __future__ import annotations

import hashlib
import hmac


def sign(*, body: bytes, secret: str | bytes) -> str:
    """``sha256=`` and the hex HMAC-SHA256 of ``body`` under ``secret``."""
    key = secret.encode() if isinstance(secret, str) else secret
    return "sha256=" + hmac.new(key, body, hashlib.sha256).hexdigest()
