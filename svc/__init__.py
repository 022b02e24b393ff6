"""svc: a service and library for the WhatsApp Cloud API.

The package is layered: ``svc.graph`` (upstream requests) -> ``svc.media`` ->
``svc.store`` -> ``svc.webhook`` -> ``svc.http`` -> ``svc.cli``. Each layer
imports only the ones below it; ``svc.crypto`` is the one module that calls
the compiled cryptography primitives.
"""

from ._version import __version__ as __version__

__all__ = ["__version__"]
