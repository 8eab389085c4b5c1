"""The object-store back end of :class:`~docs_mcp_core.index.storage.IndexStorage`: an index under
``s3://bucket/prefix`` in any S3-compatible store, through ``obstore`` (the Rust object-store library
LanceDB's own storage layer is built on).

:func:`docs_mcp_core.index.location.open_storage` checks the URI and resolves the storage options
(explicit ones over the AWS environment variables) before it creates an :class:`S3Storage`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from docs_mcp_core.index.storage import IndexStorage, ObjectInfo

__all__ = ["S3Storage"]


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
        try:
            return store(
                self.bucket, prefix=prefix or None, config=config, client_options=client, retry_config=retry
            )
        except (
            _store_errors().BaseError
        ) as exc:  # a setting it cannot use (timeout=abc): was "failed unexpectedly"
            raise OSError(f"the object-store settings are not usable: {_short(exc)}") from None

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
