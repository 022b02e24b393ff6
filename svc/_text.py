"""Character rules every layer shares: which control characters a value may not hold.

One rule, one definition (STYLE.md habit 12): each variant below exists for a
reason stated in its docstring, and every module imports the predicate
instead of compiling its own character class. The variants:

- ``has_ascii_control``: C0 and DEL, what breaks a byte-level line, URL or header.
- ``has_control``: Unicode ``Cc`` (C0, DEL and C1), for text a person or a log reads.
- ``has_text_control``: ``Cc`` except tab and newline, for multi-line message text.
- ``has_sdp_control``: C0 and DEL except tab, CR and LF, for SDP bodies.
- ``has_ascii_control_or_space``: C0, space and DEL, for a URL typed as one word.
- ``breaks_url_path`` / ``breaks_path_segment``: what ends or escapes a URL path
  or one path segment.
- ``has_header_break``: CR, LF and NUL, what splits an HTTP header or query line.
- ``has_surrogate``: a surrogate code point, which UTF-8 (so no database or wire) cannot carry.
- ``is_visible_ascii`` / ``is_printable_ascii``: ASCII-only tokens, with or without space.
- ``is_printable_label``: printable (``str.isprintable``) and not blank, for ids read upstream.
- ``decimal_int``: the integer a number sent as text spells (ASCII digits, bounded).

A leaf module: it imports nothing from svc, so every layer may use it.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = [
    "breaks_path_segment",
    "breaks_url_path",
    "decimal_int",
    "has_ascii_control",
    "has_ascii_control_or_space",
    "has_control",
    "has_header_break",
    "has_sdp_control",
    "has_surrogate",
    "has_text_control",
    "is_printable_ascii",
    "is_printable_label",
    "is_visible_ascii",
]

_ASCII_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f]")
_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_TEXT_CONTROL: Final = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_SDP_CONTROL: Final = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_ASCII_CONTROL_OR_SPACE: Final = re.compile(r"[\x00-\x20\x7f]")
_URL_PATH_BREAK: Final = re.compile(r"[\x00-\x20\x7f?#\\]")
_PATH_SEGMENT_BREAK: Final = re.compile(r"[/\\?#\x00-\x1f\x7f]")
_HEADER_BREAK: Final = re.compile(r"[\r\n\x00]")
_SURROGATE: Final = re.compile(r"[\ud800-\udfff]")
_VISIBLE_ASCII: Final = re.compile(r"[\x21-\x7e]+")
_PRINTABLE_ASCII: Final = re.compile(r"[\x20-\x7e]*")


def has_ascii_control(value: str) -> bool:
    """True when ``value`` holds a C0 control (U+0000..U+001F) or DEL (U+007F).

    For values that go onto the wire byte for byte (URLs, header values, file
    paths, SQL identifiers): those characters end a line or a string there;
    C1 code points are ordinary multi-byte UTF-8 at that level.
    """
    return _ASCII_CONTROL.search(value) is not None


def has_control(value: str) -> bool:
    """True when ``value`` holds a Unicode ``Cc`` character: C0, DEL or C1 (U+0080..U+009F).

    For text a person, a terminal or a log line reads (labels, ids, file
    names): C1 characters are invisible and some terminals act on them
    (U+009B is a control sequence introducer).
    """
    return _CONTROL.search(value) is not None


def has_text_control(value: str) -> bool:
    """True when ``value`` holds a ``Cc`` character other than tab (U+0009) and newline (U+000A).

    For multi-line message text: newline and tab are content there, CR and
    every other control character are not.
    """
    return _TEXT_CONTROL.search(value) is not None


def has_sdp_control(value: str) -> bool:
    """True when ``value`` holds a C0 control or DEL other than tab, CR and LF.

    For SDP bodies (RFC 8866): lines end in CRLF and may hold tabs, and C1
    code points are ordinary UTF-8 in an SDP text field.
    """
    return _SDP_CONTROL.search(value) is not None


def has_ascii_control_or_space(value: str) -> bool:
    """True when ``value`` holds a C0 control, a space (U+0020) or DEL.

    For a URL given as one word (command-line options, config): a space there
    means two words or a pasted line, never part of the URL.
    """
    return _ASCII_CONTROL_OR_SPACE.search(value) is not None


def breaks_url_path(value: str) -> bool:
    """True when ``value`` holds a character that ends or escapes a URL path.

    That is a C0 control, space, DEL, ``?`` (query), ``#`` (fragment) or
    ``\\`` (a separator to some servers); ``/`` stays allowed between segments.
    """
    return _URL_PATH_BREAK.search(value) is not None


def breaks_path_segment(value: str) -> bool:
    """True when ``value`` would not stay one URL path segment.

    That is a separator (``/``, ``\\``), ``?``, ``#``, a C0 control or DEL:
    a caller's id with one of them could address another resource.
    """
    return _PATH_SEGMENT_BREAK.search(value) is not None


def has_header_break(value: str) -> bool:
    """True when ``value`` holds CR, LF or NUL: what splits an HTTP header or query line."""
    return _HEADER_BREAK.search(value) is not None


def is_visible_ascii(value: str) -> bool:
    """True when ``value`` is non-empty and every character is visible ASCII (U+0021..U+007E).

    For tokens and secrets sent in headers: no space, no control, no
    character a copy-paste could have changed into a look-alike.
    """
    return _VISIBLE_ASCII.fullmatch(value) is not None


def is_printable_ascii(value: str) -> bool:
    """True when every character of ``value`` is printable ASCII, space included (U+0020..U+007E).

    For opaque cursors and header-borne ids echoed back verbatim; the empty
    string qualifies, callers that need a value check that themselves.
    """
    return _PRINTABLE_ASCII.fullmatch(value) is not None


def has_surrogate(value: str) -> bool:
    """True when ``value`` holds a surrogate code point (U+D800..U+DFFF).

    A Python string may hold one alone (a JSON ``\\ud800`` escape decodes to it);
    ``str.encode("utf-8")`` refuses it, so text bound for a database or a wire cannot.
    """
    return _SURROGATE.search(value) is not None


def is_printable_label(value: str) -> bool:
    """True when ``value`` is non-empty, printable (``str.isprintable``) and not all whitespace.

    For ids and names read from an upstream answer: ``str.isprintable`` also
    refuses format, separator, private-use and unassigned characters, which
    no id holds.
    """
    return value.isprintable() and bool(value.strip())


def decimal_int(value: str, *, signed: bool = False, max_digits: int = 18) -> int | None:
    """The integer ``value`` spells in ASCII digits (a leading ``-`` when ``signed``), at most
    ``max_digits`` of them; None for any other text.

    For numbers the platform sends as text: ``str.isdigit`` also holds for ``²`` and other
    digits ``int`` refuses (or reads: ``٣``), and ``int`` refuses past 4,300 digits.
    """
    digits = value[1:] if signed and value.startswith("-") else value
    if not 0 < len(digits) <= max_digits or not (digits.isascii() and digits.isdigit()):
        return None
    return int(value)
