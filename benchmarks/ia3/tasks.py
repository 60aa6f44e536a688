"""The 18 tasks of the revised NT downstream benchmark, and the sequences a run trains on.

Task shapes come from the project's one shared table (``data/nt_downstream_tasks_revised.csv``)
so that the catalogue and the runner can never disagree. Sequences come either from a local
task file (``--data``) or are synthesised with the task's length and class count: uniform
random bases by default (a pure speed benchmark), or a learnable variant in which every class
plants its own 6-mer so a short run can show the loss going down.
"""

from __future__ import annotations

import csv
import importlib.util
from dataclasses import dataclass
from pathlib import Path

import numpy as np

TASKS_CSV = Path(__file__).resolve().parents[2] / "data" / "nt_downstream_tasks_revised.csv"

#: The dataset card and its file tree spell two tasks differently; both are accepted.
ALIASES = {"splice_sites_acceptors": "splice_sites_acceptor"}

SYNTHETIC_VARIANTS = ("uniform", "motif")
#: Share of a learnable sequence's 6-mer slots that carry its class motif.
MOTIF_SHARE = 0.25


@dataclass(frozen=True)
class Task:
    name: str
    train_size: int
    test_size: int
    num_classes: int
    sequence_length_bp: int
    metric: str


def _read_tasks() -> dict[str, Task]:
    with TASKS_CSV.open(newline="") as handle:
        return {
            row["task"]: Task(
                name=row["task"],
                train_size=int(row["train_size"]),
                test_size=int(row["test_size"]),
                num_classes=int(row["num_classes"]),
                sequence_length_bp=int(row["sequence_length_bp"]),
                metric=row["metric"],
            )
            for row in csv.DictReader(handle)
        }


TASKS: dict[str, Task] = _read_tasks()


def get_task(name: str) -> Task:
    """The task called ``name`` under either of its spellings."""
    canonical = ALIASES.get(name, name)
    if canonical not in TASKS:
        raise ValueError(f"unknown task {name!r}; known tasks: {', '.join(TASKS)}")
    return TASKS[canonical]


@dataclass(frozen=True)
class Split:
    sequences: list[str]
    labels: list[int]


@dataclass(frozen=True)
class TaskData:
    """What a run trains (and optionally evaluates) on, and where it came from."""

    train: Split
    test: Split | None
    origin: str


# --- local files -------------------------------------------------------------------------


def _read_csv(path: Path) -> Split:
    with path.open(newline="") as handle:
        reader = csv.DictReader(handle)
        missing = {"sequence", "label"} - set(reader.fieldnames or ())
        if missing:
            raise ValueError(f"{path}: missing column(s) {', '.join(sorted(missing))}")
        rows = [(row["sequence"], row["label"]) for row in reader]
    return _split(path, rows)


def _read_parquet(path: Path) -> Split:
    if importlib.util.find_spec("pyarrow") is None:
        raise ValueError(f"{path}: reading parquet needs the 'pyarrow' package, which is not installed")
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    missing = {"sequence", "label"} - set(table.column_names)
    if missing:
        raise ValueError(f"{path}: missing column(s) {', '.join(sorted(missing))}")
    return _split(path, list(zip(table.column("sequence").to_pylist(), table.column("label").to_pylist(), strict=True)))


def _read_fasta(path: Path) -> Split:
    """FASTA whose header ends in the label: ``>name|...|label``."""
    records: list[tuple[str, list[str]]] = []
    for line in path.read_text().splitlines():
        line = line.strip()
        if line.startswith(">"):
            records.append((line[1:], []))
        elif line:
            if not records:
                raise ValueError(f"{path}: sequence data before the first '>' header")
            records[-1][1].append(line)
    return _split(path, [("".join(chunks), header.rsplit("|", 1)[-1]) for header, chunks in records])


def _split(path: Path, rows: list[tuple[str, object]]) -> Split:
    if not rows:
        raise ValueError(f"{path}: no sequences")
    try:
        labels = [int(str(label).strip()) for _, label in rows]
    except ValueError as error:
        raise ValueError(f"{path}: labels must be integers ({error})") from None
    return Split([str(sequence).strip() for sequence, _ in rows], labels)


READERS = {".csv": _read_csv, ".parquet": _read_parquet, ".fasta": _read_fasta, ".fa": _read_fasta, ".fna": _read_fasta}


def _read_file(path: Path) -> Split:
    reader = READERS.get(path.suffix.lower())
    if reader is None:
        raise ValueError(f"{path}: unsupported file type (use {', '.join(READERS)})")
    return reader(path)


def _find_split(directory: Path, split: str) -> Path | None:
    found = [path for suffix in READERS if (path := directory / f"{split}{suffix}").is_file()]
    if len(found) > 1:
        raise ValueError(f"{directory}: several {split} files ({', '.join(p.name for p in found)})")
    return found[0] if found else None


def load_local(path: str | Path) -> TaskData:
    """A task from one file (train only) or from a directory holding ``train.*`` and
    optionally ``test.*`` in CSV, parquet or FASTA."""
    location = Path(path)
    if location.is_file():
        return TaskData(_read_file(location), None, str(location))
    if not location.is_dir():
        raise ValueError(f"{location}: no such file or directory")
    train = _find_split(location, "train")
    if train is None:
        raise ValueError(f"{location}: no train file (train.csv, train.parquet or train.fasta)")
    test = _find_split(location, "test")
    return TaskData(_read_file(train), _read_file(test) if test else None, str(location))


# --- synthetic sequences -----------------------------------------------------------------


def _random_split(
    rng: np.random.Generator, size: int, length: int, num_classes: int, motifs: np.ndarray | None
) -> Split:
    """Balanced labels over uniform bases; with ``motifs``, each class's 6-mer overwrites
    a share of the 6-mer-aligned slots so it lands on whole tokens."""
    labels = rng.permutation(np.arange(size) % num_classes)
    slots = length // 6
    head = rng.integers(0, 4, size=(size, slots, 6), dtype=np.uint8)
    tail = rng.integers(0, 4, size=(size, length - 6 * slots), dtype=np.uint8)
    if motifs is not None:
        planted = rng.random((size, slots)) < MOTIF_SHARE
        head[planted] = motifs[np.broadcast_to(labels[:, None], planted.shape)[planted]]
    letters = np.frombuffer(b"ACGT", dtype=np.uint8)[np.concatenate([head.reshape(size, -1), tail], axis=1)]
    return Split([row.tobytes().decode("ascii") for row in letters], labels.tolist())


def synthetic(task: Task, train_size: int, test_size: int, seed: int, variant: str = "uniform") -> TaskData:
    """Seeded synthetic sequences of the task's length and class count."""
    if variant not in SYNTHETIC_VARIANTS:
        raise ValueError(f"unknown synthetic variant {variant!r}; choose from {', '.join(SYNTHETIC_VARIANTS)}")
    rng = np.random.default_rng(seed)
    motifs = None
    if variant == "motif":
        codes = rng.choice(4**6, size=task.num_classes, replace=False)
        motifs = ((codes[:, None] // 4 ** np.arange(5, -1, -1)) % 4).astype(np.uint8)
    train = _random_split(rng, train_size, task.sequence_length_bp, task.num_classes, motifs)
    test = _random_split(rng, test_size, task.sequence_length_bp, task.num_classes, motifs) if test_size else None
    return TaskData(train, test, "synthetic")
