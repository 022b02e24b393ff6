"""``svc dev``: talk to your bot on a local page, with no platform in the loop.

The page plays the users; each action becomes a signed delivery through the app's real
webhook path, every request the bot makes is captured and drawn, and the handler
runtime's steps are shown beside the chat (``docs/dev.md``). Loopback only, behind a
token, and never mounted by ``svc serve``.
"""

from svc.graph import FAILURES as FAILURES
from svc.graph import CapturedRequest as CapturedRequest
from svc.graph import CapturingTransport as CapturingTransport
from svc.graph import Failure as Failure
from svc.webhook import DevActionError as DevActionError
from svc.webhook import DevUser as DevUser

from ._app import mount_dev as mount_dev
from ._media import MAX_UPLOAD as MAX_UPLOAD
from ._media import DevTransport as DevTransport
from ._media import DevUploads as DevUploads
from ._media import Upload as Upload
from ._render import describe as describe
from ._render import terminal_line as terminal_line
from ._session import DevSession as DevSession

__all__ = [
    "FAILURES",
    "MAX_UPLOAD",
    "CapturedRequest",
    "CapturingTransport",
    "DevActionError",
    "DevSession",
    "DevTransport",
    "DevUploads",
    "DevUser",
    "Failure",
    "Upload",
    "describe",
    "mount_dev",
    "terminal_line",
]
