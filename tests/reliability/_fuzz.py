"""The protocol fuzz test's attacks: one function per family, each one connection, seeded.

``attack(number, seed, address, bearer)`` picks a family and its parameters
from ``random.Random(seed * 1_000_003 + number)``, so a run is the same
whatever the thread scheduling, and returns what the server answered (the
statuses it could read) for the caller to check. Every socket read has a short
deadline; the client closes the connection when it is done, never waiting for
the server's timeouts.

Families: an HTTP/2 frame of every type (DATA..CONTINUATION, extension and
unknown types) on a stream in every state (idle, open, half-closed either
way, answered, closed by END_STREAM or by RST_STREAM, and stream 0), with
payloads well formed, empty, random, truncated or over-long; DATA after an
answer; floods (RST_STREAM rapid reset, SETTINGS, PING, WINDOW_UPDATE,
CONTINUATION, GOAWAY then frames); WebSocket and h2c upgrades with trailing
bytes; truncated request heads; pipelined requests with garbage between them.
"""

from __future__ import annotations

import contextlib
import random
import re
import socket
import struct
from collections.abc import Callable

import h2.exceptions
import hpack

from tests._support import WEBSOCKET_HEAD, H2Client, frame

Address = tuple[str, int]
Outcome = tuple[str, list[int], list[tuple[str, int]]]
"""(family, statuses read, (stream state, frame type) of each fuzzed HTTP/2 frame sent)."""

TIMEOUT = 2.0
FRAME_TYPES = (*range(0x0A), 0x0A, 0x0C, 0x10, 0x42, 0xFF)
"""DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, WINDOW_UPDATE,
CONTINUATION, then ALTSVC, ORIGIN, PRIORITY_UPDATE and two unknown types."""
STATES = (
    "connection",
    "idle",
    "idle-even",
    "open",
    "half-closed-remote",
    "answered",
    "closed-end",
    "closed-reset",
)
PATHS = ("/healthz", "/webhooks/whatsapp", "/api/messages/text", "/nope", "/metrics", "/readyz")
_STATUS = re.compile(rb"HTTP/1\.[01] (\d{3})")


def _h1_statuses(answer: bytes) -> list[int]:
    return [int(found) for found in _STATUS.findall(answer)]


def _read_some(sock: socket.socket, seconds: float) -> bytes:
    """What the server sends within ``seconds`` or until it closes."""
    sock.settimeout(seconds)
    answer = b""
    with contextlib.suppress(OSError):
        while chunk := sock.recv(65536):
            answer += chunk
            if len(answer) > 1 << 20:
                break
    return answer


def _raw(address: Address, data: bytes, *, read: float = 0.2) -> list[int]:
    with socket.create_connection(address, timeout=TIMEOUT) as sock:
        with contextlib.suppress(OSError):
            sock.sendall(data)
        return _h1_statuses(_read_some(sock, read))


def _headers_block(rng: random.Random, path: str) -> bytes:
    headers = [
        (":method", rng.choice(["GET", "POST", "CONNECT", "PUT"])),
        (":path", path),
        (":scheme", "http"),
        (":authority", "127.0.0.1"),
    ]
    if rng.random() < 0.3:
        headers.append(("content-length", str(rng.choice([0, 10, 2_000_000]))))
    if rng.random() < 0.2:
        headers.append((":protocol", "websocket"))
    if rng.random() < 0.1:
        headers.append(("x-big", "a" * rng.choice([100, 70_000])))
    return bytes(hpack.Encoder().encode(headers))


