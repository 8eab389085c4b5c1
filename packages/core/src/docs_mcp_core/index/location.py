"""Where an index lives: a local folder, or a prefix in an S3-compatible object store.

``docs-mcp build --out`` and ``docs-mcp-server --index-dir`` take either a folder or a URI such as
``s3://bucket/docs/acme``. The LanceDB table is written and read by LanceDB's own storage layer
(``lancedb.connect(uri, storage_options=...)``); the two JSON files beside it (``metadata.json``,
``chunks.json``) go through the small :class:`IndexStorage` interface below, backed by the local
file system or by an S3 client (``obstore``, on the same Rust object-store library as LanceDB's, which
also gives the version tags and conditional writes that publishing and build locks rely on).

Credentials and endpoint come from the usual AWS environment variables (``AWS_ENDPOINT_URL``,
``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``, ``AWS_REGION`` /
``AWS_DEFAULT_REGION``, ``AWS_ALLOW_HTTP``) and can be overridden by explicit options
(``--storage-option KEY=VALUE``), which use LanceDB's key names (``aws_endpoint``,
``aws_access_key_id``, ``aws_secret_access_key``, ``aws_session_token``, ``aws_region``,
``allow_http``) or the short aliases ``endpoint``, ``access_key_id``, ``secret_access_key``,
``session_token``, ``region``.

Object stores have no atomic rename of a folder, so a remote index is published in generations:
every build writes its table under a fresh ``.lancedb-<build-id>`` prefix, then ``chunks.json``,
then ``metadata.json`` last, whose ``index.path`` points at the new prefix (a single object PUT,
atomic for readers). A reader therefore sees either the previous complete index or the new one.

This module runs past 500 lines because the location rules, the storage interface and its two back
ends (folder, object store) are one concept: every caller needs all of them together.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from docs_mcp_core.errors import StorageError

SUPPORTED_SCHEMES = ("s3",)
GENERATION_PREFIX = ".lancedb-"
"""Remote tables are written under ``<prefix>/.lancedb-<build-id>``."""

_URI_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_ENV_KEYS = (
    ("AWS_ENDPOINT", "aws_endpoint"),
    ("AWS_ENDPOINT_URL", "aws_endpoint"),  # later entries win: the standard name over the old one
    ("AWS_ACCESS_KEY_ID", "aws_access_key_id"),
    ("AWS_SECRET_ACCESS_KEY", "aws_secret_access_key"),
    ("AWS_SESSION_TOKEN", "aws_session_token"),
    ("AWS_DEFAULT_REGION", "aws_region"),
    ("AWS_REGION", "aws_region"),
    ("AWS_ALLOW_HTTP", "allow_http"),
)
_ALIASES = {
    "endpoint": "aws_endpoint",
    "endpoint_url": "aws_endpoint",
    "aws_endpoint_url": "aws_endpoint",
    "access_key_id": "aws_access_key_id",
    "secret_access_key": "aws_secret_access_key",
    "session_token": "aws_session_token",
    "region": "aws_region",
}


def is_uri(location: str | os.PathLike[str]) -> bool:
    """Whether ``location`` is a URI (``scheme://...``) rather than a local path."""
    return isinstance(location, str) and _URI_RE.match(location) is not None


def index_location(value: str | os.PathLike[str]) -> Path | str:
    """A command-line ``--out`` / ``--index-dir`` value: a URI stays a string, anything else is a Path.

    (``Path("s3://bucket/x")`` would silently turn the URI into the local folder ``s3:/bucket/x``.)
    """
    text = os.fspath(value)
    if is_uri(text):
        check_uri(text)
        return text.rstrip("/")
    return Path(text)


def check_uri(uri: str) -> None:
    """Raise :class:`StorageError` unless ``uri`` is ``s3://bucket[/prefix]``."""
    match = _URI_RE.match(uri)
    scheme = match.group(1).lower() if match else ""
    if scheme not in SUPPORTED_SCHEMES:
        raise StorageError(
            f"unsupported index location '{uri}': use a local folder or "
            + " / ".join(f"{s}://bucket/prefix" for s in SUPPORTED_SCHEMES)
        )
    rest = uri[len(scheme) + 3 :]
    if not rest.split("/", 1)[0]:
        raise StorageError(f"index location '{uri}' has no bucket name: use {scheme}://bucket/prefix")


def parse_location(
    value: str | os.PathLike[str], storage_option: Iterable[str] | None = None
) -> tuple[Path | str, dict[str, str] | None]:
    """A command line's index location and its ``--storage-option KEY=VALUE`` items, checked.

    Every command that takes ``--out`` or ``--index-dir`` resolves it here, so they all accept the same
    locations (a folder, ``s3://bucket/prefix``) and settings. Returns the location (a URI string or a
    Path) and the explicit storage options (None when there are none); raises :class:`StorageError`.
    """
    location = index_location(value)
    options = dict(parse_storage_option(item) for item in storage_option or [])
    return location, options or None


def parse_storage_option(text: str) -> tuple[str, str]:
    """``KEY=VALUE`` of ``--storage-option`` as ``(lancedb key, value)`` (aliases resolved)."""
    key, sep, value = text.partition("=")
    key = key.strip().lower()
    if not sep or not key:
        raise StorageError(
            f"--storage-option expects KEY=VALUE (e.g. endpoint=http://127.0.0.1:9000), got '{text}'"
        )
    return _ALIASES.get(key, key), value.strip()


def storage_options_from_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """LanceDB storage options from the standard AWS environment variables (empty ones ignored)."""
    env = os.environ if env is None else env
    options: dict[str, str] = {}
    for name, key in _ENV_KEYS:
        value = env.get(name, "").strip()
        if value:
            options[key] = value
    return options


def resolve_storage_options(
    explicit: Mapping[str, str] | None = None, env: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Environment defaults overlaid with explicit options (aliases resolved, explicit wins)."""
    options = storage_options_from_env(env)
    for key, value in (explicit or {}).items():
        options[_ALIASES.get(key.strip().lower(), key.strip().lower())] = value
    endpoint = options.get("aws_endpoint", "")
    if endpoint.startswith("http://") and "allow_http" not in options:
        options["allow_http"] = "true"  # an explicit plain-HTTP endpoint (MinIO, a local test server)
    return options


def new_build_id(now: datetime | None = None) -> str:
    """A sortable, unique id for one remote build: ``20260821T101500Z-1a2b3c4d``."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{secrets.token_hex(4)}"


@dataclass(frozen=True)
class ObjectInfo:
    """One file of a location: its path (relative to what was listed), size and version tag."""

    path: str
    size: int
    etag: str | None = None
    modified: datetime | None = None


class IndexStorage:
    """The files of one index location (a folder, or an object-store prefix)."""

    location: str
    remote: bool = False

    @property
    def lance_options(self) -> dict[str, str]:
        """``storage_options`` for ``lancedb.connect`` (empty for a local folder)."""
        return {}

    def uri(self, name: str) -> str:
        """Path or URI of ``name`` inside this location (what ``lancedb.connect`` takes)."""
        raise NotImplementedError

    def read_bytes(self, name: str) -> bytes:
        """The object's content; raises :class:`FileNotFoundError` when it does not exist."""
        raise NotImplementedError

    def read_if_changed(self, name: str, etag: str | None) -> tuple[bytes, str | None] | None:
        """``(content, version tag)`` of ``name``, or None when its tag is still ``etag``.

        Raises :class:`FileNotFoundError` when it does not exist.
        """
        data = self.read_bytes(name)
        tag = hashlib.sha256(data).hexdigest()
        return None if tag == etag else (data, tag)

    def write_bytes(self, name: str, data: bytes) -> None:
        raise NotImplementedError

    def upload(self, local: Path, name: str) -> None:
        """Copy the local file ``local`` to ``name`` (streamed)."""
        raise NotImplementedError

    def exists(self, name: str) -> bool:
        """Whether ``name`` exists, as an object/file or as a non-empty prefix/folder."""
        raise NotImplementedError

    def list_names(self) -> list[str]:
        """Names of the entries directly inside this location (objects and prefixes)."""
        raise NotImplementedError

    def list_files(self, name: str) -> list[ObjectInfo]:
        """Every file below ``name`` (paths relative to ``name``), in path order."""
        raise NotImplementedError

    def remove_tree(self, name: str) -> None:
        """Delete ``name`` and everything below it (no error if absent)."""
        raise NotImplementedError

    def size(self, name: str) -> int:
        """Total bytes of ``name`` and everything below it (0 when absent)."""
        return sum(info.size for info in self.list_files(name))

    def bucket_exists(self) -> bool:
        """Whether the location's bucket (an object store) or parent folder (local) exists."""
        raise NotImplementedError


class LocalStorage(IndexStorage):
    """An index folder on the local file system."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.location = str(root)

    def uri(self, name: str) -> str:
        return str(self.root / name)

    def read_bytes(self, name: str) -> bytes:
        return (self.root / name).read_bytes()

    def write_bytes(self, name: str, data: bytes) -> None:
        (self.root / name).write_bytes(data)

    def upload(self, local: Path, name: str) -> None:
        shutil.copyfile(local, self.root / name)

    def exists(self, name: str) -> bool:
        return (self.root / name).exists()

    def list_names(self) -> list[str]:
        try:
            return sorted(p.name for p in self.root.iterdir())
        except OSError:
            return []

    def list_files(self, name: str) -> list[ObjectInfo]:
        top = self.root / name
        if top.is_file():
            return [ObjectInfo("", top.stat().st_size)]
        found: list[ObjectInfo] = []
        for dirpath, _dirs, files in os.walk(top):
            for file in files:
                path = os.path.join(dirpath, file)
                try:
                    size = os.path.getsize(path)
                except OSError:
                    continue
                found.append(ObjectInfo(os.path.relpath(path, top).replace(os.sep, "/"), size))
        return sorted(found, key=lambda info: info.path)

    def remove_tree(self, name: str) -> None:
        path = self.root / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)

    def bucket_exists(self) -> bool:
        return self.root.parent.exists()


# Storage options that configure the HTTP client rather than the store (LanceDB takes both kinds).
_CLIENT_KEYS = frozenset(
    {
        "allow_http",
        "allow_invalid_certificates",
        "connect_timeout",
        "timeout",
        "proxy_url",
        "proxy_ca_certificate",
        "proxy_excludes",
        "pool_idle_timeout",
        "pool_max_idle_per_host",
        "user_agent",
    }
)
# What the object-store client accepts (with or without the ``aws_`` prefix); LanceDB-only keys
# such as ``aws_virtual_hosted_style_request`` spelled differently are passed as they are.
_STORE_KEYS = frozenset(
    {
        "access_key_id",
        "secret_access_key",
        "session_token",
        "token",
        "region",
        "default_region",
        "endpoint",
        "endpoint_url",
        "bucket",
        "checksum_algorithm",
        "conditional_put",
        "container_credentials_relative_uri",
        "container_credentials_full_uri",
        "copy_if_not_exists",
        "disable_tagging",
        "imdsv1_fallback",
        "metadata_endpoint",
        "request_payer",
        "role_arn",
        "role_session_name",
        "server_side_encryption",
        "skip_signature",
        "sse_bucket_key_enabled",
        "sse_kms_key_id",
        "sts_endpoint",
        "unsigned_payload",
        "virtual_hosted_style_request",
        "web_identity_token_file",
    }
)
_TRUE = ("1", "true", "yes", "on")


def _store_errors() -> Any:
    from obstore import exceptions

    return exceptions


def _short(exc: BaseException) -> str:
    """An object-store error in one line (the client's messages carry a multi-line debug dump)."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


class S3Storage(IndexStorage):
    """An index under ``s3://bucket/prefix`` (any S3-compatible store: AWS, MinIO, R2, ...).

    Besides plain reads and writes it offers what object stores have instead of locks and renames:
    version tags (ETags), conditional reads (:meth:`read_if_changed`) and conditional writes
    (:meth:`create` fails when the object exists, :meth:`replace` when it changed meanwhile), which
    AWS S3, MinIO and R2 support.
    """

    remote = True

    def __init__(self, uri: str, options: Mapping[str, str]) -> None:
        check_uri(uri)
        self.location = uri.rstrip("/")
        path = self.location.split("://", 1)[1]
        self.bucket, _, prefix = path.partition("/")
        self.prefix = prefix.strip("/")
        self.options = dict(options)
        self._store: Any = None
        self._bucket_store: Any = None

    @property
    def lance_options(self) -> dict[str, str]:
        return dict(self.options)

    def uri(self, name: str) -> str:
        return f"{self.location}/{name}"

    def _make_store(self, prefix: str | None) -> Any:
        from datetime import timedelta

        from obstore.store import S3Store

        config: dict[str, str] = {}
        client: dict[str, Any] = {}
        for key, value in self.options.items():
            short = key[4:] if key.startswith("aws_") else key
            if key in _CLIENT_KEYS:
                client[key] = value.lower() in _TRUE if key.startswith("allow_") else value
            elif short in _STORE_KEYS:
                config[f"aws_{short}" if short != "token" else "aws_session_token"] = value
        if config.get("aws_endpoint_url"):
            config["aws_endpoint"] = config.pop("aws_endpoint_url")
        endpoint = config.get("aws_endpoint", "")
        if endpoint.startswith("http://"):
            client.setdefault("allow_http", True)
        retry: Any = {"max_retries": 3, "retry_timeout": timedelta(seconds=30)}
        store: Any = S3Store  # the options are plain dicts here; the client checks the keys
        return store(
            self.bucket, prefix=prefix or None, config=config, client_options=client, retry_config=retry
        )

    def _objects(self) -> Any:
        if self._store is None:
            self._store = self._make_store(self.prefix)
        return self._store

    def _call(self, action: Any, *args: Any, **kwargs: Any) -> Any:
        """Run an object-store operation; its failures become :class:`OSError` (missing objects
        :class:`FileNotFoundError`), so callers handle local and remote errors alike."""
        errors = _store_errors()
        try:
            return action(*args, **kwargs)
        except FileNotFoundError:
            raise
        except errors.NotFoundError as exc:
            raise FileNotFoundError(_short(exc)) from None
        except errors.BaseError as exc:
            raise OSError(_short(exc)) from None

    def read_bytes(self, name: str) -> bytes:
        import obstore

        result = self._call(obstore.get, self._objects(), name)
        return bytes(self._call(result.bytes))

    def read_if_changed(self, name: str, etag: str | None) -> tuple[bytes, str | None] | None:
        import obstore

        errors = _store_errors()
        options: Any = {"if_none_match": etag} if etag else None
        try:
            result = obstore.get(self._objects(), name, options=options)
        except errors.NotModifiedError:
            return None
        except errors.NotFoundError as exc:
            raise FileNotFoundError(_short(exc)) from None
        except errors.BaseError as exc:
            raise OSError(_short(exc)) from None
        return bytes(self._call(result.bytes)), result.meta.get("e_tag")

    def write_bytes(self, name: str, data: bytes) -> None:
        import obstore

        self._call(obstore.put, self._objects(), name, data)

    def create(self, name: str, data: bytes) -> str | None:
        """Write ``name`` only if it does not exist: its version tag, or None when it existed."""
        import obstore

        errors = _store_errors()
        try:
            result = obstore.put(self._objects(), name, data, mode="create")
        except errors.AlreadyExistsError:
            return None
        except errors.PreconditionError:
            return None
        except errors.BaseError as exc:
            raise OSError(_short(exc)) from None
        return result.get("e_tag")

    def replace(self, name: str, data: bytes, etag: str) -> str | None:
        """Overwrite ``name`` only if its version tag is still ``etag``: the new tag, else None."""
        import obstore

        errors = _store_errors()
        try:
            result = obstore.put(self._objects(), name, data, mode={"e_tag": etag})
        except (errors.PreconditionError, errors.NotFoundError):
            return None
        except errors.BaseError as exc:
            raise OSError(_short(exc)) from None
        return result.get("e_tag")

    def head(self, name: str) -> ObjectInfo | None:
        """Size, version tag and modification time of the object ``name`` (None when absent)."""
        import obstore

        try:
            meta = self._call(obstore.head, self._objects(), name)
        except FileNotFoundError:
            return None
        return ObjectInfo(name, int(meta["size"]), meta.get("e_tag"), meta.get("last_modified"))

    def upload(self, local: Path, name: str) -> None:
        import obstore

        self._call(obstore.put, self._objects(), name, local)

    def download(self, name: str, local: Path) -> int:
        """Copy the object ``name`` to the local file ``local``; returns the bytes written."""
        import obstore

        result = self._call(obstore.get, self._objects(), name)
        written = 0
        with open(local, "wb") as out:
            for chunk in self._call(result.stream, min_chunk_size=1024 * 1024):
                out.write(chunk)
                written += len(chunk)
        return written

    def exists(self, name: str) -> bool:
        return self.head(name) is not None or bool(self._list(name, limit_one=True))

    def _list(self, name: str, *, limit_one: bool = False) -> list[ObjectInfo]:
        import obstore

        base = name.strip("/")
        prefix = f"{base}/" if base else None
        found: list[ObjectInfo] = []
        stream = self._call(obstore.list, self._objects(), prefix=prefix, chunk_size=1000)
        for batch in self._call(iter, stream):
            for meta in batch:
                path = str(meta["path"])
                relative = path[len(prefix) :] if prefix else path
                found.append(
                    ObjectInfo(relative, int(meta["size"]), meta.get("e_tag"), meta.get("last_modified"))
                )
            if limit_one and found:
                break
        return found

    def list_names(self) -> list[str]:
        import obstore

        try:
            listing = self._call(obstore.list_with_delimiter, self._objects())
        except OSError:
            return []
        names = [str(meta["path"]).rstrip("/").rsplit("/", 1)[-1] for meta in listing["objects"]]
        names += [str(p).rstrip("/").rsplit("/", 1)[-1] for p in listing["common_prefixes"]]
        return sorted(set(names))

    def list_files(self, name: str) -> list[ObjectInfo]:
        info = self.head(name) if name else None
        if info is not None:
            return [ObjectInfo("", info.size, info.etag, info.modified)]
        return sorted(self._list(name), key=lambda item: item.path)

    def remove_tree(self, name: str) -> None:
        import obstore

        paths = [f"{name.strip('/')}/{info.path}" for info in self._list(name)]
        if self.head(name) is not None:
            paths.append(name)
        for start in range(0, len(paths), 1000):
            self._call(obstore.delete, self._objects(), paths[start : start + 1000])

    def delete(self, name: str) -> None:
        """Delete the object ``name`` (no error if absent)."""
        import obstore

        with contextlib.suppress(FileNotFoundError):
            self._call(obstore.delete, self._objects(), name)

    def bucket_exists(self) -> bool:
        import obstore

        if self._bucket_store is None:
            self._bucket_store = self._make_store(None)
        errors = _store_errors()
        try:
            obstore.list_with_delimiter(self._bucket_store)
        except (errors.NotFoundError, FileNotFoundError):
            return False
        except errors.BaseError as exc:
            if "NoSuchBucket" in str(exc):
                return False
            raise OSError(_short(exc)) from None
        return True


def open_storage(location: str | os.PathLike[str], options: Mapping[str, str] | None = None) -> IndexStorage:
    """The storage behind ``location``: :class:`S3Storage` for ``s3://`` URIs, else a local folder.

    ``options`` are explicit storage options; the AWS environment variables fill in the rest.
    """
    if is_uri(location):
        assert isinstance(location, str)
        return S3Storage(location, resolve_storage_options(options))
    return LocalStorage(Path(location))


def describe(location: str | os.PathLike[str]) -> str:
    """``location`` as shown in messages: URIs as given, folders as absolute paths."""
    return str(location) if is_uri(location) else str(Path(location).resolve())


__all__ = [
    "GENERATION_PREFIX",
    "SUPPORTED_SCHEMES",
    "IndexStorage",
    "LocalStorage",
    "ObjectInfo",
    "S3Storage",
    "check_uri",
    "describe",
    "index_location",
    "is_uri",
    "new_build_id",
    "open_storage",
    "parse_location",
    "parse_storage_option",
    "resolve_storage_options",
    "storage_options_from_env",
]
