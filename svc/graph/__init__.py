"""The Graph API layer: client, transports, errors, endpoint primitive and request helpers.

Nothing here does I/O beyond the injected ``httpx.AsyncBaseTransport``.
"""

# --- core: client, transports, errors
from ._client import DEFAULT_API_VERSION as DEFAULT_API_VERSION
from ._client import DEFAULT_BASE_URL as DEFAULT_BASE_URL
from ._client import GraphClient as GraphClient
from ._errors import GraphApiError as GraphApiError
from ._errors import GraphAuthError as GraphAuthError
from ._errors import GraphError as GraphError
from ._errors import GraphNetworkError as GraphNetworkError
from ._errors import GraphRateLimitError as GraphRateLimitError
from ._errors import GraphRequestValidationError as GraphRequestValidationError
from ._errors import GraphSerializationError as GraphSerializationError
from ._transports import DryRunTransport as DryRunTransport

# --- endpoint primitive, scoped clients, error registry (foundation)

# --- messages: builders and send helpers

# --- admin helpers: groups, business admin, calling, templates, flows, pagination
# isort: split
from ._flow_json import FLOW_JSON_LIMITS as FLOW_JSON_LIMITS
from ._flow_json import FlowJsonValidationError as FlowJsonValidationError
from ._flow_json import validate_flow_json as validate_flow_json

__all__ = [
    "DEFAULT_API_VERSION",
    "DEFAULT_BASE_URL",
    "FLOW_JSON_LIMITS",
    "DryRunTransport",
    "FlowJsonValidationError",
    "GraphApiError",
    "GraphAuthError",
    "GraphClient",
    "GraphError",
    "GraphNetworkError",
    "GraphRateLimitError",
    "GraphRequestValidationError",
    "GraphSerializationError",
    "validate_flow_json",
]
