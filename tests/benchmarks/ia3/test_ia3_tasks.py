"""The task table, local task files and synthetic data."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import importlib.util
from pathlib import Path

import pytest

from benchmarks.ia3 import TASKS, get_task, split_tokens
from benchmarks.ia3.tasks import TASKS_CSV, load_local, synthetic


def test_it_reads_the_18_tasks_from_the_shared_table():
    assert TASKS_CSV == Path(__file__).resolve().parents[3] / "data" / "nt_downstream_tasks_revised.csv"
    assert len(TASKS) == 18
    promoter = TASKS["promoter_all"]
    assert (promoter.train_size, promoter.test_size, promoter.num_classes, promoter.sequence_length_bp) == (
        30000,
        1584,
        2,
        300,
    )
    assert TASKS["H3K9ac"].train_size == 23274
    assert TASKS["splice_sites_all"].num_classes == 3


def test_it_accepts_both_spellings_of_the_splice_tasks():
    assert get_task("splice_sites_acceptors") is get_task("splice_sites_acceptor")
    assert get_task("splice_sites_donor").name == "splice_sites_donor"


def test_an_unknown_task_is_an_error_listing_the_known_ones():
    with pytest.raises(ValueError, match="unknown task 'nope'.*promoter_all"):
        get_task("nope")


def test_synthetic_data_is_seeded_balanced_and_of_the_tasks_length():
    task = get_task("enhancers_types")
    first = synthetic(task, 30, 6, seed=3)
    assert first == synthetic(task, 30, 6, seed=3)
    assert first != synthetic(task, 30, 6, seed=4)
    assert first.origin == "synthetic"
    assert sorted(first.train.labels) == [0] * 10 + [1] * 10 + [2] * 10
    assert {len(s) for s in first.train.sequences + first.test.sequences} == {400}
    assert set("".join(first.train.sequences)) == set("ACGT")


def test_the_learnable_variant_plants_one_whole_token_motif_per_class():
    data = synthetic(get_task("promoter_all"), 40, 0, seed=0, variant="motif")
    assert data.test is None
    counts = {}
    for sequence, label in zip(data.train.sequences, data.train.labels, strict=True):
        for token in split_tokens(sequence)[1:]:
            counts.setdefault(label, {}).setdefault(token, 0)
            counts[label][token] += 1
    motif = {label: max(tokens, key=tokens.get) for label, tokens in counts.items()}
    assert motif[0] != motif[1]
    assert counts[0][motif[0]] > 5 * counts[1].get(motif[0], 0)


def test_it_reads_a_directory_with_csv_train_and_test_files(tmp_path):
    (tmp_path / "train.csv").write_text("sequence,label\nACGTACGTACGT,0\nttttggggcccc,1\n")
    (tmp_path / "test.csv").write_text("sequence,label\nACGTNACGT,1\n")
    data = load_local(tmp_path)
    assert data.train.sequences == ["ACGTACGTACGT", "ttttggggcccc"] and data.train.labels == [0, 1]
    assert data.test.labels == [1]
    assert data.origin == str(tmp_path)


def test_it_reads_a_fasta_file_whose_headers_end_in_the_label(tmp_path):
    path = tmp_path / "task.fasta"
    path.write_text(">seq1|1\nACGTAC\nGTACGT\n>seq2|chr1:5-17|0\nTTTTTTAAAAAA\n")
    data = load_local(path)
    assert data.train.sequences == ["ACGTACGTACGT", "TTTTTTAAAAAA"]
    assert data.train.labels == [1, 0]
    assert data.test is None


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("train.csv", "seq,label\nACGT,0\n", "missing column"),
        ("train.csv", "sequence,label\nACGT,yes\n", "labels must be integers"),
        ("train.fasta", "ACGT\n>s|0\nACGT\n", "before the first"),
        ("train.txt", "ACGT\n", "unsupported file type"),
    ],
)
def test_a_malformed_task_file_is_an_error_saying_why(tmp_path, name, content, message):
    (tmp_path / name).write_text(content)
    with pytest.raises(ValueError, match=message):
        load_local(tmp_path / name)


def test_a_directory_without_a_train_file_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="no train file"):
        load_local(tmp_path)


@pytest.mark.skipif(importlib.util.find_spec("pyarrow") is not None, reason="pyarrow is installed")
def test_parquet_without_pyarrow_names_the_missing_package(tmp_path):
    (tmp_path / "train.parquet").write_bytes(b"PAR1")
    with pytest.raises(ValueError, match="needs the 'pyarrow' package"):
        load_local(tmp_path)
