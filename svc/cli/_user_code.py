"""The user's code that ``svc serve`` and ``svc.asgi`` import by name (``--app``, outbox handler).

Each is imported like ``python -m`` does (the working folder first) by
``import_attribute``; every refusal names the option, the target and the cause
(an exception by its class and message).
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["load_app", "load_outbox_handler"]

FACADE: Final = "a facade (an object with handles(update) and run(context))"


def load_outbox_handler(target: str) -> Any:
    """The async outbox handler ``target`` names; ``ServeError`` when it cannot serve as one."""
    import inspect

    from ._inputs import import_callable, refuse_target

    option = "--outbox-handler"
    handler = import_callable(target, option)
    call = getattr(handler, "__call__", None)  # noqa: B004 - an async __call__ counts too
    if not (inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(call)):
        said = "the target must be an async function of one item."
        raise refuse_target(option, target, said)
    return handler


def load_app(target: str, option: str = "--app") -> Any:
    """The facade ``target`` names (``--app`` / ``SVC_APP``): the object itself, or what a
    zero-argument factory of it returns; ``ServeError`` naming the target and the cause
    when it is neither.

    A facade is any ``WebhookFacade`` (``handles(update)`` and ``run(context)``:
    ``svc.webhook.DefaultFacade`` and its handlers); a class counts as a factory.
    """
    from ..webhook import WebhookFacade
    from ._errors import describe_cause
    from ._inputs import import_attribute, refuse_target

    found = import_attribute(target, option, shape="module:attribute")
    if not isinstance(found, type) and isinstance(found, WebhookFacade):
        return found
    if not callable(found):
        said = f"the target is neither {FACADE} nor a factory of one (type {_type(found)})."
        raise refuse_target(option, target, said)
    try:
        made = found()
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - the user's factory, by its class
        said = f"the factory failed when called: {describe_cause(exc)}"
        raise refuse_target(option, target, said) from None
    if isinstance(made, type) or not isinstance(made, WebhookFacade):
        said = f"the factory returned a value of type {_type(made)}, not {FACADE}."
        raise refuse_target(option, target, said)
    return made


def _type(value: object) -> str:
    return type(value).__name__
