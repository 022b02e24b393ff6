"""Cross-check: svc and pywa build the same wire JSON wherever both build a message.

pywa is installed by the ``bench`` extra only; without it this module is
skipped. Differences on purpose (listed in docs/decisions.md) are normalized
here and named where they are: pywa always sends ``preview_url``, Flow
``mode`` and ``flow_token``; it writes template ``sub_type`` in upper case
and ``index`` as a number.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from svc.graph import (
    build_interactive_buttons_message,
    build_interactive_carousel_message,
    build_interactive_cta_url_message,
    build_interactive_flow_message,
    build_template_catalog_button,
    build_template_mpm_button,
    build_text_message,
    with_callback_data,
)

pywa = pytest.importorskip(
    "pywa", reason="pywa is installed by the bench extra only (CI installs .[dev])"
)
from pywa import types as pt  # noqa: E402
from pywa.types import templates as ptt  # noqa: E402

TO = "15551234567"
ANSWER = {
    "messaging_product": "whatsapp",
    "contacts": [{"input": TO, "wa_id": TO}],
    "messages": [{"id": "wamid.X"}],
}


def pywa_wire(send: Callable[[Any], Any]) -> dict[str, Any]:
    """The JSON pywa POSTs for ``send(client)``, captured at its httpx transport."""
    requests: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        return httpx.Response(200, json=ANSWER)

    client = pywa.WhatsApp(
        phone_id="123", token="t", session=httpx.Client(transport=httpx.MockTransport(handler))
    )
    send(client)
    [request] = requests
    wire: dict[str, Any] = json.loads(request.content)
    return wire


CARD_BUTTON = {"type": "quick_reply", "id": "a", "title": "A"}

MESSAGES: list[tuple[str, Callable[[Any], Any], dict[str, Any]]] = [
    (
        "text with tracker",
        lambda wa: wa.send_message(to=TO, text="hi", tracker="order:1"),
        with_callback_data(build_text_message(to=TO, text="hi", preview_url=False), "order:1"),
    ),
    (
        "reply buttons",
        lambda wa: wa.send_message(
            to=TO,
            text="Pick",
            header="H",
            footer="F",
            buttons=[pt.Button(title="A", callback_data="a")],
        ),
        build_interactive_buttons_message(
            to=TO,
            body_text="Pick",
            header_text="H",
            footer_text="F",
            buttons=[{"id": "a", "title": "A"}],
        ),
    ),
    (
        "cta url",
        lambda wa: wa.send_message(
            to=TO, text="See", buttons=pt.URLButton(title="Open", url="https://x.test")
        ),
        build_interactive_cta_url_message(
            to=TO, body_text="See", display_text="Open", url="https://x.test"
        ),
    ),
    (
        "flow navigate",
        lambda wa: wa.send_message(
            to=TO,
            text="Book",
            buttons=pt.FlowButton(
                title="Book",
                flow_id="1",
                flow_token="tok",
                flow_action_type="navigate",
                flow_action_screen="S",
                flow_action_payload={"a": 1},
                mode="published",
                flow_message_version=3,
            ),
        ),
        build_interactive_flow_message(
            to=TO,
            body_text="Book",
            flow_cta="Book",
            flow_id="1",
            flow_token="tok",
            flow_action="navigate",
            screen="S",
            data={"a": 1},
            mode="published",
        ),
    ),
    (
        "carousel quick replies",
        lambda wa: wa.send_carousel(
            to=TO,
            body="b",
            cards=[
                pt.ImageCarouselCard(
                    image="https://x.test/a.png",
                    body="c",
                    buttons=[pt.Button(title="A", callback_data="a")],
                )
            ]
            * 2,
        ),
        build_interactive_carousel_message(
            to=TO,
            body_text="b",
            cards=[
                {
                    "header": {"type": "image", "link": "https://x.test/a.png"},
                    "body_text": "c",
                    "buttons": [CARD_BUTTON],
                }
            ]
            * 2,
        ),
    ),
    (
        "carousel url buttons",
        lambda wa: wa.send_carousel(
            to=TO,
            body="b",
            cards=[
                pt.VideoCarouselCard(
                    video="https://x.test/v.mp4",
                    buttons=pt.URLButton(title="Buy", url="https://x.test/1"),
                )
            ]
            * 2,
        ),
        build_interactive_carousel_message(
            to=TO,
            body_text="b",
            cards=[
                {
                    "header": {"type": "video", "link": "https://x.test/v.mp4"},
                    "buttons": [{"type": "url", "display_text": "Buy", "url": "https://x.test/1"}],
                }
            ]
            * 2,
        ),
    ),
]


@pytest.mark.parametrize(("name", "send", "ours"), MESSAGES, ids=[m[0] for m in MESSAGES])
def test_messages_match_pywa(name: str, send: Callable[[Any], Any], ours: dict[str, Any]) -> None:
    assert pywa_wire(send) == ours


def _normalized(component: dict[str, Any]) -> Any:
    """pywa's upper-case ``sub_type`` and numeric ``index`` in svc's spelling; tuples as lists."""
    out = json.loads(json.dumps(component))
    out["sub_type"] = out["sub_type"].lower()
    out["index"] = str(out["index"])
    return out


def test_template_catalog_button_without_thumbnail_matches_pywa() -> None:
    # Both write the catalog button as the platform's catalog reference does: CATALOG, index 0.
    theirs = json.loads(json.dumps(ptt.CatalogButton.params(index=0).to_dict()))
    assert theirs == build_template_catalog_button(index=0)


def test_template_mpm_button_matches_pywa() -> None:
    section = pt.ProductsSection(title="Cart", skus=["p1", "p2"])
    theirs = _normalized(
        ptt.MPMButton.params(
            product_sections=[section], thumbnail_product_sku="t", index=0
        ).to_dict()
    )
    ours = build_template_mpm_button(
        index=0,
        thumbnail_product_retailer_id="t",
        sections=[{"title": "Cart", "product_retailer_ids": ["p1", "p2"]}],
    )
    assert theirs == ours
