"""The BagIt side of a bundle: files hashed as they are written, the manifests and tag files, the
release id (one digest of the payload manifest), and the reproducible tar.gz of the bag."""

from __future__ import annotations

import csv
import datetime
import gzip
import hashlib
import io
import itertools
import re
import tarfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import BinaryIO

from common.pipeline import OneThread
from releases.bundle.table_format import BundleDialect, BundleError

BAG_SOFTWARE_AGENT = "releases.bundle 1"
"""Pinned so that upgrading a library never changes a bundle's bytes."""

RELEASE_ID_TAG = "External-Identifier"
"""The bag-info.txt element holding the release id (RFC 8493 reserves it for this)."""

BAGIT_TXT = "BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n"
CHECKSUM_ALGORITHMS = ("sha256", "sha512")
GZIP_LEVEL = 9
CSV_BLOCK_CHARACTERS = 1 << 18  # CSV text handed to the compressing thread at a time
CSV_BLOCKS_WAITING = 2  # blocks made but not yet compressed, at most (memory stays a few blocks)
TAR_FORMAT = tarfile.PAX_FORMAT
_PINNED_BAG_INFO = frozenset({"Bagging-Date", "Bag-Software-Agent", "Payload-Oxum", RELEASE_ID_TAG})
_BAG_INFO_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]*$")


@dataclass(frozen=True)
class FileInfo:
    """Size and checksums of one written file; ``name`` is its path inside the bag."""

    name: str
    bytes: int
    sha256: str
    sha512: str


@dataclass(frozen=True)
class BundleResult:
    """Where a bundle lies and what it holds."""

    release_id: str
    bag_dir: Path
    tarball: Path
    payload_files: tuple[FileInfo, ...]
    tarball_info: FileInfo
    row_counts: dict[str, int]
    tag_files: tuple[FileInfo, ...] = ()  # bagit.txt, bag-info.txt, the manifests, the tag manifests

    @property
    def manifest_sha256(self) -> str:
        """The content digest (:func:`payload_manifest_sha256`) of this bundle's payload."""
        return payload_manifest_sha256({f.name: f.sha256 for f in self.payload_files})


# ------------------------------------------------------------- hashed writing


class HashingWriter:
    """A binary sink that counts and hashes (sha256 and sha512) what passes through.

    Checksums are thus computed in the same pass that writes the file.
    """

    def __init__(self, target: BinaryIO) -> None:
        self._target = target
        self._hashes = [hashlib.new(name) for name in CHECKSUM_ALGORITHMS]
        self.bytes = 0

    def write(self, data: bytes) -> int:
        for digest in self._hashes:
            digest.update(data)
        self.bytes += len(data)
        return self._target.write(data)

    def flush(self) -> None:
        self._target.flush()

    def info(self, name: str) -> FileInfo:
        sha256, sha512 = (digest.hexdigest() for digest in self._hashes)
        return FileInfo(name=name, bytes=self.bytes, sha256=sha256, sha512=sha512)


@contextmanager
def hashed_file(path: Path) -> Iterator[HashingWriter]:
    with path.open("xb") as target:
        yield HashingWriter(target)


def gzip_stream(sink: HashingWriter) -> gzip.GzipFile:
    """A gzip stream without file name and with mtime 0, so its bytes depend on content only."""
    return gzip.GzipFile(
        filename="",
        mode="wb",
        fileobj=sink,
        mtime=0,
        compresslevel=GZIP_LEVEL,  # type: ignore[arg-type]
    )


def write_gzip_csv(path: Path, name: str, header: Sequence[str], rows: Iterable[Sequence[str]]) -> tuple[FileInfo, int]:
    """Write ``header`` and ``rows`` (serialised cells) as gzip-compressed CSV hashed as it is written;
    return its info (``name``: its path in the bag) and the number of rows (`write_gzip_csv_batches`)."""
    iterator = iter(rows)
    return write_gzip_csv_batches(path, name, header, iter(lambda: list(itertools.islice(iterator, 1_000)), []))


