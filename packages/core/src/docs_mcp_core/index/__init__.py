"""The index on disk or in an object store: where it lives, its table, and opening it to read.

* :mod:`.location`: an index location, a local folder or an ``s3://bucket/prefix``, and the small
  file interface the build and the reader use for ``metadata.json`` and ``chunks.json`` there;
* :mod:`.table`: the ``chunks`` LanceDB table: its columns, writing it with its indexes, reading a
  previous build's chunks back for reuse, and the vector query settings that go with its indexes;
* :mod:`.reader`: opening a published index read-only (``metadata.json``, then the table it names);
* :mod:`.lancedb_import`: importing LanceDB without paying up front for parts docs-mcp never uses;
* :mod:`.private_copies`: the temporary folders a process copies a remote index into, named after
  it so that the next process removes those of one that was killed.
"""
