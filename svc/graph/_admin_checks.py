"""Field validators and scoped-client seams shared by the admin helpers.

Validators raise ``GraphRequestValidationError`` naming the field (never
echoing the value) and return the value to put on the wire. The ``*Scoped``
bases are what each admin mixin needs from the scoped client it is mixed into:
the wrapped ``GraphClient`` (abstract) and the bound id, read back by name
(``phone_number_id``, ``waba_id``, ...).
"""

from __future__ import annotations

import abc
import inspect
import re
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any, ClassVar, Concatenate, Final, ParamSpec, TypeVar

import httpx

from svc._text import has_control

from ._client import GraphClient
from ._endpoint import Endpoint, Param
from ._errors import GraphRequestValidationError
from ._parse import Raw
from ._recipient import check_user, user_entry
from ._results import Page
from ._validate import check_bool as check_bool
from ._validate import check_choice as check_choice
from ._validate import check_label, check_match
from ._validate import check_phone_to as check_wa_id
from ._validate import check_text as _check_multiline_text

__all__ = [
    "FIELDS_PARAM",
    "MAX_CURSOR_LENGTH",
    "MAX_PAGE_LIMIT",
    "MESSAGING_PRODUCT",
    "PAGING_PARAMS",
    "AppScoped",
    "BusinessScoped",
    "GroupScoped",
    "PhoneScoped",
    "SolutionScoped",
    "WabaScoped",
    "check_bool",
    "check_choice",
    "check_cursor",
    "check_email",
    "check_fields",
    "check_id",
    "check_id_list",
    "check_items",
    "check_keys",
    "check_limit",
    "check_numeric_id",
    "check_text",
    "check_url",
    "check_wa_id",
    "listing",
    "listing_query",
    "opt_choice",
    "opt_text",
    "page_reader",
    "paging",
    "paging_query",
    "user_entries",
]

T = TypeVar("T")
P = ParamSpec("P")

MAX_CURSOR_LENGTH: Final = 4096
MAX_PAGE_LIMIT: Final = 1000
MAX_ID_LENGTH: Final = 256

PAGING_PARAMS: Final = {
    "limit": Param(in_="query"),
    "after": Param(in_="query"),
    "before": Param(in_="query"),
}
"""The cursor-paging query parameters of every paged list edge."""
FIELDS_PARAM: Final = {"fields": Param(in_="query")}
"""The ``fields`` query parameter of a read that lets the caller choose the fields."""
MESSAGING_PRODUCT: Final = {"messaging_product": "whatsapp"}
"""The product member that the phone-number and group edges want in every body."""

_FIELD = re.compile(r"[A-Za-z0-9_.{}():,]+")
_ID = re.compile(r"[A-Za-z0-9_.:=-]+")
_NUMERIC_ID = re.compile(r"[0-9]{1,32}")
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")


class _Scoped(abc.ABC):
    """What every admin mixin needs: ``client``, and the one id its scoped client binds."""

    _ID_FIELD: ClassVar[str]
    """The bound id's parameter name, the name its property reads it back by (``waba_id``)."""
    _scope_id: str
    """The bound id, as given."""

    @property
    @abc.abstractmethod
    def client(self) -> GraphClient:
        """The wrapped ``GraphClient``."""

    async def _on_node(
        self,
        endpoint: Endpoint,
        params: Mapping[str, object],
        body: object = None,
        headers: Mapping[str, str] | None = None,
    ) -> Any:
        """Call an endpoint on a node the bound object owns (template, flow, ...): no id is bound.

        ``None`` query values are dropped; every id in ``params`` goes through the path check.
        """
        return await endpoint.call(self.client, params=params, body=body, headers=headers)

    async def _on_scope(
        self,
        endpoint: Endpoint,
        params: Mapping[str, object] | None = None,
        body: object = None,
        headers: Mapping[str, str] | None = None,
    ) -> Any:
        """Call ``endpoint`` with the bound id as ``_ID_FIELD`` (``None`` query values dropped)."""
        bound = {self._ID_FIELD: self._scope_id, **(params or {})}
        return await self._on_node(endpoint, bound, body, headers)


class PhoneScoped(_Scoped):
    """What a phone-number admin mixin works with: ``client`` and the bound ``phone_number_id``."""

    _ID_FIELD = "phone_number_id"

    @property
    def phone_number_id(self) -> str:
        """The bound phone number id, as given."""
        return self._scope_id


class WabaScoped(_Scoped):
    """What a WABA admin mixin works with: ``client`` and the bound ``waba_id``."""

    _ID_FIELD = "waba_id"

    @property
    def waba_id(self) -> str:
        """The bound WhatsApp Business Account id, as given."""
        return self._scope_id


class BusinessScoped(_Scoped):
    """What a business-portfolio mixin works with: ``client`` and the bound ``business_id``."""

    _ID_FIELD = "business_id"

    @property
    def business_id(self) -> str:
        """The bound business portfolio id, as given."""
        return self._scope_id


