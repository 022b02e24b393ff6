"""svc.flows declares its public surface and imports no I/O stack of its own."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import svc.flows

PACKAGE = Path(svc.flows.__file__).parent


def test_all_is_complete_and_unique() -> None:
    exported = {
        name
        for name, value in vars(svc.flows).items()
        if not name.startswith("_") and not inspect.ismodule(value)
    }
    assert set(svc.flows.__all__) == exported
    assert len(svc.flows.__all__) == len(set(svc.flows.__all__))


def test_every_private_module_public_name_is_reexported() -> None:
    for path in PACKAGE.glob("_*.py"):
        if path.name == "__init__.py":
            continue
        module = __import__(f"svc.flows.{path.stem}", fromlist=["__all__"])
        missing = set(module.__all__) - set(svc.flows.__all__)
        assert not missing, (path.name, missing)


def test_sans_io_no_environment_server_or_event_loop_imports() -> None:
    forbidden = {"os", "trio", "asyncio", "quart", "quart_trio", "hypercorn", "socket"}
    for path in PACKAGE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            else:
                continue
            assert not {n.split(".")[0] for n in names} & forbidden, path.name


def test_error_tree() -> None:
    from svc.flows import (
        FlowDecryptionError,
        FlowError,
        FlowHandlerError,
        FlowMediaError,
        FlowPayloadTooLargeError,
        FlowRequestError,
        FlowResponseError,
        FlowSignatureError,
        FlowTokenNoLongerValidError,
    )

    for leaf in (FlowPayloadTooLargeError, FlowSignatureError, FlowDecryptionError):
        assert issubclass(leaf, FlowRequestError)
    assert issubclass(FlowTokenNoLongerValidError, FlowHandlerError)
    for kind in (FlowRequestError, FlowHandlerError, FlowResponseError, FlowMediaError):
        assert issubclass(kind, FlowError)
    assert (
        FlowPayloadTooLargeError.http_status,
        FlowSignatureError.http_status,
        FlowDecryptionError.http_status,
        FlowTokenNoLongerValidError.http_status,
    ) == (413, 432, 421, 427)
    assert repr(FlowDecryptionError("invalid_iv")) == (
        "FlowDecryptionError(code='invalid_iv', http_status=421)"
    )
