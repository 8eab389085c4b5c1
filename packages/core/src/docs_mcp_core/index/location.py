"""Where an index lives: a local folder, or a prefix in an S3-compatible object store.

``docs-mcp build --out`` and ``docs-mcp-server --index-dir`` take either a folder or a URI such as
``s3://bucket/docs/acme``. The LanceDB table is written and read by LanceDB's own storage layer
(``lancedb.connect(uri, storage_options=...)``); the two JSON files beside it (``metadata.json``,
``chunks.json``) go through the small :class:`IndexStorage` interface below, backed by the local
file system or by ``pyarrow.fs.S3FileSystem`` (pyarrow already comes with LanceDB).

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
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
from collections.abc import Mapping
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


def _pyarrow_fs() -> Any:
    """``pyarrow.fs``, imported when an object store is used: the server checks ``--index-dir``
    with this module before it answers ``initialize``, and pyarrow takes 0.1-0.3 s to import."""
    from pyarrow import fs

    return fs


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

    def remove_tree(self, name: str) -> None:
        """Delete ``name`` and everything below it (no error if absent)."""
        raise NotImplementedError

    def size(self, name: str) -> int:
        """Total bytes of ``name`` and everything below it (0 when absent)."""
        raise NotImplementedError

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

    def remove_tree(self, name: str) -> None:
        path = self.root / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)

    def bucket_exists(self) -> bool:
        return self.root.parent.exists()

    def size(self, name: str) -> int:
        path = self.root / name
        if path.is_file():
            return path.stat().st_size
        total = 0
        for dirpath, _dirs, files in os.walk(path):
            for file in files:
                try:
                    total += os.path.getsize(os.path.join(dirpath, file))
                except OSError:
                    pass
        return total


class S3Storage(IndexStorage):
    """An index under ``s3://bucket/prefix`` (any S3-compatible store: AWS, MinIO, R2, ...)."""

    remote = True

    def __init__(self, uri: str, options: Mapping[str, str]) -> None:
        check_uri(uri)
        self.location = uri.rstrip("/")
        path = self.location.split("://", 1)[1]
        self.bucket, _, prefix = path.partition("/")
        self.prefix = prefix.strip("/")
        self.options = dict(options)
        self._fs: Any = None

    @property
    def lance_options(self) -> dict[str, str]:
        return dict(self.options)

    def uri(self, name: str) -> str:
        return f"{self.location}/{name}"

    def _key(self, name: str) -> str:
        return "/".join(p for p in (self.bucket, self.prefix, name) if p)

    def _filesystem(self) -> Any:
        if self._fs is None:
            fs = _pyarrow_fs()
            opts = self.options
            endpoint = opts.get("aws_endpoint") or None
            scheme = "https"
            if endpoint and endpoint.startswith("http://"):
                scheme = "http"
            if (
                opts.get("allow_http", "").lower() in ("1", "true", "yes")
                and endpoint
                and "://" not in endpoint
            ):
                scheme = "http"
            kwargs: dict[str, Any] = {"scheme": scheme, "region": opts.get("aws_region") or "us-east-1"}
            if endpoint:
                kwargs["endpoint_override"] = endpoint
            if opts.get("aws_access_key_id"):
                kwargs["access_key"] = opts["aws_access_key_id"]
                kwargs["secret_key"] = opts.get("aws_secret_access_key", "")
                if opts.get("aws_session_token"):
                    kwargs["session_token"] = opts["aws_session_token"]
            self._fs = fs.S3FileSystem(**kwargs)
        return self._fs

    def read_bytes(self, name: str) -> bytes:
        fs = _pyarrow_fs()
        filesystem = self._filesystem()
        key = self._key(name)
        if filesystem.get_file_info(key).type != fs.FileType.File:
            raise FileNotFoundError(f"{self.uri(name)} does not exist")
        with filesystem.open_input_stream(key) as stream:
            return stream.read()

    def write_bytes(self, name: str, data: bytes) -> None:
        with self._filesystem().open_output_stream(self._key(name)) as out:
            out.write(data)

    def upload(self, local: Path, name: str) -> None:
        with open(local, "rb") as src, self._filesystem().open_output_stream(self._key(name)) as out:
            shutil.copyfileobj(src, out, 8 * 1024 * 1024)

    def exists(self, name: str) -> bool:
        fs = _pyarrow_fs()
        info = self._filesystem().get_file_info(self._key(name))
        return info.type != fs.FileType.NotFound

    def list_names(self) -> list[str]:
        fs = _pyarrow_fs()
        base = "/".join(p for p in (self.bucket, self.prefix) if p)
        try:
            infos = self._filesystem().get_file_info(fs.FileSelector(base, allow_not_found=True))
        except OSError:
            return []
        return sorted(info.base_name for info in infos)

    def remove_tree(self, name: str) -> None:
        fs = _pyarrow_fs()
        filesystem = self._filesystem()
        key = self._key(name)
        info = filesystem.get_file_info(key)
        if info.type == fs.FileType.Directory:
            filesystem.delete_dir(key)
        elif info.type == fs.FileType.File:
            filesystem.delete_file(key)

    def bucket_exists(self) -> bool:
        fs = _pyarrow_fs()
        return self._filesystem().get_file_info(self.bucket).type == fs.FileType.Directory

    def size(self, name: str) -> int:
        fs = _pyarrow_fs()
        filesystem = self._filesystem()
        key = self._key(name)
        info = filesystem.get_file_info(key)
        if info.type == fs.FileType.File:
            return int(info.size or 0)
        if info.type != fs.FileType.Directory:
            return 0
        infos = filesystem.get_file_info(fs.FileSelector(key, recursive=True))
        return sum(int(i.size or 0) for i in infos if i.type == fs.FileType.File)


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
    "S3Storage",
    "check_uri",
    "describe",
    "index_location",
    "is_uri",
    "new_build_id",
    "open_storage",
    "parse_storage_option",
    "resolve_storage_options",
    "storage_options_from_env",
]
