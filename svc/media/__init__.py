"""Media: upload, download, delete, resumable upload sessions, local-path helpers, decryption.

Every network operation is async and runs on a ``svc.graph.GraphClient`` (its
transport, its authorization). Errors form one tree under ``MediaError``;
upstream failures keep their Graph types.
"""

from ._bodies import UploadFile as UploadFile
from ._checks import MAX_DOWNLOAD_BYTES as MAX_DOWNLOAD_BYTES
from ._checks import MAX_SESSION_BYTES as MAX_SESSION_BYTES
from ._checks import MAX_UPLOAD_BYTES as MAX_UPLOAD_BYTES
from ._decrypt import BUNDLE_FIELDS as BUNDLE_FIELDS
from ._decrypt import HMAC_TAG_SIZE as HMAC_TAG_SIZE
from ._decrypt import decrypt_encrypted_media as decrypt_encrypted_media
from ._decrypt import decrypt_encrypted_media_async as decrypt_encrypted_media_async
from ._errors import MediaCryptoError as MediaCryptoError
from ._errors import MediaError as MediaError
from ._errors import MediaHostError as MediaHostError
from ._errors import MediaIntegrityError as MediaIntegrityError
from ._errors import MediaValidationError as MediaValidationError
from ._local import KIND_MAX_BYTES as KIND_MAX_BYTES
from ._local import SUPPORTED_EXTENSIONS as SUPPORTED_EXTENSIONS
from ._local import upload_and_send_audio as upload_and_send_audio
from ._local import upload_and_send_document as upload_and_send_document
from ._local import upload_and_send_image as upload_and_send_image
from ._local import upload_and_send_sticker as upload_and_send_sticker
from ._local import upload_and_send_video as upload_and_send_video
from ._models import DownloadedMedia as DownloadedMedia
from ._models import MediaInfo as MediaInfo
from ._models import MediaSendResult as MediaSendResult
from ._models import UploadedFileHandle as UploadedFileHandle
from ._models import UploadedMedia as UploadedMedia
from ._models import UploadSession as UploadSession
from ._models import UploadSessionStatus as UploadSessionStatus
from ._operations import MEDIA_HOSTS as MEDIA_HOSTS
from ._operations import create_upload_session as create_upload_session
from ._operations import delete_media as delete_media
from ._operations import download_media as download_media
from ._operations import download_media_bytes as download_media_bytes
from ._operations import get_upload_session as get_upload_session
from ._operations import upload_file_to_session as upload_file_to_session
from ._operations import upload_media as upload_media

__all__ = [
    "BUNDLE_FIELDS",
    "HMAC_TAG_SIZE",
    "KIND_MAX_BYTES",
    "MAX_DOWNLOAD_BYTES",
    "MAX_SESSION_BYTES",
    "MAX_UPLOAD_BYTES",
    "MEDIA_HOSTS",
    "SUPPORTED_EXTENSIONS",
    "DownloadedMedia",
    "MediaCryptoError",
    "MediaError",
    "MediaHostError",
    "MediaInfo",
    "MediaIntegrityError",
    "MediaSendResult",
    "MediaValidationError",
    "UploadFile",
    "UploadSession",
    "UploadSessionStatus",
    "UploadedFileHandle",
    "UploadedMedia",
    "create_upload_session",
    "decrypt_encrypted_media",
    "decrypt_encrypted_media_async",
    "delete_media",
    "download_media",
    "download_media_bytes",
    "get_upload_session",
    "upload_and_send_audio",
    "upload_and_send_document",
    "upload_and_send_image",
    "upload_and_send_sticker",
    "upload_and_send_video",
    "upload_file_to_session",
    "upload_media",
]
