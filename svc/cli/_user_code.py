"""The user's code that ``svc serve`` and ``svc.asgi`` import by name (``--app``, outbox handler).

Each is imported like ``python -m`` does (the working folder first) by
``import_attribute``; an import error is named with its class and message.
"""

from __future__ import annotations

from typing import Any

__all__ = ["load_app", "load_outbox_handler"]


def load_outbox_handler(target: str) -> Any:
    """The async outbox handler ``target`` names; ``ServeError`` when it cannot serve as one."""
    import inspect

    from ._errors import ServeError
    from ._inputs import import_callable

    handler = import_callable(target, "--outbox-handler")
    call = getattr(handler, "__call__", None)  # noqa: B004 - an async __call__ counts too
    if not (inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(call)):
        raise ServeError("the --outbox-handler target must be an async function of one item.")
    return handler


def load_app(target: str, option: str = "--app") -> Any:
    """The facade ``target`` names (``--app`` / ``SVC_APP``): the object itself, or what a
    zero-argument factory of it returns; ``ServeError`` when it is neither.

    A facade is any object with ``dispatch(update)`` (``svc.webhook.DefaultFacade`` and
    its handlers); a class counts as a factory, not as a facade.
    """
    from ..webhook import WebhookFacade
    from ._errors import ServeError
    from ._inputs import import_attribute

    found = import_attribute(target, option, shape="module:attribute")
    if not isinstance(found, type) and isinstance(found, WebhookFacade):
        return found
    if not callable(found):
        raise ServeError(
            f"the {option} target is neither a facade (an object with dispatch(update)) "
            "nor a factory of one."
        )
    try:
        made = found()
    except Exception as exc:  # noqa: BLE001 - the user's factory: reported by class and message
        detail = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
        raise ServeError(f"the {option} factory failed when called ({detail}).") from None
    if isinstance(made, type) or not isinstance(made, WebhookFacade):
        raise ServeError(
            f"the {option} factory did not return a facade (an object with dispatch(update))."
        )
    return made