class AppScoped(_Scoped):
    """What an app mixin works with: ``client`` and the bound ``app_id``."""

    _ID_FIELD = "app_id"

    @property
    def app_id(self) -> str:
        """The bound Meta app id, as given."""
        return self._scope_id


class SolutionScoped(_Scoped):
    """What a Multi-Partner Solution mixin works with: ``client`` and the bound ``solution_id``."""

    _ID_FIELD = "solution_id"

    @property
    def solution_id(self) -> str:
        """The bound Multi-Partner Solution id, as given."""
        return self._scope_id


class GroupScoped(_Scoped):
    """What a group admin mixin works with: ``client`` and the bound ``group_id``."""

    _ID_FIELD = "group_id"

    @property
    def group_id(self) -> str:
        """The bound group id, as given."""
        return self._scope_id


def check_text(
    value: object, *, field: str, max_length: int, multiline: bool = False
) -> str:
    """A non-blank string of at most ``max_length`` characters without control characters.

    ``multiline`` admits newline and tab (descriptions, messages).
    """
    if multiline:
        return _check_multiline_text(value, field, max_length=max_length)
    return check_label(value, field, max_length=max_length)


def opt_text(
    value: object, *, field: str, max_length: int, multiline: bool = False
) -> str | None:
    """``check_text`` for an optional argument (``None`` passes through)."""
    if value is None:
        return None
    return check_text(value, field=field, max_length=max_length, multiline=multiline)


def opt_choice(value: object, *, field: str, choices: Sequence[str]) -> str | None:
    """``check_choice`` for an optional argument (``None`` passes through)."""
    return None if value is None else check_choice(value, field=field, choices=choices)


def check_email(value: object, *, field: str = "email", max_length: int = 128) -> str:
    """An email address (``local@domain.tld``, no whitespace) of at most ``max_length``."""
    text = check_text(value, field=field, max_length=max_length)
    if not _EMAIL.fullmatch(text):
        raise GraphRequestValidationError(f"{field} must be an email address", field=field)
    return text


def check_id(value: object, *, field: str) -> str:
    """An opaque platform id: letters, digits and ``_.:=-``, at most 256 characters.

    Used for ids that travel in a body or query; ids in the path go through the
    endpoint primitive's path-segment check as well.
    """
    if not isinstance(value, str) or not _ID.fullmatch(value) or len(value) > MAX_ID_LENGTH:
        raise GraphRequestValidationError(
            f"{field} must be an id of letters, digits and _.:=- (at most {MAX_ID_LENGTH})",
            field=field,
        )
    return value


def check_numeric_id(value: object, *, field: str) -> str:
    """A platform object id (app, business, user, solution, ...) in a body or query: digits."""
    return check_match(value, _NUMERIC_ID, field, f"{field} must be a numeric id")


def check_id_list(
    values: object,
    *,
    field: str,
    min_items: int,
    max_items: int | None,
    check_item: Callable[..., str],
) -> list[str]:
    """A list (or tuple) of ``min_items..max_items`` distinct ids, each ``check_item``-ed."""
    if isinstance(values, str | bytes) or not isinstance(values, Sequence):
        raise GraphRequestValidationError(f"{field} must be a list", field=field)
    if len(values) < min_items or (max_items is not None and len(values) > max_items):
        bound = f"{min_items}..{max_items}" if max_items is not None else f"at least {min_items}"
        raise GraphRequestValidationError(f"{field} must hold {bound} items", field=field)
    checked = [check_item(item, field=field) for item in values]
    if len(set(checked)) != len(checked):
        raise GraphRequestValidationError(f"{field} must not repeat an item", field=field)
    return checked


def check_items(
    value: object, *, field: str, max_items: int, of: str, items: str, allow_empty: bool = True
) -> Sequence[Any]:
    """A list (or tuple) of at most ``max_items``; refused as "a list of ``of``" or over the cap."""
    if (
        isinstance(value, str | bytes)
        or not isinstance(value, Sequence)
        or (not allow_empty and not value)
    ):
        raise GraphRequestValidationError(f"{field} must be a list of {of}", field=field)
    if len(value) > max_items:
        raise GraphRequestValidationError(f"{field} holds at most {max_items} {items}", field=field)
    return value


def user_entries(
    users: object, *, field: str, max_items: int, phone_key: str
) -> list[dict[str, str]]:
    """1..``max_items`` distinct users, each a phone (under ``phone_key``) or a BSUID
    (under ``recipient``): the user list of a block or a group participants call."""
    ids = check_id_list(
        users, field=field, min_items=1, max_items=max_items, check_item=check_user
    )
    return [user_entry(user, phone_key=phone_key) for user in ids]


