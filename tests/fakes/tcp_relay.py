"""A TCP relay on 127.0.0.1 that can be switched off and on, to stand for a server that goes away.

Connections to :attr:`TcpRelay.port` are forwarded to ``upstream``; while the relay is down every
open connection is cut and every new one is closed as soon as it is accepted (the client sees a
reset or an empty answer, as from a store behind a failed network), and :attr:`refused` counts them.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from types import TracebackType


class TcpRelay:
    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._down = False
        self.refused = 0
        self._refused_changed = threading.Condition(self._lock)
        threading.Thread(target=self._accept, daemon=True).start()

    def set_down(self, down: bool) -> None:
        with self._lock:
            self._down = down
            cut, self._open = (set(self._open), set()) if down else (set(), self._open)
        for sock in cut:
            _close(sock)

    def wait_refused(self, count: int, timeout: float) -> bool:
        """Wait until at least ``count`` connections were refused while down (False on timeout)."""
        with self._refused_changed:
            return self._refused_changed.wait_for(lambda: self.refused >= count, timeout=timeout)

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # closed
            with self._lock:
                down = self._down
                if down:
                    self.refused += 1
                    self._refused_changed.notify_all()
            if down:
                _close(client)
                continue
            try:
                server = socket.create_connection(self.upstream, timeout=10)
            except OSError:
                _close(client)
                continue
            with self._lock:
                self._open.update((client, server))
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                _close(sock)
            with self._lock:
                self._open.difference_update((source, sink))

    def close(self) -> None:
        _close(self._listener)
        self.set_down(True)

    def __enter__(self) -> TcpRelay:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()
