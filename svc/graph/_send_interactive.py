"""Interactive send helpers of ``PhoneNumberClient``: buttons, lists, CTA, Flow, carousel, commerce.

``InteractiveSender`` extends ``MessageSender`` (which owns ``send`` and the
answer parsing); each helper is derived from its ``Message`` declaration by
``sends``, so it takes the declaration's keywords, ``biz_opaque_callback_data``
among them, and bad input is refused before the transport is touched.
"""

from __future__ import annotations

from ._interactive import InteractiveCarouselMessage, InteractiveFlowMessage
from ._interactive_messages import (
    CallPermissionRequestMessage,
    InteractiveButtonsMessage,
    InteractiveCatalogMessage,
    InteractiveCtaUrlMessage,
    InteractiveListMessage,
    InteractiveLocationRequestMessage,
    InteractiveProductMessage,
    InteractiveProductsMessage,
    VoiceCallButtonMessage,
)
from ._orders import OrderDetailsMessage, OrderStatusMessage
from ._send import MessageSender, sends

__all__ = ["InteractiveSender"]


class InteractiveSender(MessageSender):
    """Interactive sends for one business phone number (mixed into ``PhoneNumberClient``)."""

    send_interactive_buttons = sends(InteractiveButtonsMessage)
    send_interactive_list = sends(InteractiveListMessage)
    send_interactive_cta_url = sends(InteractiveCtaUrlMessage)
    send_interactive_product = sends(InteractiveProductMessage)
    send_interactive_products = sends(InteractiveProductsMessage)
    send_interactive_catalog = sends(InteractiveCatalogMessage)
    send_interactive_location_request = sends(InteractiveLocationRequestMessage)
    send_call_permission_request = sends(CallPermissionRequestMessage)
    send_voice_call_button = sends(VoiceCallButtonMessage)
    send_interactive_flow = sends(InteractiveFlowMessage)
    send_interactive_carousel = sends(InteractiveCarouselMessage)
    send_order_details = sends(OrderDetailsMessage)
    send_order_status = sends(OrderStatusMessage)