def _payload(rng: random.Random, kind: int, stream_id: int) -> bytes:
    """A payload for a frame of ``kind``: well formed for it, empty, random or odd-sized."""
    shape = rng.random()
    if shape < 0.15:
        return b""
    if shape < 0.35:
        return rng.randbytes(rng.choice([1, 3, 4, 5, 6, 7, 8, 9, 13, 64, 300]))
    if kind == 0x0:
        return rng.randbytes(rng.choice([1, 100, 16_000]))
    if kind in (0x1, 0x9):
        return _headers_block(rng, rng.choice(PATHS))
    if kind == 0x2:
        return struct.pack(">IB", rng.choice([0, stream_id, 1, 0x80000001]), rng.randrange(256))
    if kind == 0x3:
        return struct.pack(">I", rng.choice([0, 1, 2, 8, 0xFFFFFFFF]))
    if kind == 0x4:
        return b"".join(
            struct.pack(">HI", rng.randrange(0, 10), rng.choice([0, 1, 2**31, 2**32 - 1]))
            for _ in range(rng.randrange(1, 6))
        )
    if kind == 0x5:
        return struct.pack(">I", rng.choice([2, 4, stream_id])) + _headers_block(rng, "/")
    if kind == 0x6:
        return rng.randbytes(8)
    if kind == 0x7:
        return struct.pack(">II", rng.choice([0, 1, 2**31 - 1]), rng.randrange(14)) + b"bye"
    if kind == 0x8:
        return struct.pack(">I", rng.choice([0, 1, 2**31 - 1, 2**32 - 1]))
    return rng.randbytes(rng.randrange(0, 40))


def _into_state(client: H2Client, state: str, bearer: str) -> int:
    """Put a stream in ``state``; returns its id (0 for the connection itself)."""
    auth = (b"authorization", b"Bearer " + bearer.encode())
    if state == "connection":
        return 0
    if state == "idle":
        return client.conn.get_next_available_stream_id() + 2
    if state == "idle-even":
        return 2
    if state == "open":
        return client.request("POST", "/api/messages/text", [auth, (b"content-length", b"100")])
    if state == "half-closed-remote":
        return client.request("GET", "/healthz", end_stream=True)
    if state == "answered":
        stream = client.request("POST", "/nope", [(b"content-length", b"100")])
        client.data(stream, b"{")
        with contextlib.suppress(AssertionError):
            client.wait_ended(stream)
        return stream
    if state == "closed-end":
        stream = client.request("GET", "/healthz", end_stream=True)
        with contextlib.suppress(AssertionError):
            client.wait_ended(stream)
        return stream
    stream = client.request("POST", "/api/messages/text", [auth, (b"content-length", b"10")])
    client.conn.reset_stream(stream)
    client.flush()
    return stream


def _h2_statuses(client: H2Client) -> list[int]:
    import h2.events

    return [
        int(value)
        for event in client.events
        if isinstance(event, h2.events.ResponseReceived)
        for name, value in event.headers
        if name == b":status"
    ]


def _h2(
    address: Address,
    rng: random.Random,
    family: str,
    bearer: str,
    sent: list[tuple[str, int]],
) -> list[int]:
    client = H2Client(*address, upgrade=rng.random() < 0.25, timeout=TIMEOUT)
    try:
        if family == "h2-frame":
            state = rng.choice(STATES)
            stream = _into_state(client, state, bearer)
            for _ in range(rng.randrange(1, 4)):
                kind = rng.choice(FRAME_TYPES)
                sent.append((state, kind))
                data = frame(kind, rng.randrange(256), stream, _payload(rng, kind, stream))
                if rng.random() < 0.1:
                    data = data[: rng.randrange(1, len(data))]  # truncated: then closed
                client.send_raw(data)
        elif family == "data-after-answer":
            stream = _into_state(client, "answered", bearer)
            for _ in range(rng.randrange(1, 20)):
                client.data(stream, rng.randbytes(rng.choice([1, 1000, 16_000])))
        else:
            _flood(client, rng, family, bearer)
        client.pump(0.1)
        return _h2_statuses(client)
    finally:
        client.close()