def check_limit(value: object, *, field: str = "limit") -> int | None:
    """An optional page size: an integer 1..1000."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_PAGE_LIMIT:
        raise GraphRequestValidationError(
            f"{field} must be an integer 1..{MAX_PAGE_LIMIT}", field=field
        )
    return value


def paging_query(limit: object, after: object, before: object) -> dict[str, object]:
    """The checked ``limit``/``after``/``before`` of one page request (``None`` left out)."""
    return {
        "limit": check_limit(limit),
        "after": check_cursor(after, field="after"),
        "before": check_cursor(before, field="before"),
    }


def listing_query(
    fields: object, limit: object, after: object, before: object
) -> dict[str, object]:
    """The checked ``fields`` and ``paging_query`` of one page request of a list edge."""
    return {"fields": check_fields(fields), **paging_query(limit, after, before)}


def paging(
    *, limit: int | None = None, after: str | None = None, before: str | None = None
) -> dict[str, object]:
    """The keywords of a list edge that takes only the cursors, checked (``paging_query``)."""
    return paging_query(limit, after, before)


def listing(
    *,
    fields: str | list[str] | None = None,
    limit: int | None = None,
    after: str | None = None,
    before: str | None = None,
) -> dict[str, object]:
    """The keywords of a list edge that takes ``fields`` and the cursors, checked."""
    return listing_query(fields, limit, after, before)


def page_reader(
    endpoint: Endpoint,
    keywords: Callable[P, Mapping[str, object]],
    parse: Callable[[Raw], T],
    *,
    what: str,
    note: str = ".",
    nested_key: str | None = None,
) -> Callable[Concatenate[_Scoped, P], Coroutine[Any, Any, Page[T]]]:
    """The list helper of a list edge below the bound id: the keywords of ``keywords``, one page.

    Like ``_send.sends`` it takes exactly those keywords, checked by ``keywords``; each item
    is read by ``parse``. Its docstring is the endpoint's method and path, then ``note``.
    """

    async def read(self: _Scoped, /, *args: P.args, **kwargs: P.kwargs) -> Page[T]:
        raw = await self._on_scope(endpoint, keywords(*args, **kwargs))
        return Page.from_api(raw, parse, what=what, nested_key=nested_key)

    signature = inspect.signature(keywords)
    self_parameter = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    read.__doc__ = f"``{endpoint.method} {endpoint.path_template}``{note}"
    read.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[self_parameter, *signature.parameters.values()], return_annotation="Page"
    )
    return read


def check_cursor(value: object, *, field: str) -> str | None:
    """An optional paging cursor: printable, no whitespace, at most 4096 characters."""
    if value is None:
        return None
    if (
        not isinstance(value, str)
        or not value
        or len(value) > MAX_CURSOR_LENGTH
        or any(ch.isspace() for ch in value)
        or has_control(value)
    ):
        raise GraphRequestValidationError(
            f"{field} must be a paging cursor (no whitespace, at most {MAX_CURSOR_LENGTH})",
            field=field,
        )
    return value


def check_fields(value: object, *, field: str = "fields") -> str | None:
    """Optional Graph ``fields``: a comma-separated string or a list of field names."""
    if value is None:
        return None
    names: Sequence[object]
    if isinstance(value, str):
        names = value.split(",")
    elif isinstance(value, Sequence) and not isinstance(value, bytes):
        names = value
    else:
        raise GraphRequestValidationError(
            f"{field} must be a comma-separated string or a list of names", field=field
        )
    checked: list[str] = []
    for name in names:
        if not isinstance(name, str) or not _FIELD.fullmatch(name) or len(name) > 256:
            raise GraphRequestValidationError(
                f"{field} must hold field names of letters, digits and _.{{}}():",
                field=field,
            )
        checked.append(name)
    if not checked:
        raise GraphRequestValidationError(f"{field} must name at least one field", field=field)
    return ",".join(checked)


def check_url(value: object, *, field: str, max_length: int = 2048) -> str:
    """An absolute http(s) URL without credentials or control characters."""
    text = check_text(value, field=field, max_length=max_length)
    try:
        url = httpx.URL(text)
    except httpx.InvalidURL:
        raise GraphRequestValidationError(f"{field} must be an http(s) URL", field=field) from None
    # raw_host, never .host: decoding a malformed "xn--" label raises idna's own error.
    if url.scheme not in ("http", "https") or not url.raw_host or url.userinfo or " " in text:
        raise GraphRequestValidationError(f"{field} must be an http(s) URL", field=field)
    return text


def check_keys(
    value: object, *, field: str, allowed: Sequence[str], required: Sequence[str] = ()
) -> Mapping[str, Any]:
    """A mapping with string keys drawn from ``allowed`` and every key of ``required``."""
    if not isinstance(value, Mapping):
        raise GraphRequestValidationError(f"{field} must be a mapping", field=field)
    unknown = sorted(str(key) for key in value if key not in allowed)
    if unknown:
        raise GraphRequestValidationError(
            f"{field} has unknown keys: {', '.join(unknown)}", field=field
        )
    missing = [key for key in required if value.get(key) is None]
    if missing:
        raise GraphRequestValidationError(
            f"{field} needs {', '.join(missing)}", field=field
        )
    return value
