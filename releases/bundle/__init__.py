"""Write a release as a reproducible, checksummed BagIt bag of a Frictionless data package.

A release bundle is the archival form of a curated release: whoever downloads it
must be able to check that nothing changed (BagIt manifests, verifiable with
``sha256sum -c``), to read it without this code (Frictionless Table Schemas, plain
gzip-compressed RFC 4180 CSV) and to recompute its identifier (see
:func:`compute_release_id`).  So every byte is a function of the rows alone:

* rows are sorted in Python on the table's primary key (never by a database
  collation), with an external merge sort whose memory is bounded by ``chunk_rows``;
  rows a caller gives already in that order (:class:`KeyOrdered`: code point order,
  which is UTF-8 byte order) are streamed instead, their order checked row by row;
  rows may come as chunks of columns (:class:`ColumnChunks`), serialised without a
  mapping per row;
* values are serialised one fixed way (:func:`serialise_decimal`: exact digits, ``true``/``false``,
  ISO dates, empty string for ``None``) with one fixed CSV dialect (:class:`BundleDialect`);
* gzip members carry no file name and mtime 0; the tar carries no owner, no
  time and fixed modes; bag-info carries no host name and no build time;
* nothing in the payload (``data/``) depends on the release date or id, so the
  same content always hashes the same; the date and id live in ``bag-info.txt``.

This package knows nothing about Django and nothing about the release store: the
caller passes table specs and iterables of plain row mappings and gets files in a
folder of its choosing (rows in, files out).  It does not validate the finished bag,
install it or make it read-only: the one build path (``releases.build``) does each of
these once.  The tag files are written here rather than by ``bagit.make_bag``
because make_bag changes the process's working directory (unsafe in a threaded
server), hashes the payload a second time, and orders ``tagmanifest-*.txt`` by
``os.listdir`` (file-system dependent); the ``bagit`` library is used to validate
the result instead (:func:`verify_bundle`).

The package, by responsibility (each imports only those above it):

* ``table_format``: specs, row checks and serialisation, the CSV dialect;
* ``order``: rows in key order, streamed or by the external sort, in batches;
* ``bag``: hashed writing, the release id, the tag files, the archive;
* ``package``: datapackage.json and release.json;
* ``changes``: the change list against an earlier release (tag files);
* ``verify``: :func:`verify_bundle`;
* ``writer``: :func:`write_bundle`, a table at a time (:func:`write_table_file`).

Callers import from ``releases.bundle``, the names below.
"""

from __future__ import annotations

from releases.bundle.bag import (
    BAG_SOFTWARE_AGENT,
    CHECKSUM_ALGORITHMS,
    RELEASE_ID_TAG,
    BundleResult,
    FileInfo,
    compute_release_id,
    file_info,
    payload_manifest_sha256,
)
from releases.bundle.changes import CHANGES_CSV, EarlierRelease
from releases.bundle.order import ColumnChunks, KeyOrdered, Rows
from releases.bundle.table_format import (
    BundleDialect,
    BundleError,
    Field,
    ForeignKey,
    TableSpec,
    read_csv_rows,
    serialise_decimal,
    write_csv_rows,
)
from releases.bundle.verify import verify_bundle
from releases.bundle.writer import write_bundle, write_table_file

__all__ = [
    "BAG_SOFTWARE_AGENT",
    "CHECKSUM_ALGORITHMS",
    "BundleDialect",
    "BundleError",
    "BundleResult",
    "CHANGES_CSV",
    "ColumnChunks",
    "FileInfo",
    "EarlierRelease",
    "Field",
    "ForeignKey",
    "KeyOrdered",
    "RELEASE_ID_TAG",
    "Rows",
    "TableSpec",
    "compute_release_id",
    "file_info",
    "payload_manifest_sha256",
    "read_csv_rows",
    "serialise_decimal",
    "verify_bundle",
    "write_bundle",
    "write_csv_rows",
    "write_table_file",
]
