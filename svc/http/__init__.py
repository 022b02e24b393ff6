"""The HTTP service: ``create_app(...)`` builds the ASGI app (Quart-Trio) with the spec's routes.

It stands on the lower layers: ``svc.webhook`` checks and normalizes
deliveries, ``svc.store`` keeps claims and the message projection,
``svc.graph`` builds and sends the upstream requests. See ``docs/http.md``.
"""

from typing import TYPE_CHECKING, Any

from svc.runtime import HandlerOptions as HandlerOptions

from ._broadcast_sender import BroadcastOptions as BroadcastOptions
from ._errors import CONSTRUCTION_CODES as CONSTRUCTION_CODES
from ._errors import CURSOR_REFUSED as CURSOR_REFUSED
from ._errors import HttpError as HttpError
from ._errors import ServiceError as ServiceError
from ._options import BodyLimits as BodyLimits
from ._options import FlowsEndpoint as FlowsEndpoint
from ._options import LogOptions as LogOptions
from ._profile import DEFAULT_API_PREFIX as DEFAULT_API_PREFIX
from ._profile import DEFAULT_MAX_BODY_BYTES as DEFAULT_MAX_BODY_BYTES
from ._profile import DEFAULT_WEBHOOK_PATH as DEFAULT_WEBHOOK_PATH
from ._profile import MAX_BODY_BYTES_LIMIT as MAX_BODY_BYTES_LIMIT
from ._profile import MAX_PHONE_NUMBERS as MAX_PHONE_NUMBERS
from ._profile import MAX_SECRET_LENGTH as MAX_SECRET_LENGTH
from ._profile import BusinessNumber as BusinessNumber
from ._profile import Profile as Profile
from ._profile import ServiceSecrets as ServiceSecrets
from ._profile import check_service_path as check_service_path
from ._protocols import CryptoProvider as CryptoProvider
from ._protocols import TelemetrySink as TelemetrySink
from ._routes import Route as Route
from ._routes import route_inventory as route_inventory

if TYPE_CHECKING:
    from ._app import SERVICE_NAME as SERVICE_NAME
    from ._app import create_app as create_app
    from ._app import openapi_document as openapi_document
    from ._projection import record_json as message_json

_APP_NAMES = frozenset({"SERVICE_NAME", "create_app", "openapi_document"})


def __getattr__(name: str) -> Any:
    """Load the app module (Quart, quart-schema) only when the app itself is asked for.

    ``Profile``, ``ServiceSecrets`` and the route inventory stay cheap to import,
    so offline CLI commands (``svc config validate``) start fast.
    """
    if name in _APP_NAMES:
        from . import _app

        return getattr(_app, name)
    if name == "message_json":
        from ._projection import record_json

        return record_json
    raise AttributeError(f"module 'svc.http' has no attribute {name!r}")


__all__ = [
    "CONSTRUCTION_CODES",
    "CURSOR_REFUSED",
    "DEFAULT_API_PREFIX",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_WEBHOOK_PATH",
    "MAX_BODY_BYTES_LIMIT",
    "MAX_PHONE_NUMBERS",
    "MAX_SECRET_LENGTH",
    "SERVICE_NAME",
    "BodyLimits",
    "BroadcastOptions",
    "BusinessNumber",
    "CryptoProvider",
    "FlowsEndpoint",
    "HandlerOptions",
    "HttpError",
    "LogOptions",
    "Profile",
    "Route",
    "ServiceError",
    "ServiceSecrets",
    "TelemetrySink",
    "check_service_path",
    "create_app",
    "message_json",
    "openapi_document",
    "route_inventory",
]
