"""The demo content: real papers' benchmark tables curated under `data/examples/` (`examples_load`).

Each document is imported as any paper is (records.imports), in file-name order, after the seed.
Then the review a curator made while curating it is recorded: every evaluation and protocol the
import created is marked source checked (each number was read in the stored source its locator
and quote name), and the document's `reviews` (its reasoned exclusions) are applied once; one
table (PRACTICE_TABLE) is left proposed, for a new curator to practise on. A second
run changes nothing, and leaves alone whatever curators decided on the portal since: a record
reopened by an edit stays for a curator to check, a reinstated one stays reinstated.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

from django.conf import settings
from django.db import transaction

from common.types import Actor
from records.imports import SECTION_BY_KEY, ImportReport, records_import, review_plan
from records.models import Evaluation, Protocol
from reviews.models import ReviewState
from reviews.services import review_transition_apply
from reviews.transitions import TRANSITIONS

EXAMPLES_DIR = Path(settings.BASE_DIR) / "data" / "examples"
# Records whose review the demo loader records after an import.
CHECKED_SECTIONS = ("protocols", "evaluations", "model_aliases", "task_equivalences")
# One real table left proposed, for a new curator to practise the table review and four eyes on
# (Sources > the source > Review its table, that table); drafted from data/tables/ like 07-12.
PRACTICE_TABLE = "08-lindsey-2025-tokenizer-gb-accuracy.json"


@dataclass
class ExamplesReport:
    documents: dict[str, ImportReport] = field(default_factory=dict)
    transitions: int = 0


def example_paths(directory: Path = EXAMPLES_DIR) -> list[Path]:
    """The import documents, in the order they are imported (a later one may name an earlier one's records)."""
    return sorted(path for path in directory.glob("*.json") if not path.name.endswith(".expected.json"))


def example_document(path: Path) -> dict:
    """A document as the import reads it: numbers with a fraction as decimals (0.410 keeps its zero)."""
    return json.loads(path.read_text(encoding="utf-8"), parse_float=Decimal)


@transaction.atomic
def examples_load(*, paths: list[Path] | None = None, actor: Actor = None) -> ExamplesReport:
    """Import the example documents (all of them by default, in order) and record their curation
    review; idempotent."""
    report = ExamplesReport()
    for path in example_paths() if paths is None else paths:
        document = example_document(path)
        imported = report.documents[path.name] = records_import(document=document, actor=actor)
        if path.name == PRACTICE_TABLE:
            continue  # left proposed, its reviews not applied either
        checked = f"Source checked while curating data/examples/{path.name}: the value was read in the stored copy its locator and quote name."
        for section in CHECKED_SECTIONS:
            model = SECTION_BY_KEY[section].model
            created = imported.created.get(section, [])
            for record in model.objects.filter(stable_id__in=created, review_state=ReviewState.PROPOSED):
                review_transition_apply(
                    record=record, transition="check_source", actor=actor, reason=checked, automatic=True
                )
                report.transitions += 1
        for planned in review_plan(document):
            record = SECTION_BY_KEY[planned.section].model.objects.get(stable_id=planned.stable_id)
            if record.review_state in TRANSITIONS[planned.transition].sources and not _applied(
                record, planned.transition
            ):
                review_transition_apply(
                    record=record, transition=planned.transition, actor=actor, reason=planned.reason, automatic=True
                )
                report.transitions += 1
    return report


def _applied(record: Evaluation | Protocol, transition: str) -> bool:
    """Whether the transition was applied to the record before (a curator's later reinstate stands)."""
    from django.contrib.contenttypes.models import ContentType

    from reviews.models import ReviewEvent

    return ReviewEvent.objects.filter(
        content_type=ContentType.objects.get_for_model(type(record)), object_id=record.pk, transition=transition
    ).exists()