def write_gzip_csv_batches(
    path: Path,
    name: str,
    header: Sequence[str],
    batches: Iterable[Sequence[Sequence[str]]],
) -> tuple[FileInfo, int]:
    """`write_gzip_csv` of rows given in batches (each written by one ``writerows``).

    Two threads share the work: this one makes the CSV text a block at a time while one more
    compresses and hashes the block before (zlib and hashlib release the GIL). Deflate's output does
    not depend on how its input is cut into blocks; the stream ends, as it always has, with a sync
    flush (what a text wrapper's close gave, before the final block): so the bytes are those of one
    plain ``gzip.GzipFile`` written in one go and flushed before closing.
    """
    count = 0
    with hashed_file(path) as sink, gzip_stream(sink) as compressed:
        compressing = OneThread(waiting=CSV_BLOCKS_WAITING, name="bundle-gzip")
        try:
            text = io.StringIO()
            writer = csv.writer(text, dialect=BundleDialect)
            writer.writerow(header)
            for batch in batches:
                writer.writerows(batch)
                count += len(batch)
                if text.tell() >= CSV_BLOCK_CHARACTERS:
                    compressing.submit(compressed.write, text.getvalue().encode("utf-8"))
                    text = io.StringIO()
                    writer = csv.writer(text, dialect=BundleDialect)
            compressing.submit(compressed.write, text.getvalue().encode("utf-8"))
            compressing.finish()
        finally:
            compressing.abandon()
        compressed.flush()  # zlib.Z_SYNC_FLUSH, as the text wrapper of every earlier release did
    return sink.info(name), count


def file_info(path: Path, name: str) -> FileInfo:
    """Size and checksums of a file already written (``name``: its path inside the bag)."""
    digests = [hashlib.new(algorithm) for algorithm in CHECKSUM_ALGORITHMS]
    size = 0
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            size += len(chunk)
            for digest in digests:
                digest.update(chunk)
    sha256, sha512 = (digest.hexdigest() for digest in digests)
    return FileInfo(name=name, bytes=size, sha256=sha256, sha512=sha512)


def write_bytes(path: Path, bag_path: str, content: bytes) -> FileInfo:
    with hashed_file(path) as sink:
        sink.write(content)
    return sink.info(bag_path)


# ----------------------------------------------------------------- release id


def _manifest_text(digests: Mapping[str, str]) -> str:
    """Manifest lines ``"<digest>  <path>\\n"`` sorted by path (``sha256sum -c`` format)."""
    return "".join(f"{digest}  {path}\n" for path, digest in sorted(digests.items()))


def payload_manifest_sha256(payload_sha256: Mapping[str, str]) -> str:
    """The sha256 (hex) of the payload manifest, ``manifest-sha256.txt``: the release's content digest.

    The one place it is computed: the release id holds its first 12 digits
    (:func:`compute_release_id`), and a release row stores it whole (``payload_sha256``).
    """
    return hashlib.sha256(_manifest_text(payload_sha256).encode("utf-8")).hexdigest()


def compute_release_id(*, release_date: datetime.date, payload_sha256: Mapping[str, str]) -> str:
    """Return ``"YYYY-MM-DD-" + the first 12 hex digits of sha256(payload manifest)``.

    ``payload_sha256`` maps each payload path inside the bag (``"data/<name>"``) to
    the lowercase hex sha256 of that file.  The payload manifest is the UTF-8 bytes
    of the lines ``"<sha256>  data/<name>\\n"`` (two spaces) sorted by path in code
    point order.  Those bytes are exactly the bundle's ``manifest-sha256.txt``, so
    a verifier can recompute the id with::

        echo "$(sed -n 's/^Bagging-Date: //p' bag-info.txt)-$(sha256sum manifest-sha256.txt | cut -c1-12)"
    """
    return f"{release_date.isoformat()}-{payload_manifest_sha256(payload_sha256)[:12]}"


# ------------------------------------------------------------------ tag files


