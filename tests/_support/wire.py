"""Clients for attacks a well-behaved client never makes: HTTP/2 frames and raw HTTP/1.1.

``H2Client`` speaks cleartext HTTP/2 to a server on 127.0.0.1, by prior
knowledge or by an HTTP/1.1 ``Upgrade: h2c``, and lets a test send what the
``h2`` state machine allows (DATA after the answer, resets, settings) or raw
frames it would refuse (``frame``). Every read has a deadline.
"""

from __future__ import annotations

import socket
import struct
import time
from collections.abc import Sequence

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings

HeaderList = Sequence[tuple[bytes, bytes]]

WEBSOCKET_HEAD = (
    b"GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
    b"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: bKdPyn3u98cTfZJSh4TNeQ==\r\n\r\n"
)
"""A WebSocket upgrade request head (``% path``)."""


def frame(kind: int, flags: int, stream_id: int, payload: bytes = b"") -> bytes:
    """One raw HTTP/2 frame: 24-bit length, type, flags, 31-bit stream id, payload."""
    return (
        struct.pack(">I", len(payload))[1:]
        + bytes([kind, flags])
        + struct.pack(">I", stream_id & 0x7FFFFFFF)
        + payload
    )


class H2Client:
    """One cleartext HTTP/2 connection; ``events`` keeps every event the server caused."""

    def __init__(self, host: str, port: int, *, upgrade: bool = False, timeout: float = 5) -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.timeout = timeout
        self.conn = h2.connection.H2Connection(
            config=h2.config.H2Configuration(client_side=True, header_encoding=None)
        )
        self.events: list[h2.events.Event] = []
        self.closed = False
        if upgrade:
            self._upgrade(host, port)
        else:
            self.conn.initiate_connection()
            self.flush()

    def _upgrade(self, host: str, port: int) -> None:
        """``OPTIONS *``-style upgrade: ``GET /healthz`` over HTTP/1.1, answered on stream 1."""
        settings = self.conn.initiate_upgrade_connection()  # already base64url
        self.sock.sendall(
            b"GET /healthz HTTP/1.1\r\nHost: " + f"{host}:{port}".encode() + b"\r\n"
            b"Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
            b"HTTP2-Settings: " + settings + b"\r\n\r\n"
        )
        head = b""
        deadline = time.monotonic() + self.timeout
        while b"\r\n\r\n" not in head:
            self.sock.settimeout(max(0.05, deadline - time.monotonic()))
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed before the 101")
            head += chunk
        status, _, rest = head.partition(b"\r\n\r\n")
        if not status.startswith(b"HTTP/1.1 101"):
            raise ConnectionError(f"no upgrade: {status[:40]!r}")
        self.flush()
        if rest:
            self._receive(rest)

    # --- sending ------------------------------------------------------------------------

    def flush(self) -> None:
        data = self.conn.data_to_send()
        if data:
            self.send_raw(data)

    def send_raw(self, data: bytes) -> None:
        """Bytes as they are, past the state machine (a peer's reset is tolerated)."""
        try:
            self.sock.sendall(data)
        except OSError:
            self.closed = True

    def request(
        self,
        method: str,
        path: str,
        headers: HeaderList = (),
        *,
        end_stream: bool = False,
    ) -> int:
        """Open a stream with a request head; returns its id."""
        stream_id = self.conn.get_next_available_stream_id()
        self.conn.send_headers(
            stream_id,
            [
                (b":method", method.encode()),
                (b":path", path.encode()),
                (b":scheme", b"http"),
                (b":authority", b"127.0.0.1"),
                *headers,
            ],
            end_stream=end_stream,
        )
        self.flush()
        return stream_id

    def data(self, stream_id: int, payload: bytes, *, end_stream: bool = False) -> None:
        """DATA on ``stream_id`` as the state machine allows; raw frames when it refuses."""
        try:
            self.conn.send_data(stream_id, payload, end_stream=end_stream)
        except (h2.exceptions.ProtocolError, h2.exceptions.FlowControlError):
            self.send_raw(frame(0x0, 0x1 if end_stream else 0x0, stream_id, payload))
            return
        self.flush()

    # --- receiving ----------------------------------------------------------------------

    def _receive(self, data: bytes) -> None:
        try:
            events = self.conn.receive_data(data)
        except h2.exceptions.ProtocolError:
            self.closed = True
            return
        self.events.extend(events)
        for event in events:
            if isinstance(event, h2.events.DataReceived):
                self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            if isinstance(event, h2.events.ConnectionTerminated):
                self.closed = True
        self.flush()

    def pump(self, seconds: float) -> None:
        """Read whatever arrives within ``seconds`` (stops early when the server closes)."""
        deadline = time.monotonic() + seconds
        while not self.closed and time.monotonic() < deadline:
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                chunk = self.sock.recv(65536)
            except TimeoutError:
                return
            except OSError:
                self.closed = True
                return
            if not chunk:
                self.closed = True
                return
            self._receive(chunk)

    def status(self, stream_id: int) -> int | None:
        for event in self.events:
            if isinstance(event, h2.events.ResponseReceived) and event.stream_id == stream_id:
                for name, value in event.headers:
                    if name == b":status":
                        return int(value)
        return None

    def wait_status(self, stream_id: int) -> int:
        """The response status of ``stream_id``; fails when none comes before the deadline."""
        deadline = time.monotonic() + self.timeout
        while (found := self.status(stream_id)) is None:
            if self.closed or time.monotonic() > deadline:
                raise AssertionError(f"no answer on stream {stream_id}")
            self.pump(0.1)
        return found

    def ended(self, stream_id: int) -> bool:
        return any(
            isinstance(event, h2.events.StreamEnded | h2.events.StreamReset)
            and event.stream_id == stream_id
            for event in self.events
        )

    def wait_ended(self, stream_id: int) -> None:
        deadline = time.monotonic() + self.timeout
        while not self.ended(stream_id):
            if self.closed or time.monotonic() > deadline:
                raise AssertionError(f"stream {stream_id} did not end")
            self.pump(0.1)

    def close(self) -> None:
        self.sock.close()


def data_after_answer(
    host: str,
    port: int,
    path: str = "/nope",
    headers: HeaderList = (),
    *,
    length: int = 100,
    upgrade: bool = False,
) -> tuple[int, bool]:
    """A POST declaring a ``length`` body, one DATA frame, the answer and its stream's end,
    then three more DATA frames on the answered stream: (the answer's status, whether the
    server then closed the connection)."""
    client = H2Client(host, port, upgrade=upgrade)
    try:
        stream = client.request("POST", path, [(b"content-length", b"%d" % length), *headers])
        client.data(stream, b"{" * 10)
        status = client.wait_status(stream)
        client.wait_ended(stream)
        for _ in range(3):
            client.data(stream, b"{" * 10)
        client.pump(2.0)
        return status, client.closed
    finally:
        client.close()
