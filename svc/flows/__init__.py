"""The WhatsApp Flows data endpoint, sans-IO: encrypted request bytes in, status and body out.

``handle_flow_request`` checks the size cap and the ``X-Hub-Signature-256``
(``svc.webhook``'s check), decrypts the request (RSA-OAEP-SHA256 unwrap of an
AES key, AES-GCM), answers pings and error notifications itself and hands
the typed ``FlowRequest`` to a handler otherwise. Any ASGI app on trio or
asyncio can mount it; ``svc.http`` does. See ``docs/flows.md``.
"""

from ._endpoint import ENCRYPTED_CONTENT_TYPE as ENCRYPTED_CONTENT_TYPE
from ._endpoint import FLOW_OUTCOMES as FLOW_OUTCOMES
from ._endpoint import FlowHandler as FlowHandler
from ._endpoint import FlowHandlerResult as FlowHandlerResult
from ._endpoint import FlowResponse as FlowResponse
from ._endpoint import handle_flow_request as handle_flow_request
from ._errors import MAX_ERROR_MESSAGE_LENGTH as MAX_ERROR_MESSAGE_LENGTH
from ._errors import FlowDecryptionError as FlowDecryptionError
from ._errors import FlowError as FlowError
from ._errors import FlowHandlerError as FlowHandlerError
from ._errors import FlowMediaError as FlowMediaError
from ._errors import FlowPayloadTooLargeError as FlowPayloadTooLargeError
from ._errors import FlowRequestError as FlowRequestError
from ._errors import FlowResponseError as FlowResponseError
from ._errors import FlowSignatureError as FlowSignatureError
from ._errors import FlowTokenNoLongerValidError as FlowTokenNoLongerValidError
from ._keys import FLOW_KEY_BITS as FLOW_KEY_BITS
from ._keys import FlowKeyPair as FlowKeyPair
from ._keys import FlowPrivateKey as FlowPrivateKey
from ._keys import generate_flow_key_pair as generate_flow_key_pair
from ._keys import load_flow_private_key as load_flow_private_key
from ._media import MAX_FILE_NAME_LENGTH as MAX_FILE_NAME_LENGTH
from ._media import FlowMedia as FlowMedia
from ._media import download_flow_media as download_flow_media
from ._request import ENVELOPE_FIELDS as ENVELOPE_FIELDS
from ._request import FLOW_ACTIONS as FLOW_ACTIONS
from ._request import MAX_FLOW_BYTES as MAX_FLOW_BYTES
from ._request import DecryptedFlowRequest as DecryptedFlowRequest
from ._request import FlowAction as FlowAction
from ._request import FlowRequest as FlowRequest
from ._request import decrypt_request as decrypt_request
from ._response import PING_RESPONSE as PING_RESPONSE
from ._response import FlowClose as FlowClose
from ._response import FlowReply as FlowReply
from ._response import FlowScreen as FlowScreen
from ._response import encrypt_response as encrypt_response
from ._response import error_acknowledgement as error_acknowledgement
from ._response import invert_iv as invert_iv
from ._response import response_payload as response_payload

__all__ = [
    "ENCRYPTED_CONTENT_TYPE",
    "ENVELOPE_FIELDS",
    "FLOW_ACTIONS",
    "FLOW_KEY_BITS",
    "FLOW_OUTCOMES",
    "MAX_ERROR_MESSAGE_LENGTH",
    "MAX_FILE_NAME_LENGTH",
    "MAX_FLOW_BYTES",
    "PING_RESPONSE",
    "DecryptedFlowRequest",
    "FlowAction",
    "FlowClose",
    "FlowDecryptionError",
    "FlowError",
    "FlowHandler",
    "FlowHandlerError",
    "FlowHandlerResult",
    "FlowKeyPair",
    "FlowMedia",
    "FlowMediaError",
    "FlowPayloadTooLargeError",
    "FlowPrivateKey",
    "FlowReply",
    "FlowRequest",
    "FlowRequestError",
    "FlowResponse",
    "FlowResponseError",
    "FlowScreen",
    "FlowSignatureError",
    "FlowTokenNoLongerValidError",
    "decrypt_request",
    "download_flow_media",
    "encrypt_response",
    "error_acknowledgement",
    "generate_flow_key_pair",
    "handle_flow_request",
    "invert_iv",
    "load_flow_private_key",
    "response_payload",
]
