"""What a protocol's results are read against and what they help decide: baseline roles (the null
control and the conventional reference) and decisions."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from common.history import AuditHistory
from records.models.base import BaselineKind, BaselineStatus, CuratedModel, _check, _non_empty, api_list_indexes
from records.models.catalogue import Configuration, Protocol
from reviews.models import Reviewable


class BaselineRole(CuratedModel, Reviewable):
    """Per protocol, the null control and the conventional reference."""

    protocol = models.ForeignKey(Protocol, on_delete=models.CASCADE, related_name="baseline_roles")
    kind = models.CharField(max_length=30, choices=BaselineKind.choices)
    status = models.CharField(max_length=20, choices=BaselineStatus.choices, default=BaselineStatus.PROPOSED)
    selection_rule = models.TextField()
    requirements = models.TextField(blank=True, help_text="What must be reviewed before implementation or execution.")
    configuration = models.ForeignKey(
        Configuration,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="baseline_roles",
        help_text="The configuration that fills the role, once one is selected.",
    )
    history = AuditHistory()

    class Meta:
        ordering = ["protocol_id", "kind"]
        indexes = api_list_indexes("baselinerole")
        constraints = [
            _non_empty("stable_id", "baselinerole"),
            models.UniqueConstraint(fields=["protocol", "kind"], name="baselinerole_one_per_kind"),
            _check(
                Q(kind__in=BaselineKind.values),
                name="baselinerole_kind_valid",
                field="kind",
                message="Unknown baseline kind.",
            ),
            _check(
                Q(status__in=BaselineStatus.values),
                name="baselinerole_status_valid",
                field="status",
                message="Unknown baseline status.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} ({self.stable_id})"

    @property
    def is_active(self) -> bool:
        return self.status != BaselineStatus.RETIRED


class Decision(CuratedModel):
    """A choice a reader faces ("Select an execution workflow ..."), assessed by protocols."""

    page_url_name = "pages:decision"
    title = models.CharField(max_length=500)
    description = models.TextField(blank=True)
    protocols = models.ManyToManyField(Protocol, blank=True, related_name="decisions")
    history = AuditHistory(m2m_fields=[protocols])

    class Meta:
        ordering = ["title", "stable_id"]
        indexes = api_list_indexes("decision")
        constraints = [_non_empty("stable_id", "decision"), _non_empty("title", "decision")]