def _flood(client: H2Client, rng: random.Random, family: str, bearer: str) -> None:
    count = rng.randrange(50, 200)
    if family == "flood-rst":
        for _ in range(count):
            stream = client.request("GET", "/healthz")
            client.send_raw(frame(0x3, 0, stream, struct.pack(">I", 8)))
    elif family == "flood-settings":
        client.send_raw(frame(0x4, 0, 0, struct.pack(">HI", 0x3, 100)) * count * 5)
    elif family == "flood-ping":
        client.send_raw(frame(0x6, 0, 0, b"12345678") * count * 5)
    elif family == "flood-window":
        stream = _into_state(client, "open", bearer)
        client.send_raw(frame(0x8, 0, stream, struct.pack(">I", 2**30)) * count)
    elif family == "flood-continuation":
        stream = client.conn.get_next_available_stream_id()
        block = _headers_block(rng, "/healthz")
        client.send_raw(frame(0x1, 0, stream, block[:5]))
        client.send_raw(frame(0x9, 0, stream, b"\x40\x01a\x01b" * 200) * count)
    else:  # flood-goaway: GOAWAY, then frames and requests as if nothing happened
        client.send_raw(frame(0x7, 0, 0, struct.pack(">II", 0, 0)))
        for _ in range(count // 10):
            client.request("GET", "/healthz", end_stream=True)
        client.send_raw(frame(0x7, 0, 0, struct.pack(">II", 2**31 - 1, 2)) * 10)


def _websocket(address: Address, rng: random.Random) -> list[int]:
    path = rng.choice(PATHS).encode()
    trailing = rng.choice([b"x", b"\x81\x05hello", rng.randbytes(rng.randrange(1, 2000))])
    return _raw(address, WEBSOCKET_HEAD % path + trailing)


def _h2c_upgrade(address: Address, rng: random.Random) -> list[int]:
    settings = rng.choice([b"AAMAAABkAARAAAAAAAIAAAAA", b"", b"!!!", b"AAMAAABkAAQAAP__A"])
    body = rng.choice([b"", b"Content-Length: 3\r\n"])
    head = (
        b"GET " + rng.choice(PATHS).encode() + b" HTTP/1.1\r\nHost: x\r\n"
        b"Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
        b"HTTP2-Settings: " + settings + b"\r\n" + body + b"\r\n"
    )
    trailing = rng.choice(
        [b"abc", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + rng.randbytes(20), rng.randbytes(50)]
    )
    return _raw(address, head + trailing)


def _request(rng: random.Random, bearer: str) -> bytes:
    path = rng.choice(PATHS).encode()
    if rng.random() < 0.5:
        return b"GET " + path + b" HTTP/1.1\r\nHost: x\r\n\r\n"
    body = b'{"to":"15551234567","text":"x"}'
    return (
        b"POST " + path + b" HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Authorization: Bearer " + bearer.encode() + b"\r\n"
        b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    )


def _truncated_head(address: Address, rng: random.Random, bearer: str) -> list[int]:
    whole = _request(rng, bearer)
    return _raw(address, whole[: rng.randrange(1, len(whole))], read=0.05)


def _pipelined(address: Address, rng: random.Random, bearer: str) -> list[int]:
    parts = []
    for _ in range(rng.randrange(2, 6)):
        parts.append(_request(rng, bearer))
        if rng.random() < 0.6:
            parts.append(
                rng.choice(
                    [
                        rng.randbytes(rng.randrange(1, 200)),
                        b"\r\n\r\n",
                        b"GET / HTTP/9.9\r\n\r\n",
                        b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                        b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
                    ]
                )
            )
    return _raw(address, b"".join(parts))


FAMILIES: tuple[tuple[str, float], ...] = (
    ("h2-frame", 0.52),
    ("data-after-answer", 0.06),
    ("flood-rst", 0.01),
    ("flood-settings", 0.01),
    ("flood-ping", 0.01),
    ("flood-window", 0.01),
    ("flood-continuation", 0.01),
    ("flood-goaway", 0.01),
    ("websocket-trailing", 0.08),
    ("h2c-upgrade-trailing", 0.08),
    ("truncated-head", 0.1),
    ("pipelined-garbage", 0.1),
)


def attack(number: int, seed: int, address: Address, bearer: str) -> Outcome:
    """Connection ``number`` of the run: its family, the statuses it read, the frames sent."""
    rng = random.Random(seed * 1_000_003 + number)
    family = rng.choices([name for name, _ in FAMILIES], [weight for _, weight in FAMILIES])[0]
    runs: dict[str, Callable[[], list[int]]] = {
        "websocket-trailing": lambda: _websocket(address, rng),
        "h2c-upgrade-trailing": lambda: _h2c_upgrade(address, rng),
        "truncated-head": lambda: _truncated_head(address, rng, bearer),
        "pipelined-garbage": lambda: _pipelined(address, rng, bearer),
    }
    sent: list[tuple[str, int]] = []
    try:
        run = runs.get(family) or (lambda: _h2(address, rng, family, bearer, sent))
        statuses = run()
    except (OSError, AssertionError, h2.exceptions.H2Error):
        statuses = []  # refused or closed by the server mid-attack: an allowed outcome
    return family, statuses, sent
