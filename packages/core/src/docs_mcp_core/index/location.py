"""Where an index lives: a local folder, or a prefix in an S3-compatible object store.

``docs-mcp build --out`` and ``docs-mcp-server --index-dir`` take either a folder or a URI such as
``s3://bucket/docs/acme``. The LanceDB table is written and read by LanceDB's own storage layer
(``lancedb.connect(uri, storage_options=...)``); the two JSON files beside it (``metadata.json``,
``chunks.json``) go through the small :class:`IndexStorage` interface, backed by the local
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

The storage interface and its folder back end live in :mod:`docs_mcp_core.index.storage`, the
object-store back end in :mod:`docs_mcp_core.index.s3`; both are importable from here too.
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path

from docs_mcp_core.errors import StorageError
from docs_mcp_core.index.s3 import S3Storage
from docs_mcp_core.index.storage import IndexStorage, LocalStorage, ObjectInfo

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
    bucket, _, prefix = rest.partition("/")
    if not bucket:
        raise StorageError(f"index location '{uri}' has no bucket name: use {scheme}://bucket/prefix")
    prefix = prefix.rstrip("/")
    if prefix and any(part in ("", ".", "..") for part in prefix.split("/")):  # LanceDB raised ValueError
        raise StorageError(
            f"index location '{uri}' has a prefix an object store cannot hold (an empty, '.' or '..' part "
            f"between slashes); use {scheme}://bucket/prefix with plain names"
        )


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


def _check_endpoint(url: str, where: str) -> None:
    """Raise :class:`StorageError` unless ``url`` is an ``http://`` or ``https://`` URL with a host."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        usable = parts.scheme in ("http", "https") and bool(parts.hostname) and parts.port != 0
    except ValueError:  # "http://[::1" (an unclosed address), "http://h:99999" (no port)
        usable = False
    if not usable or any(ch.isspace() or ord(ch) < 0x20 for ch in url):
        raise StorageError(
            f"{where} is {url!r}, not an http:// or https:// URL with a host "
            "(e.g. http://127.0.0.1:9000); correct it, or unset it to use AWS's own endpoint"
        )


def resolve_storage_options(
    explicit: Mapping[str, str] | None = None, env: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Environment defaults overlaid with explicit options (aliases resolved, explicit wins)."""
    environ = os.environ if env is None else env
    options = storage_options_from_env(environ)
    for key, value in (explicit or {}).items():
        options[_ALIASES.get(key.strip().lower(), key.strip().lower())] = value
    # the object-store library reads these variables itself, so a set one must be a URL even when an
    # explicit endpoint wins: a malformed one ended the command in a Rust panic, past every handler
    for name in ("AWS_ENDPOINT", "AWS_ENDPOINT_URL"):
        if name in environ:
            _check_endpoint(environ[name], name)
    if "aws_endpoint" in options:
        _check_endpoint(options["aws_endpoint"], "the endpoint storage option")
    endpoint = options.get("aws_endpoint", "")
    if endpoint.startswith("http://") and "allow_http" not in options:
        options["allow_http"] = "true"  # an explicit plain-HTTP endpoint (MinIO, a local test server)
    return options


def new_build_id(now: datetime | None = None) -> str:
    """A sortable, unique id for one remote build: ``20260821T101500Z-1a2b3c4d``."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{secrets.token_hex(4)}"


def open_storage(location: str | os.PathLike[str], options: Mapping[str, str] | None = None) -> IndexStorage:
    """The storage behind ``location``: :class:`S3Storage` for ``s3://`` URIs, else a local folder.

    ``options`` are explicit storage options; the AWS environment variables fill in the rest.
    """
    if is_uri(location):
        assert isinstance(location, str)
        check_uri(location)
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
