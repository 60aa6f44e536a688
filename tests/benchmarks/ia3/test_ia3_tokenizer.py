"""The NT 6-mer tokenizer: the documented example, token counts and both id layouts."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest
import torch

from benchmarks.ia3 import LAYOUTS, split_tokens, tokenize
from benchmarks.ia3.tokenizer import encode_batch

DOCUMENTED = "ACGTGTACNTGCACGGANCGACTAGTCTGA"


def test_it_tokenises_the_documented_example():
    assert split_tokens(DOCUMENTED) == [
        "<cls>",
        "ACGTGT",
        "A",
        "C",
        "N",
        "TGCACG",
        "G",
        "A",
        "N",
        "CGACTA",
        "GTCTGA",
    ]


def test_it_starts_the_documented_example_with_cls_acgtgt_a_c_n_in_both_layouts():
    for layout in ("v1", "v2"):
        ids = LAYOUTS[layout].token_to_id
        assert tokenize(DOCUMENTED, layout)[:5] == [ids["<cls>"], ids["ACGTGT"], ids["A"], ids["C"], ids["N"]]


@pytest.mark.parametrize(("length", "tokens"), [(300, 51), (400, 71), (600, 101), (1000, 171), (5994, 1000)])
def test_it_gives_one_token_per_6mer_plus_tail_nucleotides_plus_cls(length, tokens):
    assert len(tokenize("ACGT" * (length // 4) + "ACGT"[: length % 4])) == tokens


def test_it_uses_the_reference_ids_of_each_layout():
    v1, v2 = LAYOUTS["v1"].token_to_id, LAYOUTS["v2"].token_to_id
    assert [v1[t] for t in ("<unk>", "<pad>", "<mask>", "<cls>")] == [0, 1, 2, 3]
    assert (v1["AAAAAA"], v1["AAAAAT"], v1["AAAATA"], v1["GGGGGG"]) == (4, 5, 8, 4099)
    assert [v1[n] for n in "ATCGN"] == [4100, 4101, 4102, 4103, 4104]
    assert [v2[t] for t in ("<unk>", "<pad>", "<mask>", "<cls>", "<eos>", "<bos>")] == [0, 1, 2, 3, 4, 5]
    assert (v2["AAAAAA"], v2["GGGGGG"]) == (6, 4101)
    assert [v2[n] for n in "ATCGN"] == [4102, 4103, 4104, 4105, 4106]


@pytest.mark.parametrize("layout", ["v1", "v2"])
def test_every_id_stays_inside_its_layouts_vocabulary(layout):
    spec = LAYOUTS[layout]
    assert sorted(spec.token_to_id.values()) == list(range(spec.vocab_size))
    assert max(tokenize("GGGGGGN" * 20 + "TTTTT", layout)) < spec.vocab_size


def test_it_upper_cases_lowercase_input():
    assert tokenize("acgtgtacntgc") == tokenize("ACGTGTACNTGC")


def test_it_rejects_any_other_character_naming_it_and_its_position():
    with pytest.raises(ValueError, match=r"invalid character 'x' at position 3"):
        tokenize("ACGxTT")


def test_a_batch_of_equal_lengths_needs_no_attention_mask():
    ids, mask = encode_batch(["ACGTGTACGTGC", "TTTTTTAAAAAA"], "v1", max_tokens=10)
    assert ids.shape == (2, 3) and mask is None


def test_a_ragged_batch_is_padded_and_masked():
    ids, mask = encode_batch(["ACGTGT", "ACGTGTA"], "v2", max_tokens=10)
    pad = LAYOUTS["v2"].pad_id
    assert ids[0].tolist()[-1] == pad
    assert mask.tolist() == [[1, 1, 0], [1, 1, 1]]
    assert ids.dtype == torch.long


def test_a_sequence_longer_than_the_model_is_an_error_unless_truncation_is_asked_for():
    with pytest.raises(ValueError, match="at most 3"):
        encode_batch(["ACGTGT" * 5], "v1", max_tokens=3)
    ids, _ = encode_batch(["ACGTGT" * 5], "v1", max_tokens=3, truncate=True)
    assert ids.shape == (1, 3)
