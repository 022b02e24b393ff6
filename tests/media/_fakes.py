"""Fake upstream pieces for media tests: a recording MockTransport and streams that lie."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

from svc.graph import GraphClient

TOKEN = "test-token-abc"
BASE = "https://graph.test"


@dataclass
class Upstream:
    """Answers with ``respond`` and keeps each request with its fully read body."""

    respond: Callable[[httpx.Request, bytes], httpx.Response]
    requests: list[tuple[httpx.Request, bytes]] = field(default_factory=list)

    async def handle(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        self.requests.append((request, body))
        return self.respond(request, body)

    def client(self) -> GraphClient:
        return GraphClient(
            access_token=TOKEN, base_url=BASE, transport=httpx.MockTransport(self.handle)
        )


def json_answer(
    payload: object, status: int = 200
) -> Callable[[httpx.Request, bytes], httpx.Response]:
    return lambda request, body: httpx.Response(status, json=payload)


class CountingStream(httpx.AsyncByteStream):
    """Yields ``chunks`` chunks of ``chunk_size`` bytes and counts how many were pulled.

    A class-based iterator (not an async generator), so abandoning it part-way
    leaves nothing for the garbage collector to finalize.
    """

    def __init__(self, *, chunks: int, chunk_size: int, byte: bytes = b"x") -> None:
        self.chunks = chunks
        self.chunk_size = chunk_size
        self.byte = byte
        self.pulled = 0

    def __aiter__(self) -> CountingStream:
        return self

    async def __anext__(self) -> bytes:
        if self.pulled >= self.chunks:
            raise StopAsyncIteration
        self.pulled += 1
        return self.byte * self.chunk_size


class CountingReader:
    """A non-seekable binary file-like that counts the bytes read from it."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.read_bytes = 0

    def read(self, size: int = -1) -> bytes:
        left = self.total - self.read_bytes
        n = left if size < 0 else min(size, left)
        self.read_bytes += n
        return b"r" * n

    def seekable(self) -> bool:
        return False


def parse_json_body(body: bytes) -> object:
    return json.loads(body)
