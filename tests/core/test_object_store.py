"""Indexes in an S3-compatible object store: build publishes generations, search reads them.

Against a real S3 server (moto) on 127.0.0.1; skipped when moto is not installed. Also the
storage-option parsing and the streamed chunks.json writer, which need no server.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from docs_mcp_core.build import BuildOptions, BuildReporter, build_index
from docs_mcp_core.chunk_stream import ChunksJsonWriter, ChunkSpill
from docs_mcp_core.chunking import Chunk
from docs_mcp_core.errors import (
    CorpusInvalidError,
    IndexNotFoundError,
    MetadataNotFoundError,
    OutputNotAnIndexError,
    StorageError,
)
from docs_mcp_core.index.location import (
    GENERATION_PREFIX,
    S3Storage,
    index_location,
    open_storage,
    parse_storage_option,
    resolve_storage_options,
)
from docs_mcp_core.metadata import read_metadata
from docs_mcp_core.search import SearchEngine
from tests.fakes.s3_server import S3Endpoint, s3_server

BUCKET = "docs-mcp-core-tests"
INDEXED_AT = "2026-01-01T00:00:00.000Z"


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Endpoint]:
    with s3_server() as endpoint:
        endpoint.create_bucket(BUCKET)
        yield endpoint


def _build(docs: Path, out: Path | str, s3: S3Endpoint | None = None, retention: float = 600.0) -> None:
    options = s3.storage_options() if s3 is not None else None
    build_index(
        BuildOptions(
            docs_dir=docs,
            out_dir=out,
            indexed_at=INDEXED_AT,
            storage_options=options,
            generation_retention_seconds=retention,
        )
    )


def _ids(engine: SearchEngine, query: str) -> list[str]:
    return [hit.chunk_id for hit in engine.search(query, limit=10).hits]


def _generations(s3: S3Endpoint, uri: str) -> list[str]:
    storage = open_storage(uri, s3.storage_options())
    return [name for name in storage.list_names() if name.startswith(GENERATION_PREFIX)]


# ── storage options and locations ───────────────────────────────────────────────────────────────


def test_index_location_keeps_uris_and_makes_paths() -> None:
    assert index_location("s3://bucket/docs/acme/") == "s3://bucket/docs/acme"
    assert index_location("./idx") == Path("./idx")
    with pytest.raises(StorageError, match=r"unsupported index location 'ftp://host/x'"):
        index_location("ftp://host/x")
    with pytest.raises(StorageError, match="has no bucket name"):
        index_location("s3:///prefix")


@pytest.mark.parametrize(
    "uri", ["s3://bucket/../x", "s3://bucket/a/./b", "s3://bucket/a//b", "s3://bucket/a/.."]
)
def test_a_prefix_an_object_store_cannot_hold_is_named(uri: str) -> None:
    # "build failed unexpectedly: ValueError: Could not parse path" (search too; a server's traceback)
    with pytest.raises(StorageError) as info:
        index_location(uri)
    assert str(info.value) == (
        f"index location '{uri}' has a prefix an object store cannot hold (an empty, '.' or '..' part "
        "between slashes); use s3://bucket/prefix with plain names"
    )
    assert index_location("s3://bucket/a.b/..c/") == "s3://bucket/a.b/..c"  # dots inside names are fine


@pytest.mark.parametrize(
    ("explicit", "env", "where"),
    [
        # each ended the command in a Rust panic (pyo3_runtime.PanicException), past every handler
        ({"endpoint": "not a url"}, {}, "the endpoint storage option is 'not a url'"),
        ({"endpoint": "http://"}, {}, "the endpoint storage option is 'http://'"),
        ({}, {"AWS_ENDPOINT_URL": "http://[::1"}, "AWS_ENDPOINT_URL is 'http://[::1'"),
        ({}, {"AWS_ENDPOINT_URL": ""}, "AWS_ENDPOINT_URL is ''"),
        ({"endpoint": "http://127.0.0.1:9000"}, {"AWS_ENDPOINT": "ftp://x"}, "AWS_ENDPOINT is 'ftp://x'"),
    ],
)
def test_an_endpoint_that_is_not_a_url_is_named(
    explicit: dict[str, str], env: dict[str, str], where: str
) -> None:
    with pytest.raises(StorageError) as info:
        resolve_storage_options(explicit, env)
    assert str(info.value).startswith(f"{where}, not an http:// or https:// URL with a host")
    assert resolve_storage_options({"endpoint": "https://s3.example.com"}, {})["aws_endpoint"]


def test_a_storage_setting_the_client_cannot_use_is_an_os_error_naming_it() -> None:
    # raised while the client was made, outside the handler that turns its errors into OSError:
    # "search failed unexpectedly: GenericError ... Debug source: ..."
    storage = open_storage("s3://bucket/idx", {"endpoint": "http://127.0.0.1:9", "timeout": "abc"})
    with pytest.raises(OSError) as info:
        storage.read_bytes("metadata.json")
    assert str(info.value) == (
        'the object-store settings are not usable: Generic Config error: failed to parse "abc" as Duration'
    )


def test_storage_options_from_the_environment_and_flags() -> None:
    env = {
        "AWS_ENDPOINT_URL": "http://127.0.0.1:9000",
        "AWS_ACCESS_KEY_ID": "key",
        "AWS_SECRET_ACCESS_KEY": "secret",
        "AWS_DEFAULT_REGION": "eu-west-1",
        "AWS_REGION": "eu-central-1",
        "AWS_SESSION_TOKEN": "",
    }
    options = resolve_storage_options({"region": "us-east-2"}, env)
    assert options == {
        "aws_endpoint": "http://127.0.0.1:9000",
        "aws_access_key_id": "key",
        "aws_secret_access_key": "secret",
        "aws_region": "us-east-2",  # the explicit option wins over AWS_REGION, which wins over the default
        "allow_http": "true",  # a plain-http endpoint is allowed without AWS_ALLOW_HTTP
    }
    assert parse_storage_option("endpoint=http://h:1") == ("aws_endpoint", "http://h:1")
    assert parse_storage_option("Secret_Access_Key = s") == ("aws_secret_access_key", "s")
    with pytest.raises(StorageError, match="KEY=VALUE"):
        parse_storage_option("endpoint")


# ── streaming helpers ───────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    "items",
    [
        [],
        [{"a": 1}],
        [{"chunk_id": "a.md#x", "content": 'line\nnext \u2028 «ü» "q"', "n": [1, {"b": None}]}, {}],
    ],
)
def test_chunks_json_writer_matches_json_dump(tmp_path: Path, items: list[object]) -> None:
    with ChunksJsonWriter(tmp_path / "out.json") as writer:
        for item in items:
            writer.add(item)
    expected = json.dumps(items, indent=2, ensure_ascii=False)
    assert (tmp_path / "out.json").read_text(encoding="utf-8") == expected


def test_chunk_spill_returns_the_chunks_in_order_in_fixed_batches(tmp_path: Path) -> None:
    chunks = [
        Chunk(f"f.md#{i}", "f.md", f"H{i}", 2, f"## H{i}", f"H{i}", f"f.md > H{i}", i, {}) for i in range(7)
    ]
    spill = ChunkSpill(tmp_path / "spill", batch_size=3)
    spill.extend(chunks[:2])
    spill.extend(chunks[2:])
    batches = list(spill.batches())
    assert [len(b) for b in batches] == [3, 3, 1]
    assert [c for b in batches for c in b] == chunks
    spill.discard()
    assert not (tmp_path / "spill").exists()


# ── build and search through the object store ───────────────────────────────────────────────────


@pytest.mark.integration
def test_build_publishes_to_s3_and_search_reads_it(
    tmp_path: Path, examples_docs: Path, s3: S3Endpoint
) -> None:
    uri = f"s3://{BUCKET}/publish/examples"
    _build(examples_docs, uri, s3)
    local = tmp_path / "local"
    _build(examples_docs, local)

    storage = open_storage(uri, s3.storage_options())
    meta = json.loads(storage.read_bytes("metadata.json"))
    assert meta["index"]["path"].startswith(GENERATION_PREFIX)
    assert _generations(s3, uri) == [meta["index"]["path"]]
    # the same chunks.json, byte for byte, and the same metadata apart from where the table lives
    assert storage.read_bytes("chunks.json") == (local / "chunks.json").read_bytes()
    local_meta = json.loads((local / "metadata.json").read_text(encoding="utf-8"))
    assert {**meta, "index": None} == {**local_meta, "index": None}

    assert (
        read_metadata(uri, storage_options=s3.storage_options()).stats.total_chunks
        == meta["stats"]["total_chunks"]
    )
    remote = SearchEngine.open(uri, storage_options=s3.storage_options())
    here = SearchEngine.open(local)
    try:
        for query in ("webhook signature", "retry configuration", "pagination cursor"):
            assert _ids(remote, query) == _ids(here, query)
            assert _ids(remote, query)
        hit = remote.search("webhook signature", limit=1).hits[0]
        assert remote.get_doc(hit.chunk_id) == here.get_doc(hit.chunk_id)
    finally:
        remote.close()
        here.close()


@pytest.mark.integration
def test_rebuild_switches_generation_and_keeps_the_previous_one_readable(
    tmp_path: Path, examples_docs: Path, s3: S3Endpoint
) -> None:
    uri = f"s3://{BUCKET}/generations/docs"
    docs = tmp_path / "docs"
    shutil.copytree(examples_docs, docs)
    _build(docs, uri, s3)
    first = read_metadata(uri, storage_options=s3.storage_options()).index.path
    serving = SearchEngine.open(uri, storage_options=s3.storage_options())
    try:
        before = _ids(serving, "webhook signature")
        assert before

        (docs / "lighthouse.md").write_text("# Lighthouse\n\n## Beacon\n\nThe lighthouse beacon turns.\n")
        _build(docs, uri, s3)
        second = read_metadata(uri, storage_options=s3.storage_options()).index.path
        assert second != first
        assert sorted(_generations(s3, uri)) == sorted([first, second])
        # a replica that opened the previous generation keeps answering from it
        assert _ids(serving, "webhook signature") == before
        assert _ids(serving, "lighthouse beacon") == []
    finally:
        serving.close()
    fresh = SearchEngine.open(uri, storage_options=s3.storage_options())
    try:
        assert _ids(fresh, "lighthouse beacon")[0] == "lighthouse.md#lighthouse/beacon"
    finally:
        fresh.close()

    _build(docs, uri, s3)  # replaced a moment ago: the first generation is kept for its retention time
    third = read_metadata(uri, storage_options=s3.storage_options()).index.path
    assert sorted(_generations(s3, uri)) == sorted([first, second, third])
    _build(docs, uri, s3, retention=0)  # without retention, only the previous generation stays
    fourth = read_metadata(uri, storage_options=s3.storage_options()).index.path
    assert sorted(_generations(s3, uri)) == sorted([third, fourth])


@pytest.mark.integration
def test_refused_build_leaves_the_published_index_untouched(
    tmp_path: Path, examples_docs: Path, s3: S3Endpoint
) -> None:
    uri = f"s3://{BUCKET}/refused/docs"
    _build(examples_docs, uri, s3)
    storage = open_storage(uri, s3.storage_options())
    before = storage.read_bytes("metadata.json")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "bad.md").write_bytes(b"# Bad\n\n\xff\xfe not utf-8\n")
    with pytest.raises(CorpusInvalidError):
        _build(broken, uri, s3)
    assert storage.read_bytes("metadata.json") == before
    assert _generations(s3, uri) == [json.loads(before)["index"]["path"]]


@pytest.mark.integration
def test_missing_remote_index_is_reported_with_its_location(s3: S3Endpoint) -> None:
    uri = f"s3://{BUCKET}/nothing/here"
    with pytest.raises(
        MetadataNotFoundError, match=r"metadata.json not found at 's3://.*/nothing/here/metadata.json'"
    ):
        read_metadata(uri, storage_options=s3.storage_options())
    with pytest.raises(IndexNotFoundError, match="docs-mcp build --out s3://"):
        SearchEngine.open(uri, storage_options=s3.storage_options())


@pytest.mark.integration
def test_metadata_pointing_at_a_missing_table_is_unusable(s3: S3Endpoint, examples_docs: Path) -> None:
    uri = f"s3://{BUCKET}/dangling/docs"
    _build(examples_docs, uri, s3)
    storage = open_storage(uri, s3.storage_options())
    meta = json.loads(storage.read_bytes("metadata.json"))
    storage.remove_tree(meta["index"]["path"])
    with pytest.raises(IndexNotFoundError, match=r"cannot open the LanceDB table 'chunks' at 's3://"):
        SearchEngine.open(uri, storage_options=s3.storage_options())


@pytest.mark.integration
def test_build_to_a_missing_bucket_fails_before_any_work(examples_docs: Path, s3: S3Endpoint) -> None:
    from docs_mcp_core.errors import BuildError

    reporter_steps: list[str] = []

    class Steps(BuildReporter):
        def step(self, message: str) -> None:
            reporter_steps.append(message)

    options = BuildOptions(
        docs_dir=examples_docs, out_dir="s3://no-such-bucket/docs", storage_options=s3.storage_options()
    )
    with pytest.raises(BuildError, match=r"--out 's3://no-such-bucket/docs': the bucket does not exist"):
        build_index(options, Steps())
    assert reporter_steps == []  # refused before chunking anything


# ── the build lock and the conditional publish ─────────────────────────────────────────────────


@pytest.mark.integration
def test_a_live_object_store_lock_refuses_and_a_stale_one_is_taken_over(
    s3: S3Endpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    from docs_mcp_core.errors import BuildError, BuildLockedError
    from docs_mcp_core.index import lock as build_lock

    storage = open_storage(f"s3://{BUCKET}/locks/one", s3.storage_options())
    assert isinstance(storage, S3Storage)
    record = json.dumps({"pid": 4242, "host": "ci-runner-7", "started_at": "2026-01-01T00:00:00Z"})
    storage.write_bytes(build_lock.LOCK_FILENAME, record.encode())
    with pytest.raises(
        BuildLockedError, match=r"another build \(pid 4242 on host ci-runner-7, started"
    ) as info:
        build_lock.acquire_build_lock(storage)
    assert "--wait" in str(info.value)

    notes: list[str] = []
    monkeypatch.setattr(build_lock, "STALE_SECONDS", 0.0)  # the holder has not renewed it "for long"
    held = build_lock.acquire_build_lock(storage, notify=notes.append)
    try:
        assert notes and "took over the build lock" in notes[0] and "pid 4242" in notes[0]
        mine = json.loads(storage.read_bytes(build_lock.LOCK_FILENAME))
        assert mine["took_over_from"].startswith("pid 4242")
        held.check()  # still ours: renewed
        # another build takes it from us (as if this one had stalled): publishing must stop
        storage.write_bytes(build_lock.LOCK_FILENAME, record.encode())
        with pytest.raises(BuildError, match="taken over by another build"):
            held.check()
    finally:
        held.release()
    assert storage.exists(build_lock.LOCK_FILENAME)  # not ours any more: left to its holder
    storage.delete(build_lock.LOCK_FILENAME)


@pytest.mark.integration
def test_metadata_json_is_published_only_over_the_version_the_build_started_from(s3: S3Endpoint) -> None:
    from docs_mcp_core.build.output import _publish_metadata
    from docs_mcp_core.errors import BuildError

    storage = open_storage(f"s3://{BUCKET}/locks/publish", s3.storage_options())
    assert isinstance(storage, S3Storage)
    _publish_metadata(storage, b'{"n": 1}', None)
    with pytest.raises(BuildError, match="another build published to"):
        _publish_metadata(storage, b'{"n": 2}', None)  # it expected no index, but one appeared
    found = storage.read_if_changed("metadata.json", None)
    assert found is not None
    data, etag = found
    assert data == b'{"n": 1}' and etag
    assert storage.read_if_changed("metadata.json", etag) is None  # unchanged: nothing fetched
    _publish_metadata(storage, b'{"n": 3}', etag)
    with pytest.raises(BuildError, match="another build published to"):
        _publish_metadata(storage, b'{"n": 4}', etag)  # someone else's version is live now
    assert storage.read_bytes("metadata.json") == b'{"n": 3}'


def test_verify_table_refuses_a_table_that_does_not_hold_the_chunks_written(tmp_path: Path) -> None:
    from docs_mcp_core.build.verify import verify_table
    from docs_mcp_core.errors import BuildError
    from docs_mcp_core.index.table import chunks_to_arrow, write_table

    chunks = [
        Chunk(
            f"f.md#h{i}",
            "f.md",
            f"Heading {i}",
            2,
            f"## Heading {i}\n\nlighthouse {i}",
            f"lighthouse {i}",
            f"f.md > Heading {i}",
            i,
            {},
        )
        for i in range(3)
    ]
    db = tmp_path / ".lancedb"
    write_table(
        db, [chunks_to_arrow(chunks, [], {"f.md": "x"}, None, None)], metadata_keys=[], vector_dimensions=None
    )
    verify_table(db, 3)
    with pytest.raises(BuildError, match=r"holds 3 rows where 4 chunks were written"):
        verify_table(db, 4)
    for data_file in (db / "chunks.lance" / "data").iterdir():
        data_file.unlink()
    with pytest.raises(BuildError, match=r"cannot be (read back|searched)"):
        verify_table(db, 3)


# ── a local copy of the published generation (what a server on s3:// serves from) ──────────────


@pytest.mark.integration
def test_the_published_generation_is_fetched_verified_and_reused(
    tmp_path: Path, examples_docs: Path, s3: S3Endpoint
) -> None:
    from docs_mcp_core.index.replica import FETCHED_MARKER, fetch_generation

    uri = f"s3://{BUCKET}/replica/examples"
    _build(examples_docs, uri, s3)
    storage = open_storage(uri, s3.storage_options())
    assert isinstance(storage, S3Storage)
    cache = tmp_path / "cache"
    fetched = fetch_generation(storage, cache)
    assert fetched is not None
    generation = read_metadata(uri, storage_options=s3.storage_options()).index.path
    assert fetched.generation == generation
    assert fetched.folder == cache / generation.removeprefix(GENERATION_PREFIX)
    remote = {info.path: info.size for info in storage.list_files(generation)}
    local = {
        str(p.relative_to(fetched.folder / generation)): p.stat().st_size
        for p in (fetched.folder / generation).rglob("*")
        if p.is_file()
    }
    assert local == remote and fetched.bytes == sum(remote.values())
    assert (fetched.folder / "metadata.json").read_bytes() == storage.read_bytes("metadata.json")
    assert [p.name for p in cache.iterdir()] == [fetched.folder.name]  # no partial folder left

    # the copy is an index folder: it answers exactly as the object store does
    here, there = (
        SearchEngine.open(fetched.folder),
        SearchEngine.open(uri, storage_options=s3.storage_options()),
    )
    try:
        assert _ids(here, "retry configuration") == _ids(there, "retry configuration")
        assert "chunks.derived" in remote and "chunks.derived.json" in remote  # published with the table
        assert here.opened_from == "derived files" and there.opened_from == "table"
    finally:
        here.close()
        there.close()

    assert fetch_generation(storage, cache, known_etag=fetched.etag) is None  # unchanged: nothing fetched
    marker_time = (fetched.folder / FETCHED_MARKER).stat().st_mtime_ns
    again = fetch_generation(storage, cache)  # a restart on the same cache reuses the verified copy
    assert again is not None and again.folder == fetched.folder
    assert (fetched.folder / FETCHED_MARKER).stat().st_mtime_ns == marker_time

    # a damaged copy (a file of the wrong size) is fetched again
    victim = next(p for p in (fetched.folder / generation).rglob("*") if p.is_file())
    victim.write_bytes(b"x")
    repaired = fetch_generation(storage, cache)
    assert repaired is not None
    assert victim.stat().st_size == remote[str(victim.relative_to(fetched.folder / generation))]
    assert repaired.replaced is not None and "bytes where the store lists" in repaired.replaced

    # so is a copy damaged without a change of size: its checksum no longer matches the fetch's
    victim = next(p for p in (fetched.folder / generation).rglob("*.lance") if "/data/" in p.as_posix())
    good = victim.read_bytes()
    victim.write_bytes(bytes(b ^ 0x5A for b in good))
    repaired = fetch_generation(storage, cache)
    assert repaired is not None and repaired.folder == fetched.folder
    assert repaired.replaced is not None and "SHA-256" in repaired.replaced
    assert victim.read_bytes() == good
    reused = fetch_generation(storage, cache)
    assert reused is not None and reused.replaced is None


@pytest.mark.integration
def test_a_generation_that_was_removed_is_reported_not_half_fetched(
    tmp_path: Path, examples_docs: Path, s3: S3Endpoint
) -> None:
    from docs_mcp_core.index.replica import fetch_generation

    uri = f"s3://{BUCKET}/replica/removed"
    _build(examples_docs, uri, s3)
    storage = open_storage(uri, s3.storage_options())
    assert isinstance(storage, S3Storage)
    storage.remove_tree(read_metadata(uri, storage_options=s3.storage_options()).index.path)
    with pytest.raises(IndexNotFoundError, match=r"holds no files .*--generation-retention"):
        fetch_generation(storage, tmp_path / "cache")
    assert not (tmp_path / "cache").exists() or not list((tmp_path / "cache").iterdir())


@pytest.mark.integration
def test_a_prefix_holding_other_files_than_an_index_is_refused_untouched(
    examples_docs: Path, s3: S3Endpoint
) -> None:
    uri = f"s3://{BUCKET}/not-an-index/docs"
    storage = open_storage(uri, s3.storage_options())
    assert isinstance(storage, S3Storage)
    storage.write_bytes("metadata.json", b'{"author": "me"}')
    storage.write_bytes("chunks.json", b"[1, 2, 3]")
    with pytest.raises(
        OutputNotAnIndexError, match=r"its metadata.json has no metadata_version; it holds chunks"
    ):
        _build(examples_docs, uri, s3)
    assert storage.list_names() == ["chunks.json", "metadata.json"]  # no lock, no generation
    assert storage.read_bytes("metadata.json") == b'{"author": "me"}'
    assert storage.read_bytes("chunks.json") == b"[1, 2, 3]"
