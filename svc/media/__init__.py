"""Media: upload, download, delete, resumable upload sessions, local-path helpers, decryption.

Every network operation is async and runs on a ``svc.graph.GraphClient`` (its
transport, its authorization). Errors form one tree under ``MediaError``;
upstream failures keep their Graph types.
"""

from ._decrypt import HMAC_TAG_SIZE as HMAC_TAG_SIZE
from ._decrypt import decrypt_encrypted_media as decrypt_encrypted_media
from ._decrypt import decrypt_encrypted_media_async as decrypt_encrypted_media_async
from ._errors import MediaCryptoError as MediaCryptoError
from ._errors import MediaError as MediaError
from ._errors import MediaIntegrityError as MediaIntegrityError
from ._errors import MediaValidationError as MediaValidationError

__all__ = [
    "HMAC_TAG_SIZE",
    "MediaCryptoError",
    "MediaError",
    "MediaIntegrityError",
    "MediaValidationError",
    "decrypt_encrypted_media",
    "decrypt_encrypted_media_async",
]
