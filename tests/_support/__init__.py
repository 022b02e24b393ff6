"""Test support shared by every suite: one signer, one fake Graph server, one serve wrapper.

- ``signing``: ``sign(body=..., secret=...)``, the webhook signature header value.
- ``capture``: ``Captured``, the texts a test saw, scanned for secret values.
- ``doc_examples``: ``doc_example(page, prefix, name)``, a marked python block of a docs page, run.
- ``serve``: ``run_svc`` and ``start_serve``/``ServeProcess``, ``python -m svc`` as a child.
- ``live_config``: ``make_project``, a live config and env file on disk.
- ``graph_server``: ``FakeGraph``, a recording Graph API on a local socket.
- ``graph_transport``: ``FakeGraphTransport``, the same at the transport, for an in-process app.
- ``graph_limits``: ``GraphLimits``, the platform's throughput and pair limits for a fake Graph.
- ``wire``: ``H2Client`` and raw frames, for HTTP/2 and HTTP/1.1 a polite client never sends.
- ``postgres``: ``PrivatePostgres``, a server a test may stop, ``free_port``, and the schemas
  of a run on the shared server (``new_run_prefix``, ``with_search_path``, ``drop_run_schemas``).
"""

from .capture import Captured as Captured
from .doc_examples import doc_example as doc_example
from .graph_limits import GraphLimits as GraphLimits
from .graph_server import FakeGraph as FakeGraph
from .graph_server import GraphRequest as GraphRequest
from .graph_transport import FakeGraphTransport as FakeGraphTransport
from .live_config import PHONE_ID as PHONE_ID
from .live_config import WABA_ID as WABA_ID
from .live_config import Project as Project
from .live_config import make_project as make_project
from .postgres import PrivatePostgres as PrivatePostgres
from .postgres import drop_run_schemas as drop_run_schemas
from .postgres import free_port as free_port
from .postgres import new_run_prefix as new_run_prefix
from .postgres import with_search_path as with_search_path
from .serve import DRY_RUN_LINE as DRY_RUN_LINE
from .serve import SERVING as SERVING
from .serve import START_TIMEOUT as START_TIMEOUT
from .serve import ServeProcess as ServeProcess
from .serve import child_env as child_env
from .serve import run_svc as run_svc
from .serve import start_serve as start_serve
from .signing import sign as sign
from .wire import WEBSOCKET_HEAD as WEBSOCKET_HEAD
from .wire import H2Client as H2Client
from .wire import data_after_answer as data_after_answer
from .wire import frame as frame

__all__ = [
    "DRY_RUN_LINE",
    "PHONE_ID",
    "SERVING",
    "START_TIMEOUT",
    "WABA_ID",
    "WEBSOCKET_HEAD",
    "Captured",
    "FakeGraph",
    "FakeGraphTransport",
    "GraphLimits",
    "GraphRequest",
    "H2Client",
    "PrivatePostgres",
    "Project",
    "ServeProcess",
    "child_env",
    "data_after_answer",
    "doc_example",
    "drop_run_schemas",
    "frame",
    "free_port",
    "make_project",
    "new_run_prefix",
    "run_svc",
    "sign",
    "start_serve",
    "with_search_path",
]
