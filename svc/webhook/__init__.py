"""The webhook layer, sans-IO: signature and challenge checks, envelope -> typed updates, facade.

Nothing here reads the environment, the disk or the network; the HTTP layer
feeds bytes in and sends answers out.
"""

from ._challenge import verify_challenge as verify_challenge
from ._errors import ChallengeError as ChallengeError
from ._errors import InvalidEnvelopeError as InvalidEnvelopeError
from ._errors import InvalidJsonError as InvalidJsonError
from ._errors import InvalidModeError as InvalidModeError
from ._errors import InvalidSignatureFormatError as InvalidSignatureFormatError
from ._errors import InvalidVerifyTokenError as InvalidVerifyTokenError
from ._errors import MissingChallengeError as MissingChallengeError
from ._errors import MissingSignatureError as MissingSignatureError
from ._errors import PayloadTooLargeError as PayloadTooLargeError
from ._errors import SignatureError as SignatureError
from ._errors import SignatureMismatchError as SignatureMismatchError
from ._errors import WebhookError as WebhookError
from ._keys import body_hash as body_hash
from ._keys import canonical_json as canonical_json
from ._keys import event_key as event_key
from ._signature import SIGNATURE_HEADER as SIGNATURE_HEADER
from ._signature import SIGNATURE_PREFIX as SIGNATURE_PREFIX
from ._signature import BoundedBody as BoundedBody
from ._signature import check_content_length as check_content_length
from ._signature import parse_envelope as parse_envelope
from ._signature import parse_signature_header as parse_signature_header
from ._signature import verify_and_parse as verify_and_parse
from ._signature import verify_signature as verify_signature

__all__ = [
    "SIGNATURE_HEADER",
    "SIGNATURE_PREFIX",
    "BoundedBody",
    "ChallengeError",
    "InvalidEnvelopeError",
    "InvalidJsonError",
    "InvalidModeError",
    "InvalidSignatureFormatError",
    "InvalidVerifyTokenError",
    "MissingChallengeError",
    "MissingSignatureError",
    "PayloadTooLargeError",
    "SignatureError",
    "SignatureMismatchError",
    "WebhookError",
    "body_hash",
    "canonical_json",
    "check_content_length",
    "event_key",
    "parse_envelope",
    "parse_signature_header",
    "verify_and_parse",
    "verify_challenge",
    "verify_signature",
]
