"""The message declarations: one frozen ``Message`` per send type, for ``PhoneNumberClient.send``.

``phone.send(TextMessage(to="15551234567", text="Hello"))`` sends any of them;
``message.to_payload()`` gives its checked wire JSON without sending. The
``build_*`` functions and ``send_*`` helpers of ``svc.graph`` are derived from
these declarations and take the same keywords.
"""

from ._contacts import ContactsMessage as ContactsMessage
from ._content_messages import AudioMessage as AudioMessage
from ._content_messages import DocumentMessage as DocumentMessage
from ._content_messages import ImageMessage as ImageMessage
from ._content_messages import LocationMessage as LocationMessage
from ._content_messages import MediaMessage as MediaMessage
from ._content_messages import ReactionMessage as ReactionMessage
from ._content_messages import RemoveReactionMessage as RemoveReactionMessage
from ._content_messages import StickerMessage as StickerMessage
from ._content_messages import TextMessage as TextMessage
from ._content_messages import VideoMessage as VideoMessage
from ._group_messages import GroupMediaMessage as GroupMediaMessage
from ._group_messages import GroupPinMessage as GroupPinMessage
from ._group_messages import GroupTemplateMessage as GroupTemplateMessage
from ._group_messages import GroupTextMessage as GroupTextMessage
from ._interactive import InteractiveCarouselMessage as InteractiveCarouselMessage
from ._interactive import InteractiveFlowMessage as InteractiveFlowMessage
from ._interactive_messages import CallPermissionRequestMessage as CallPermissionRequestMessage
from ._interactive_messages import InteractiveButtonsMessage as InteractiveButtonsMessage
from ._interactive_messages import InteractiveCatalogMessage as InteractiveCatalogMessage
from ._interactive_messages import InteractiveCtaUrlMessage as InteractiveCtaUrlMessage
from ._interactive_messages import InteractiveListMessage as InteractiveListMessage
from ._interactive_messages import (
    InteractiveLocationRequestMessage as InteractiveLocationRequestMessage,
)
from ._interactive_messages import InteractiveProductMessage as InteractiveProductMessage
from ._interactive_messages import InteractiveProductsMessage as InteractiveProductsMessage
from ._interactive_messages import VoiceCallButtonMessage as VoiceCallButtonMessage
from ._message import Message as Message
from ._orders import OrderDetailsMessage as OrderDetailsMessage
from ._orders import OrderStatusMessage as OrderStatusMessage
from ._template_messages import MarketingTemplateMessage as MarketingTemplateMessage
from ._template_messages import TemplateMessage as TemplateMessage

__all__ = [
    "AudioMessage",
    "CallPermissionRequestMessage",
    "ContactsMessage",
    "DocumentMessage",
    "GroupMediaMessage",
    "GroupPinMessage",
    "GroupTemplateMessage",
    "GroupTextMessage",
    "ImageMessage",
    "InteractiveButtonsMessage",
    "InteractiveCarouselMessage",
    "InteractiveCatalogMessage",
    "InteractiveCtaUrlMessage",
    "InteractiveFlowMessage",
    "InteractiveListMessage",
    "InteractiveLocationRequestMessage",
    "InteractiveProductMessage",
    "InteractiveProductsMessage",
    "LocationMessage",
    "MarketingTemplateMessage",
    "MediaMessage",
    "Message",
    "OrderDetailsMessage",
    "OrderStatusMessage",
    "ReactionMessage",
    "RemoveReactionMessage",
    "StickerMessage",
    "TemplateMessage",
    "TextMessage",
    "VideoMessage",
    "VoiceCallButtonMessage",
]
