"""The shipped examples drafted from pasted tables (data/tables/NN-*) are exactly what the table
draft makes of them today, each against the catalogue holding the examples before it: the pasted
text, the request and the document never drift apart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from records.examples import EXAMPLES_DIR, example_document, example_paths, examples_load
from records.models import Evaluation
from records.tables import request_read, table_draft
from reviews.models import ReviewState

pytestmark = [pytest.mark.django_db, pytest.mark.backend_independent]
TABLES = Path(EXAMPLES_DIR).parent / "tables"


def test_each_pasted_table_drafts_its_shipped_example_and_one_is_left_to_practise_on(seeded):
    drafted = []
    for path in example_paths():
        folder = TABLES / path.stem
        if folder.is_dir():
            paste = folder / "paste.txt" if (folder / "paste.txt").exists() else folder / "table.txt"
            request = request_read(json.loads((folder / "request.json").read_text()), text=paste.read_text())
            draft = table_draft(request=request, actor=None)
            assert [p.message for p in draft.problems] == [], path.name
            assert draft.document == json.loads(path.read_text(encoding="utf-8")), path.name
            drafted.append(path.name)
        examples_load(paths=[path])
    assert len(drafted) >= 6
    practice = example_document(EXAMPLES_DIR / "08-lindsey-2025-tokenizer-gb-accuracy.json")
    ids = [e["stable_id"] for e in practice["evaluations"]]
    assert set(Evaluation.objects.filter(stable_id__in=ids).values_list("review_state", flat=True)) == {
        ReviewState.PROPOSED
    }
    others = example_document(EXAMPLES_DIR / "07-lindsey-2025-tokenizer-gue-mcc.json")["evaluations"]
    assert set(
        Evaluation.objects.filter(stable_id__in=[e["stable_id"] for e in others]).values_list("review_state", flat=True)
    ) == {ReviewState.SOURCE_CHECKED}
