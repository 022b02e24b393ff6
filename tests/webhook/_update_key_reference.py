"""``update_key`` as it was before its one-string rewrite: the reference it must equal.

A verbatim copy of ``svc/webhook/_keys.py``'s ``update_key`` (and ``_identity``)
at main @ 29db921; ``test_update_keys`` checks the new form gives the same key
for every update.
"""

from __future__ import annotations

from svc.crypto import sha256_hex
from svc.webhook import canonical_json
from svc.webhook._base import UpdateBase


def _identity(update: UpdateBase) -> tuple[str, ...] | None:
    """The platform's identifying fields of an update, when its kind has them."""
    kind = update.kind
    raw = update.raw
    if kind == "status":
        return (str(raw.get("id")), str(raw.get("status")))
    if kind in ("message", "system", "chatOpened"):
        echo = "echo" if getattr(update, "is_echo", False) else "item"
        return (echo, str(raw.get("id")))
    if kind in ("callConnect", "callTerminate", "callStatus"):
        return (str(raw.get("id")), str(raw.get("event", "")), str(raw.get("status", "")))
    return None


def update_key(update: UpdateBase) -> str:
    """A stable key of one update (the reference form)."""
    parts = _identity(update)
    if parts is None:
        parts = (update.field, canonical_json(update.raw).decode("utf-8", "surrogatepass"))
    scope = (update.phone_number_id or "", update.waba_id or "", update.kind, *parts)
    return sha256_hex("\x00".join(scope).encode("utf-8", "surrogatepass"))
