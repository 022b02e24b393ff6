"""Interactive send helpers of ``PhoneNumberClient``: buttons, lists, CTA, Flow, carousel, commerce.

``InteractiveSender`` extends ``MessageSender`` (which owns ``_send`` and the
answer parsing); each helper builds its payload with a validated builder, so
bad input is refused before the transport is touched. Every helper takes
``biz_opaque_callback_data``, which the platform echoes on status updates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from . import _builders as b
from ._interactive import build_interactive_carousel_message, build_interactive_flow_message
from ._orders import GoodsType, build_order_details_message, build_order_status_message
from ._send import MessageSender, SendResult

__all__ = ["InteractiveSender"]


class InteractiveSender(MessageSender):
    """Interactive sends for one business phone number (mixed into ``PhoneNumberClient``)."""

    async def send_interactive_buttons(
        self,
        *,
        to: str,
        body_text: str,
        buttons: Sequence[Mapping[str, str]],
        header_text: str | None = None,
        header: Mapping[str, Any] | None = None,
        footer_text: str | None = None,
        reply_to_message_id: str | None = None,
        biz_opaque_callback_data: str | None = None,
    ) -> SendResult:
        """Send 1..3 reply buttons."""
        return await self._send(
            b.build_interactive_buttons_message(
                to=to,
                body_text=body_text,
                buttons=buttons,
                header_text=header_text,
                header=header,
                footer_text=footer_text,
                reply_to_message_id=reply_to_message_id,
            ),
            biz_opaque_callback_data=biz_opaque_callback_data,
        )

    async def send_interactive_list(
        self,
        *,
        to: str,
        body_text: str,
        button_text: str,
        sections: Sequence[Mapping[str, Any]],
        header_text: str | None = None,
        footer_text: str | None = None,
        reply_to_message_id: str | None = None,
        biz_opaque_callback_data: str | None = None,
    ) -> SendResult:
        """Send a list message."""
        return await self._send(
            b.build_interactive_list_message(
                to=to,
                body_text=body_text,
                button_text=button_text,
                sections=sections,
                header_text=header_text,
                footer_text=footer_text,
                reply_to_message_id=reply_to_message_id,
            ),
            biz_opaque_callback_data=biz_opaque_callback_data,
        )

    async def send_interactive_cta_url(
        self,
        *,
        to: str,
        body_text: str,
        display_text: str,
        url: str,
        header_text: str | None = None,
        header: Mapping[str, Any] | None = None,
        footer_text: str | None = None,
        reply_to_message_id: str | None = None,
        biz_opaque_callback_data: str | None = None,
    ) -> SendResult:
        """Send a call-to-action URL button."""
        return await self._send(
            b.build_interactive_cta_url_message(
                to=to,
                body_text=body_text,
                display_text=display_text,
                url=url,
                header_text=header_text,
                header=header,
                footer_text=footer_text,
                reply_to_message_id=reply_to_message_id,
            ),
            biz_opaque_callback_data=biz_opaque_callback_data,
        )

    async def send_interactive_product(
        self,
        *,
        to: str,
        catalog_id: str,
        product_retailer_id: str,
        body_text: str | None = None,
        footer_text: str | None = None,
        reply_to_message_id: str | None = None,
        biz_opaque_callback_data: str | None = None,
    ) -> SendResult:
        """Send a single product."""
        return await self._send(
            b.build_interactive_product_message(
                to=to,
                catalog_id=catalog_id,
                product_retailer_id=product_retailer_id,
                body_text=body_text,
                footer_text=footer_text,
                reply_to_message_id=reply_to_message_id,
            ),
            biz_opaque_callback_data=biz_opaque_callback_data,
        )

    async def send_interactive_products(
        self,
        *,
        to: str,
        catalog_id: str,
        header_text: str,
        body_text: str,
        sections: Sequence[Mapping[str, Any]],
        footer_text: str | None = None,
        reply_to_message_id: str | None = None,
        biz_opaque_callback_data: str | None = None,
    ) -> SendResult:
        """Send a multi-product message."""
        return await self._send(
            b.build_interactive_products_message(
                to=to,
                catalog_id=catalog_id,
                header_text=header_text,
                body_text=body_text,
                sections=sections,
                footer_text=footer_text,
                reply_to_message_id=reply_to_message_id,
            ),
            biz_opaque_callback_data=biz_opaque_callback_data,
        )

    async def send_interactive_catalog(
        self,
        *,
        to: str,
        body_text: str,
        thumbnail_product_retailer_id: str | None = None,
        footer_text: str | None = None,
        reply_to_message_id: str | None = None,
        biz_opaque_callback_data: str | None = None,
    ) -> SendResult:
        """Send a catalog message."""
        return await self._send(
            b.build_interactive_catalog_message(
                to=to,
                body_text=body_text,
                thumbnail_product_retailer_id=thumbnail_product_retailer_id,
                footer_text=footer_text,
                reply_to_message_id=reply_to_message_id,
            ),
            biz_opaque_callback_data=biz_opaque_callback_data,
        )

    async def send_interactive_location_request(
        self,
        *,
        to: str,
        body_text: str,
        reply_to_message_id: str | None = None,
        biz_opaque_callback_data: str | None = None,
    ) -> SendResult:
        """Ask the user to share a location."""
        return await self._send(
            b.build_interactive_location_request_message(
                to=to, body_text=body_text, reply_to_message_id=reply_to_message_id
            ),
            biz_opaque_callback_data=biz_opaque_callback_data,
        )

    async def send_call_permission_request(
        self,
        *,
        to: str,
        body_text: str,
        footer_text: str | None = None,
        reply_to_message_id: str | None = None,
        biz_opaque_callback_data: str | None = None,
    ) -> SendResult:
        """Ask the user for permission to call."""
        return await self._send(
            b.build_call_permission_request_message(
                to=to,
                body_text=body_text,
                footer_text=footer_text,
                reply_to_message_id=reply_to_message_id,
            ),
            biz_opaque_callback_data=biz_opaque_callback_data,
        )

    async def send_voice_call_button(
        self,
        *,
        body_text: str,
        to: str | None = None,
        recipient: str | None = None,
        display_text: str | None = None,
        ttl_minutes: int | None = None,
        payload: str | None = None,
        reply_to_message_id: str | None = None,
        biz_opaque_callback_data: str | None = None,
    ) -> SendResult:
        """Send a WhatsApp call button, by ``to``, ``recipient`` or both (``to`` wins)."""
        return await self._send(
            b.build_voice_call_button_message(
                body_text=body_text,
                to=to,
                recipient=recipient,
                display_text=display_text,
                ttl_minutes=ttl_minutes,
                payload=payload,
                reply_to_message_id=reply_to_message_id,
            ),
            biz_opaque_callback_data=biz_opaque_callback_data,
        )

    async def send_interactive_flow(
        self,
        *,
        to: str,
        body_text: str,
        flow_cta: str,
        flow_id: str | None = None,
        flow_name: str | None = None,
        flow_token: str | None = None,
        flow_action: Literal["navigate", "data_exchange"] | None = None,
        screen: str | None = None,
        data: Mapping[str, Any] | None = None,
        mode: Literal["draft", "published"] | None = None,
        header_text: str | None = None,
        header: Mapping[str, Any] | None = None,
        footer_text: str | None = None,
        reply_to_message_id: str | None = None,
        biz_opaque_callback_data: str | None = None,
    ) -> SendResult:
        """Send a Flow message (see ``build_interactive_flow_message``)."""
        return await self._send(
            build_interactive_flow_message(
                to=to,
                body_text=body_text,
                flow_cta=flow_cta,
                flow_id=flow_id,
                flow_name=flow_name,
                flow_token=flow_token,
                flow_action=flow_action,
                screen=screen,
                data=data,
                mode=mode,
                header_text=header_text,
                header=header,
                footer_text=footer_text,
                reply_to_message_id=reply_to_message_id,
            ),
            biz_opaque_callback_data=biz_opaque_callback_data,
        )

    async def send_interactive_carousel(
        self,
        *,
        to: str,
        body_text: str,
        cards: Sequence[Mapping[str, Any]],
        reply_to_message_id: str | None = None,
        biz_opaque_callback_data: str | None = None,
    ) -> SendResult:
        """Send a media carousel of 2..10 cards (see ``build_interactive_carousel_message``)."""
        return await self._send(
            build_interactive_carousel_message(
                to=to, body_text=body_text, cards=cards, reply_to_message_id=reply_to_message_id
            ),
            biz_opaque_callback_data=biz_opaque_callback_data,
        )

    # --- payments

    async def send_order_details(
        self,
        *,
        to: str,
        body_text: str,
        reference_id: str,
        goods_type: GoodsType,
        currency: str,
        total_amount: Mapping[str, int],
        order: Mapping[str, Any] | None = None,
        payment_type: str | None = None,
        payment_configuration: str | None = None,
        payment_settings: Sequence[Mapping[str, Any]] | None = None,
        header: Mapping[str, Any] | None = None,
        footer_text: str | None = None,
        reply_to_message_id: str | None = None,
        biz_opaque_callback_data: str | None = None,
    ) -> SendResult:
        """Send a bill to review and pay (see ``build_order_details_message``)."""
        return await self._send(
            build_order_details_message(
                to=to,
                body_text=body_text,
                reference_id=reference_id,
                goods_type=goods_type,
                currency=currency,
                total_amount=total_amount,
                order=order,
                payment_type=payment_type,
                payment_configuration=payment_configuration,
                payment_settings=payment_settings,
                header=header,
                footer_text=footer_text,
                reply_to_message_id=reply_to_message_id,
            ),
            biz_opaque_callback_data=biz_opaque_callback_data,
        )

    async def send_order_status(
        self,
        *,
        to: str,
        body_text: str,
        reference_id: str,
        status: str,
        description: str | None = None,
        footer_text: str | None = None,
        reply_to_message_id: str | None = None,
        biz_opaque_callback_data: str | None = None,
    ) -> SendResult:
        """Tell the user what became of an order (see ``build_order_status_message``)."""
        return await self._send(
            build_order_status_message(
                to=to,
                body_text=body_text,
                reference_id=reference_id,
                status=status,
                description=description,
                footer_text=footer_text,
                reply_to_message_id=reply_to_message_id,
            ),
            biz_opaque_callback_data=biz_opaque_callback_data,
        )
