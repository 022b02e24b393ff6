"""Signed, realistic ~3 KB webhook deliveries for the HTTP benchmarks, 30% of them duplicates.

Templates come from the test fixtures (``tests/webhook/fixtures``): a text
message, a media batch, a status batch and a mixed batch, each padded to about
3 KB with more messages or statuses of the same shape (as the platform batches
them). Every delivery gets its own message ids, so a store sees a new event, and
event times that advance with it (the platform stamps each message and status
with the moment it happened, not a fixture's date); a duplicate repeats an
earlier delivery byte for byte (same body, same signature), as the platform
does when it retries.
"""

from __future__ import annotations

import copy
import json
import random
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from svc.crypto import hmac_sha256

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "webhook" / "fixtures"
TEMPLATE_FILES = (
    "message_text.json",
    "message_media_batch.json",
    "status_batch.json",
    "batch_mixed.json",
)
TARGET_BYTES = 3072
DUPLICATE_SHARE = 0.3
WEBHOOK_PATH = "/webhooks/whatsapp"
MARK = "@@N@@"
TIMESTAMP = re.compile(r'"timestamp":"(\d+)"')
TIME_MARK = re.compile(r'"timestamp":"@@T(\d+)@@"')
DELIVERIES_PER_SECOND = 1000
"""How many deliveries share a second of event time (about the served rate)."""
_PHRASES = (
    "Hi! I ordered the blue jacket last week (order 48213) and it still says processing.",
    "Can you tell me whether it ships to Lisbon, and how long delivery usually takes?",
    "Also, is it possible to change the size from M to L before it leaves the warehouse?",
    "Thanks, the tracking link works now. The parcel should arrive on Thursday.",
    "Do you have the same model in dark green? The photo on the site looks different.",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Delivery:
    """One POST: the raw body and its ``X-Hub-Signature-256`` value."""

    body: bytes
    signature: str


def _value(envelope: dict[str, Any]) -> dict[str, Any]:
    value: dict[str, Any] = envelope["entry"][0]["changes"][0]["value"]
    return value


def _pad(envelope: dict[str, Any]) -> dict[str, Any]:
    """Grow the first change with messages or statuses of its own kind up to ~3 KB."""
    value = _value(envelope)
    kind = "messages" if value.get("messages") else "statuses"
    items: list[dict[str, Any]] = value[kind]
    seed = items[0]
    n = 0
    while len(json.dumps(envelope, separators=(",", ":"))) < TARGET_BYTES - 300:
        extra = copy.deepcopy(seed)
        extra["id"] = f"{seed['id'][:40]}P{n:03d}"
        if kind == "messages":
            extra["type"] = "text"
            for key in ("image", "video", "audio", "document", "sticker", "interactive"):
                extra.pop(key, None)
            extra["text"] = {"body": _PHRASES[n % len(_PHRASES)]}
        items.append(extra)
        n += 1
    return envelope


def _bsuid(wa_id: str) -> str:
    return f"US.{int(wa_id) * 7919 % 10**19:019d}"


def _with_user_ids(envelope: dict[str, Any]) -> dict[str, Any]:
    """Add the business-scoped user ids (``user_id``) the platform now sends with contacts.

    pywa 4 requires them (it reads ``contacts[].user_id``, also for statuses); svc
    ignores them, so both parse the same bytes.
    """
    for entry in envelope["entry"]:
        for change in entry["changes"]:
            value = change["value"]
            contacts = value.setdefault("contacts", [])
            for contact in contacts:
                contact.setdefault("user_id", _bsuid(contact["wa_id"]))
            known = {c["wa_id"] for c in contacts}
            for status in value.get("statuses", []):
                recipient = status.get("recipient_id")
                if recipient and recipient not in known:
                    contacts.append({"wa_id": recipient, "user_id": _bsuid(recipient)})
                    known.add(recipient)
            if not contacts:
                del value["contacts"]
    return envelope


def _mark_ids(node: Any) -> Any:
    """Put the per-delivery marker into every message id (``wamid.*``)."""
    if isinstance(node, dict):
        out = {}
        for key, item in node.items():
            if key == "id" and isinstance(item, str) and item.startswith("wamid."):
                out[key] = "wamid." + MARK + item[6:]
            else:
                out[key] = _mark_ids(item)
        return out
    if isinstance(node, list):
        return [_mark_ids(item) for item in node]
    return node


def _mark_times(text: str) -> str:
    """Each event ``timestamp`` as a marker holding its offset from the envelope's first."""
    first = min((int(t) for t in TIMESTAMP.findall(text)), default=0)
    return TIMESTAMP.sub(lambda m: f'"timestamp":"@@T{int(m[1]) - first}@@"', text)


def templates() -> list[str]:
    """The padded fixture envelopes as compact JSON text with the id and time markers."""
    out = []
    for name in TEMPLATE_FILES:
        envelope = json.loads((FIXTURES / name).read_text())
        text = json.dumps(_mark_ids(_pad(_with_user_ids(envelope))), separators=(",", ":"))
        out.append(_mark_times(text))
    return out


SINGLE_TEXT_USER = "16505551234"
"""The sender of ``message_text.json``, replaced per delivery in ``single_text`` mode."""


def single_text_template() -> str:
    """One inbound text message (``message_text.json``, not padded) with the markers."""
    envelope = json.loads((FIXTURES / "message_text.json").read_text())
    text = json.dumps(_mark_ids(_with_user_ids(envelope)), separators=(",", ":"))
    # The user's BSUID too: a user of its own per delivery is another identity key (svc
    # queues a user's updates by it), not only another phone number.
    text = text.replace(_bsuid(SINGLE_TEXT_USER), "@@B@@")
    return _mark_times(text.replace(SINGLE_TEXT_USER, "@@U@@"))


def sign(app_secret: str, body: bytes) -> str:
    """The platform's signature header value for ``body``."""
    return "sha256=" + hmac_sha256(app_secret.encode(), body).hex()


def deliveries(
    count: int,
    app_secret: str,
    *,
    seed: int = 7,
    duplicates: float = DUPLICATE_SHARE,
    run: str = "",
    start: int | None = None,
    single_text: bool = False,
) -> list[Delivery]:
    """``count`` deliveries in sending order; about ``duplicates`` of them repeat an earlier one.

    ``run`` goes into every id, so two runs against one database never collide. Event
    times start at ``start`` (Unix seconds, now by default) and advance a second every
    ``DELIVERIES_PER_SECOND`` deliveries. ``single_text``: each delivery is one inbound
    text message (about 0.5 KB) from a user of its own, as a bot mostly receives them.
    """
    base = int(time.time()) if start is None else start
    rng = random.Random(seed)
    texts = [single_text_template()] if single_text else templates()
    unique: list[Delivery] = []
    out: list[Delivery] = []
    for i in range(count):
        if unique and rng.random() < duplicates:
            out.append(unique[rng.randrange(max(0, len(unique) - 200), len(unique))])
            continue
        second = base + i // DELIVERIES_PER_SECOND
        text = texts[i % len(texts)].replace(MARK, f"{run}{i:08d}.")
        user = f"1555{i % 10_000_000:07d}"
        text = text.replace("@@U@@", user).replace("@@B@@", _bsuid(user))
        text = TIME_MARK.sub(lambda m, at=second: f'"timestamp":"{at + int(m[1])}"', text)
        body = text.encode()
        delivery = Delivery(body=body, signature=sign(app_secret, body))
        unique.append(delivery)
        out.append(delivery)
    return out


def http_request(delivery: Delivery, *, host: str, path: str = WEBHOOK_PATH) -> bytes:
    """The raw HTTP/1.1 keep-alive request bytes of one delivery."""
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(delivery.body)}\r\nX-Hub-Signature-256: {delivery.signature}\r\n"
        "User-Agent: facebookexternalua\r\n\r\n"
    )
    return head.encode() + delivery.body
