"""The build lock: one build at a time may write into an output location, a folder or an object store.

Two builds writing into the same place would clean up each other's working files and publish a mix,
so every build takes the location's lock before it touches anything there and keeps it until it has
published (or given up). A second build is refused at once with a message naming the holder, or, with
``wait=True``, waits until the lock is free.

- **A folder** is locked with ``flock`` on ``OUT/.docs-mcp-build.lock``, which records the holder's
  pid, host and start time and is removed when the build ends. The kernel releases the lock when the
  holder's process ends, however it ends (``kill -9`` included), so a lock is never left held.
- **An object store** has no locks; the lock is the object ``<prefix>/.docs-mcp-build.lock``, created
  with a conditional write (``If-None-Match: *``) that succeeds for exactly one build. Its holder
  renews it every :data:`RENEW_SECONDS` (a conditional overwrite of its own version), and deletes it
  when done. A lock not renewed for :data:`STALE_SECONDS` belongs to a build that died: the next build
  takes it over with a conditional overwrite of the stale version, so two builds cannot both take
  it. Before publishing, the holder renews once more and stops if the lock was taken from it.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from docs_mcp_core.errors import BuildError, BuildLockedError
from docs_mcp_core.index.location import IndexStorage, S3Storage

__all__ = ["LOCK_FILENAME", "RENEW_SECONDS", "STALE_SECONDS", "BuildLock", "acquire_build_lock"]

LOCK_FILENAME = ".docs-mcp-build.lock"
RENEW_SECONDS = 15.0
STALE_SECONDS = 120.0
POLL_SECONDS = 1.0  # how often a waiting build looks at an object-store lock again


def _holder_record(extra: dict[str, object] | None = None) -> bytes:
    record: dict[str, object] = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        **(extra or {}),
    }
    return json.dumps(record).encode("utf-8")


def describe_holder(data: bytes) -> str:
    """``pid 1234 on host ci-7, started 2026-08-21T10:15:00Z`` from a lock's record (or a generic text)."""
    try:
        record = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):  # not a record this code wrote: a holder all the same
        record = None
    if not isinstance(record, dict) or "pid" not in record:
        return "another build"
    text = f"pid {record['pid']}"
    if record.get("host") and record.get("host") != socket.gethostname():
        text += f" on host {record['host']}"
    if record.get("started_at"):
        text += f", started {record['started_at']}"
    return text


def _locked_error(where: str, holder: str) -> BuildLockedError:
    return BuildLockedError(
        f"another build ({holder}) is writing to '{where}'; wait for it to finish, or pass --wait "
        "to start when it has",
        holder,
    )


