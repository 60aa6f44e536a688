"""Evidence rows: a source's statement about a protocol's (or an evaluation's) field."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from common.history import AuditHistory
from records.models.base import CuratedModel, EvidenceSupport, _check, _non_empty, api_list_indexes
from records.models.catalogue import Protocol, Source
from records.models.evidence import Evaluation
from reviews.models import Reviewable


class EvidenceRow(CuratedModel, Reviewable):
    protocol = models.ForeignKey(Protocol, on_delete=models.PROTECT, related_name="evidence_rows")
    evaluation = models.ForeignKey(
        Evaluation, null=True, blank=True, on_delete=models.PROTECT, related_name="evidence_rows"
    )
    property_name = models.CharField(max_length=100, help_text="The field the statement is about, e.g. metric.")
    statement = models.TextField()
    source = models.ForeignKey(Source, on_delete=models.PROTECT, related_name="evidence_rows")
    locator = models.CharField(max_length=500)
    quote = models.TextField(blank=True)
    support = models.CharField(max_length=20, choices=EvidenceSupport.choices, default=EvidenceSupport.VERIFIES_FIELD)
    history = AuditHistory()

    class Meta:
        ordering = ["protocol_id", "property_name", "stable_id"]
        indexes = api_list_indexes("evidencerow")
        constraints = [
            _non_empty("stable_id", "evidencerow"),
            _non_empty("statement", "evidencerow"),
            _check(
                Q(support__in=EvidenceSupport.values),
                name="evidencerow_support_valid",
                field="support",
                message="Unknown kind of support.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.property_name}: {self.statement[:60]}"
