"""Nucleotide Transformer's non-overlapping 6-mer tokenizer, in both of its id layouts.

The algorithm and both layouts follow InstaDeep's reference implementation
(github.com/instadeepai/nucleotide-transformer, ``nucleotide_transformer/tokenizers.py``,
``constants.py`` and ``pretrained.py``), because a checkpoint's embedding rows are only
meaningful under the exact ids it was trained with:

* the sequence is split on ``N``; each piece is cut left to right into 6-mers and a piece's
  tail shorter than 6 becomes single-nucleotide tokens; every ``N`` is its own token;
* a ``<cls>`` token is prepended and no ``<eos>`` is appended (``prepend_cls_token=True``);
* 6-mers are enumerated as ``itertools.product("ATCG", repeat=6)``, i.e. with the
  nucleotide order A, T, C, G, so ``AAAAAA`` comes first and ``GGGGGG`` last;
* **v1** (``NucleotidesKmersTokenizer`` default ids): ``<unk> <pad> <mask> <cls>`` = 0..3,
  the 4,096 6-mers = 4..4099, ``A T C G N`` = 4100..4104, then ``<eos> <bos>`` = 4105, 4106.
  The v1 models' embedding has ``len(vocabulary) - 2`` = 4,105 rows, so ``<eos>``/``<bos>``
  have ids but no embedding; they are never emitted here, so every id stays below 4,105;
* **v2** (``compute_tokens_to_ids_v2``): the six special tokens first,
  ``<unk> <pad> <mask> <cls> <eos> <bos>`` = 0..5, the 6-mers = 6..4101 and
  ``A T C G N`` = 4102..4106, 4,107 ids in all.

The reference docs' own example, ``ACGTGTACNTGCACGGANCGACTAGTCTGA``, tokenises as
``<cls> ACGTGT A C N TGCACG G A N CGACTA GTCTGA``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import product

import numpy as np
import torch

K = 6
NUCLEOTIDES = "ATCG"
ALLOWED = frozenset("ACGTN")
CLS_TOKEN = "<cls>"


def _kmers() -> list[str]:
    return ["".join(letters) for letters in product(NUCLEOTIDES, repeat=K)]


@dataclass(frozen=True)
class VocabLayout:
    """Where each token lives in one generation's embedding table."""

    name: str
    special_tokens: tuple[str, ...]
    vocab_size: int
    token_to_id: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        standard = _kmers() + list(NUCLEOTIDES) + ["N"]
        ids = {token: index for index, token in enumerate([*self.special_tokens, *standard])}
        object.__setattr__(self, "token_to_id", ids)

    @property
    def pad_id(self) -> int:
        return self.token_to_id["<pad>"]

    @property
    def mask_id(self) -> int:
        return self.token_to_id["<mask>"]


LAYOUTS: dict[str, VocabLayout] = {
    "v1": VocabLayout("v1", ("<unk>", "<pad>", "<mask>", "<cls>"), vocab_size=4105),
    "v2": VocabLayout("v2", ("<unk>", "<pad>", "<mask>", "<cls>", "<eos>", "<bos>"), vocab_size=4107),
}


def _normalise(sequence: str) -> str:
    """Upper-case the sequence and reject anything but A, C, G, T and N with its position,
    because an unknown letter silently mapped to ``<unk>`` would corrupt a benchmark."""
    upper = sequence.upper()
    if not ALLOWED.issuperset(upper):
        position, letter = next((i, c) for i, c in enumerate(upper) if c not in ALLOWED)
        raise ValueError(
            f"invalid character {sequence[position]!r} at position {position} of a DNA sequence "
            f"(only A, C, G, T and N are allowed)"
        )
    return upper


def split_tokens(sequence: str) -> list[str]:
    """The tokens of ``sequence`` as strings, ``<cls>`` first."""
    tokens = [CLS_TOKEN]
    for index, piece in enumerate(_normalise(sequence).split("N")):
        if index:
            tokens.append("N")
        whole = len(piece) - len(piece) % K
        tokens.extend(piece[start : start + K] for start in range(0, whole, K))
        tokens.extend(piece[whole:])
    return tokens


def tokenize(sequence: str, layout: str = "v1") -> list[int]:
    """The token ids of ``sequence`` under the ``v1`` or ``v2`` layout, ``<cls>`` first."""
    ids = LAYOUTS[layout].token_to_id
    return [ids[token] for token in split_tokens(sequence)]


def encode_batch(
    sequences: Sequence[str], layout: str, max_tokens: int, truncate: bool = False
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Tokenise once into one padded id matrix, so the training loop only ever indexes it.

    Returns the ids and an attention mask, or ``None`` for the mask when every sequence has
    the same length, so that the common fixed-length case runs attention without a mask.
    Sequences longer than ``max_tokens`` are an error unless ``truncate`` is set, because a
    silently shortened input changes what is being benchmarked.
    """
    rows = []
    for index, sequence in enumerate(sequences):
        try:
            rows.append(tokenize(sequence, layout))
        except ValueError as error:
            raise ValueError(f"sequence {index + 1}: {error}") from None
    longest = max(len(row) for row in rows)
    if longest > max_tokens:
        if not truncate:
            raise ValueError(
                f"a sequence is {longest} tokens long but the model takes at most {max_tokens}; "
                "set max_length (--max-length) to truncate"
            )
        rows = [row[:max_tokens] for row in rows]
        longest = max_tokens
    pad = LAYOUTS[layout].pad_id
    uniform = all(len(row) == longest for row in rows)
    padded = rows if uniform else [row + [pad] * (longest - len(row)) for row in rows]
    ids = torch.from_numpy(np.array(padded, dtype=np.int64))
    return ids, None if uniform else (ids != pad).long()