class BuildLock:
    """A held build lock; :meth:`release` it when the build is over (also a context manager)."""

    def check(self) -> None:
        """Raise :class:`BuildError` if the lock is no longer ours (object stores; before publishing)."""

    def release(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> BuildLock:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.release()


class _FolderLock(BuildLock):
    def __init__(self, fd: int, path: Path) -> None:
        self._fd: int | None = fd
        self.path = path

    def release(self) -> None:
        import fcntl

        fd, self._fd = self._fd, None
        if fd is None:
            return
        # Removed while still locked: a build waiting on this file finds it gone once it gets the
        # lock, and locks a new one (unlocking first would let it lock a file about to vanish).
        with contextlib.suppress(OSError):
            os.unlink(self.path)
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _open_lock_file(path: Path) -> int:
    """The lock file, opened for reading and writing (created when missing); a :class:`BuildError`
    when something else has its name (a folder or a named pipe there ended the build with
    'failed unexpectedly: IsADirectoryError' or 'OSError: Invalid argument')."""
    problem = f"the build lock '{path}' is not a regular file (a folder, a named pipe or a device); remove it, then build again"
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except IsADirectoryError:
        raise BuildError(problem) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise BuildError(problem)
    return fd


def _lock_folder(folder: Path, wait: bool, notify: Callable[[str], None]) -> BuildLock:
    import fcntl

    path = folder / LOCK_FILENAME
    announced = False
    while True:
        folder.mkdir(parents=True, exist_ok=True)
        fd = _open_lock_file(path)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = describe_holder(os.pread(fd, 4096, 0))
                if not wait:
                    raise _locked_error(str(folder), holder) from None
                if not announced:
                    notify(f"waiting for the build holding '{folder}' ({holder}) to finish")
                    announced = True
                fcntl.flock(fd, fcntl.LOCK_EX)
            # the holder may have removed the folder (a first build that failed): lock the new file
            try:
                same = os.stat(path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if not same:
                os.close(fd)
                continue
            os.ftruncate(fd, 0)
            os.pwrite(fd, _holder_record(), 0)
            return _FolderLock(fd, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.close(fd)
            raise


class _ObjectLock(BuildLock):
    def __init__(self, storage: S3Storage, etag: str) -> None:
        self.storage = storage
        self._etag: str | None = etag
        self._lost = False
        self._guard = threading.Lock()
        self._renewals = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._renew_loop, name="docs-mcp-build-lock", daemon=True)
        self._thread.start()

    def _renew(self) -> bool:
        with self._guard:
            if self._etag is None or self._lost:
                return False
            self._renewals += 1
            record = _holder_record({"renewals": self._renewals})
            try:
                tag = self.storage.replace(LOCK_FILENAME, record, self._etag)
            except OSError:
                return True  # the store did not answer: try again next time (the lock is still ours)
            if tag is None:
                self._lost = True
                return False
            self._etag = tag
            return True

    def _renew_loop(self) -> None:
        while not self._stop.wait(RENEW_SECONDS):
            if not self._renew():
                return

    def check(self) -> None:
        if not self._renew():
            raise BuildError(
                f"the build lock on '{self.storage.location}' was taken over by another build (this one "
                f"was not heard from for {STALE_SECONDS:.0f} seconds); nothing of this build was published"
            )

    def release(self) -> None:
        self._stop.set()
        self._thread.join(timeout=RENEW_SECONDS)
        with self._guard:
            etag, self._etag = self._etag, None
            if etag is None or self._lost:
                return
            with contextlib.suppress(OSError):
                info = self.storage.head(LOCK_FILENAME)
                if info is not None and info.etag == etag:
                    self.storage.delete(LOCK_FILENAME)


def _lock_object_store(storage: S3Storage, wait: bool, notify: Callable[[str], None]) -> BuildLock:
    announced = False
    seen: tuple[str | None, float] | None = None  # (version of the lock, when this build first saw it)
    while True:
        tag = storage.create(LOCK_FILENAME, _holder_record())
        if tag is not None:
            return _ObjectLock(storage, tag)
        info = storage.head(LOCK_FILENAME)
        if info is None:
            continue  # released meanwhile: try again
        try:
            holder = describe_holder(storage.read_bytes(LOCK_FILENAME))
        except FileNotFoundError:
            continue
        now = time.monotonic()
        if seen is None or seen[0] != info.etag:
            seen = (info.etag, now)
        age = (datetime.now(UTC) - info.modified).total_seconds() if info.modified else 0.0
        if (age > STALE_SECONDS or now - seen[1] > STALE_SECONDS) and info.etag:
            taken = storage.replace(LOCK_FILENAME, _holder_record({"took_over_from": holder}), info.etag)
            if taken is not None:
                notify(
                    f"took over the build lock of '{storage.location}' from {holder} (not renewed for "
                    f"{STALE_SECONDS:.0f} seconds)"
                )
                return _ObjectLock(storage, taken)
            continue
        if not wait:
            raise _locked_error(storage.location, holder)
        if not announced:
            notify(f"waiting for the build holding '{storage.location}' ({holder}) to finish")
            announced = True
        time.sleep(POLL_SECONDS)


def acquire_build_lock(
    location: Path | IndexStorage, *, wait: bool = False, notify: Callable[[str], None] | None = None
) -> BuildLock:
    """Take the build lock of ``location`` (a local folder, created if needed, or an object store).

    Raises :class:`BuildLockedError` naming the holder when another build has it and ``wait`` is
    false; otherwise waits for it (``notify`` hears once that the build is waiting, and of a stale
    object-store lock taken over).
    """
    report = notify or (lambda _message: None)
    if isinstance(location, S3Storage):
        try:
            return _lock_object_store(location, wait, report)
        except OSError as exc:
            raise BuildError(
                f"cannot take the build lock at '{location.uri(LOCK_FILENAME)}': {exc}"
            ) from None
    folder = Path(location.location) if isinstance(location, IndexStorage) else Path(location)
    return _lock_folder(folder, wait, report)