def check_bag_info_extra(extra: Mapping[str, str]) -> None:
    for label, value in extra.items():
        if label in _PINNED_BAG_INFO or not _BAG_INFO_LABEL.match(label):
            raise BundleError(f"bag-info label {label!r} is pinned or malformed")
        if "\r" in value or "\n" in value:
            raise BundleError(f"bag-info value for {label!r} contains a line break")


def bag_info_text(
    release_id: str, release_date: datetime.date, payload: Sequence[FileInfo], extra: Mapping[str, str]
) -> str:
    """bag-info.txt with sorted labels; every value is pinned or given by the caller."""
    info = {
        **extra,
        "Bag-Software-Agent": BAG_SOFTWARE_AGENT,
        "Bagging-Date": release_date.isoformat(),
        "Payload-Oxum": f"{sum(f.bytes for f in payload)}.{len(payload)}",
        RELEASE_ID_TAG: release_id,
    }
    return "".join(f"{label}: {info[label]}\n" for label in sorted(info))


def write_tag_files(
    bag: Path,
    payload: Sequence[FileInfo],
    bag_info: str,
    *,
    metadata: Mapping[str, bytes] = MappingProxyType({}),
    written: Sequence[FileInfo] = (),
) -> tuple[FileInfo, ...]:
    """Write the tag files (and `metadata`: more tag files by their path in the bag, e.g.
    metadata/datacite.json; `written`: tag files already written) and the manifests; return their
    infos (the tag manifests last)."""
    tags: list[FileInfo] = [
        write_bytes(bag / "bagit.txt", "bagit.txt", BAGIT_TXT.encode("utf-8")),
        write_bytes(bag / "bag-info.txt", "bag-info.txt", bag_info.encode("utf-8")),
    ]
    for name, content in sorted(metadata.items()):
        (bag / name).parent.mkdir(parents=True, exist_ok=True)
        tags.append(write_bytes(bag / name, name, content))
    tags += sorted(written, key=lambda info: info.name)
    tags += [_write_manifest(bag, "manifest", algorithm, payload) for algorithm in CHECKSUM_ALGORITHMS]
    tag_manifests = [_write_manifest(bag, "tagmanifest", algorithm, tags) for algorithm in CHECKSUM_ALGORITHMS]
    return (*tags, *tag_manifests)


def _write_manifest(bag: Path, kind: str, algorithm: str, files: Sequence[FileInfo]) -> FileInfo:
    name = f"{kind}-{algorithm}.txt"
    text = _manifest_text({f.name: getattr(f, algorithm) for f in files})
    return write_bytes(bag / name, name, text.encode("utf-8"))


# -------------------------------------------------------------------- archive


def _bag_entries(root: Path) -> list[str]:
    """Every directory and file below ``root`` as sorted relative POSIX paths (parents first)."""
    return sorted(path.relative_to(root).as_posix() for path in root.rglob("*"))


def write_tarball(path: Path, bag: Path, release_id: str) -> FileInfo:
    """A tar.gz of the bag under ``<release_id>/``: sorted, owner 0, no times, fixed modes."""
    with hashed_file(path) as sink:
        with gzip_stream(sink) as compressed, tarfile.open(fileobj=compressed, mode="w", format=TAR_FORMAT) as tar:
            tar.addfile(_tar_entry(release_id, directory=True))
            for relative in _bag_entries(bag):
                _add_to_tar(tar, bag / relative, f"{release_id}/{relative}")
    return sink.info(f"{release_id}.tar.gz")


def _add_to_tar(tar: tarfile.TarFile, source: Path, name: str) -> None:
    if source.is_dir():
        tar.addfile(_tar_entry(name, directory=True))
        return
    member = _tar_entry(name, directory=False)
    member.size = source.stat().st_size
    with source.open("rb") as content:
        tar.addfile(member, content)


def _tar_entry(name: str, *, directory: bool) -> tarfile.TarInfo:
    member = tarfile.TarInfo(name)
    member.type = tarfile.DIRTYPE if directory else tarfile.REGTYPE
    member.mode = 0o755 if directory else 0o644
    member.mtime = 0
    member.uid = member.gid = 0
    member.uname = member.gname = ""
    return member
