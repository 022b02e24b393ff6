"""What a test saw from a service process, kept so that it can be scanned for secret values."""

from __future__ import annotations

import threading

import httpx


class Captured:
    """Every text a test saw from the service: responses, headers, log lines, metrics."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.texts: list[tuple[str, str]] = []
        self.secrets: set[str] = set()

    def add(self, label: str, text: str) -> None:
        with self._lock:
            self.texts.append((label, text))

    def response(self, response: httpx.Response) -> httpx.Response:
        headers = "\n".join(f"{k}: {v}" for k, v in response.headers.items())
        self.add(
            f"{response.request.method} {response.request.url.path}", headers + "\n" + response.text
        )
        return response

    def secret(self, *values: str) -> None:
        with self._lock:
            self.secrets.update(v for v in values if v)

    def leaks(self) -> list[tuple[str, str]]:
        """(label, secret prefix) for each captured text that holds a secret value."""
        found = []
        with self._lock:
            for label, text in self.texts:
                for value in self.secrets:
                    if value in text:
                        found.append((label, value[:6] + "..."))
        return found

    def size(self) -> int:
        with self._lock:
            return sum(len(text) for _, text in self.texts)
