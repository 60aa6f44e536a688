"""Identity across papers: works and their versions (sources), models and the aliases papers print
for them, tasks of different suites that are the same data, and the audit rows of model merges.

A source (records.models.catalogue.Source) is one version of a work: a preprint version, the
conference or journal paper, a repository at a commit. A configuration is a model plus how it was
tested. Which rows are the same measurement is computed from these links (records.agreement).
"""

from __future__ import annotations

import unicodedata

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import F, Q
from django.utils import timezone

from common.history import AuditHistory
from common.text import name_canonical
from records.models.base import CuratedModel, _check, _non_empty, api_list_indexes
from reviews.models import Reviewable


def alias_key(text: str) -> str:
    """One spelling of a printed model name, for matching: case, accents, spaces and punctuation
    other than '.' and '+' do not count ("HyenaDNA (1.6M)" and "hyenadna 1.6m" are one key), while
    letters, digits and symbols do ("DNABERT-2♦", a further pre-trained DNABERT-2, is not "DNABERT-2")."""
    folded = unicodedata.normalize("NFKD", text or "").casefold()
    return "".join(
        char for char in folded if char in ".+" or char.isalnum() or unicodedata.category(char).startswith("S")
    )


class IdentityBasis(models.TextChoices):
    """Who says two names, two tasks or two printings are one: a source, or a curator."""

    STATED = "stated", "stated by a source"
    INFERRED = "inferred", "inferred by a curator"


def _provenance_checks(model: str, *, source_field: str = "source") -> list[models.CheckConstraint]:
    """An identity claim says who makes it: a source (named, with where it says so) or a curator (with a reason)."""
    return [
        _check(
            Q(basis__in=IdentityBasis.values),
            name=f"{model}_basis_valid",
            field="basis",
            message="Say who states it: stated (by a source) or inferred (by a curator).",
        ),
        _check(
            Q(basis=IdentityBasis.INFERRED) | Q(**{f"{source_field}__isnull": False}),
            name=f"{model}_stated_has_source",
            field=source_field,
            message="A claim a source states names that source; a curator's inference is basis inferred, with a reason.",
        ),
        _check(
            Q(basis=IdentityBasis.STATED) | ~Q(reason=""),
            name=f"{model}_inferred_has_reason",
            field="reason",
            message="A curator's inference says why: give the reason.",
        ),
    ]


class Work(CuratedModel):
    """A paper, preprint, dataset or repository as one work, whatever versions of it were read."""

    page_url_name = "pages:work"
    page_priority = 0.5
    title = models.CharField(max_length=500)
    authors_short = models.CharField(max_length=200, blank=True, help_text='e.g. "Nguyen et al. 2023".')
    description = models.TextField(blank=True)
    history = AuditHistory()

    class Meta:
        ordering = ["title", "stable_id"]
        indexes = api_list_indexes("work")
        constraints = [_non_empty("stable_id", "work"), _non_empty("title", "work")]

    def __str__(self) -> str:
        return self.title


class GenomicModel(CuratedModel):
    """A released checkpoint, or an architecture where the paper gives no checkpoint."""

    page_url_name = "pages:model"
    page_priority = 0.7
    name_fields = ("name",)
    name = models.CharField(max_length=300)
    family = models.CharField(max_length=200, blank=True)
    parameter_count = models.BigIntegerField(null=True, blank=True, help_text="Nominal number of parameters.")
    public_id = models.CharField(
        max_length=300,
        blank=True,
        help_text='Where the checkpoint is published, e.g. "LongSafari/hyenadna-tiny-1k-seqlen".',
    )
    revision = models.CharField(max_length=100, blank=True, help_text="The checkpoint's revision, when one is named.")
    introduced_in = models.ForeignKey(
        Work,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="models",
        help_text="The work that introduced it.",
    )
    description = models.TextField(blank=True)
    merged_into = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="merged",
        help_text="Set by a merge: this model is the same as that one (undo the merge to separate them).",
    )
    history = AuditHistory()

    class Meta:
        ordering = ["name", "stable_id"]
        verbose_name = "model"
        indexes = api_list_indexes("genomicmodel")
        constraints = [
            _non_empty("stable_id", "genomicmodel"),
            _non_empty("name", "genomicmodel"),
            _check(
                Q(parameter_count__isnull=True) | Q(parameter_count__gte=1),
                name="genomicmodel_parameters_positive",
                field="parameter_count",
                message="The parameter count must be at least 1.",
            ),
            _check(
                ~Q(merged_into=F("id")),
                name="genomicmodel_not_merged_into_itself",
                field="merged_into",
                message="A model cannot be merged into itself.",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class ModelAlias(CuratedModel, Reviewable):
    """A name a paper prints for a model ("HyenaDNA-1KB", "HyenaDNA (1.6M)"), with who says it names
    the model: the source that prints it (`stated`, with its locator and words) or a curator
    (`inferred`, with the reason). One model may hold several spellings of one name, each with
    the source that prints it; one name (its key) names one model only."""

    name_fields = ("alias",)
    # The aliases a merge, split or undo moves with this one (records.identity): the one-model
    # rule does not count them where they stand before the move.
    moved_with: frozenset[int] = frozenset()
    model = models.ForeignKey(GenomicModel, on_delete=models.CASCADE, related_name="aliases")
    alias = models.CharField(max_length=200)
    key = models.CharField(max_length=200, editable=False, help_text="The alias in one spelling (alias_key).")
    source = models.ForeignKey(
        "records.Source", null=True, blank=True, on_delete=models.PROTECT, related_name="model_aliases"
    )
    locator = models.CharField(max_length=500, blank=True, help_text="Where the source prints it.")
    basis = models.CharField(
        max_length=10,
        choices=IdentityBasis.choices,
        default=IdentityBasis.STATED,
        help_text="Stated: the source prints this name for the model. Inferred: a curator takes it for the model.",
    )
    quote = models.TextField(blank=True, help_text="The source's words that print the name, verbatim.")
    reason = models.TextField(blank=True, help_text="For an inferred alias: why a curator takes it for this model.")
    history = AuditHistory()

    class Meta:
        ordering = ["model_id", "alias"]
        verbose_name_plural = "model aliases"
        indexes = [*api_list_indexes("modelalias"), models.Index(fields=["key"], name="modelalias_key_idx")]
        constraints = [
            _non_empty("stable_id", "modelalias"),
            _non_empty("alias", "modelalias"),
            _non_empty("key", "modelalias"),
            models.UniqueConstraint(
                fields=["key", "source"],
                name="modelalias_key_source_unique",
                violation_error_message="This source's spelling of the name is already recorded.",
            ),
            *_provenance_checks("modelalias"),
        ]

    def __str__(self) -> str:
        return self.alias

    def clean_fields(self, exclude=None) -> None:
        """The key is derived from the alias, never typed: set before the fields are checked, so every
        write path that validates (the services, the import's plan) stores one spelling."""
        self.key = alias_key(name_canonical(self.alias or ""))
        super().clean_fields(exclude=exclude)

    def clean(self) -> None:
        """One name names one model: another model's alias with the same key is refused."""
        super().clean()
        if self.key and self.model_id:
            others = (
                ModelAlias.objects.filter(key=self.key)
                .exclude(model_id=self.model_id)
                .exclude(pk__in={self.pk, *self.moved_with} - {None})
            )
            other = others.select_related("model").first()
            if other is not None:
                raise ValidationError(
                    {"alias": f"Another model has this alias: {other.model.name} ({other.model.stable_id})."}
                )


class TaskEquivalence(CuratedModel, Reviewable):
    """Two tasks (datasets) of different suites that are the same data: stated by a source (its
    locator and words) or inferred by a curator (the reason). Excluded, it joins no family."""

    task = models.ForeignKey("records.Dataset", on_delete=models.CASCADE, related_name="equivalences")
    same_as = models.ForeignKey("records.Dataset", on_delete=models.CASCADE, related_name="equivalences_to")
    source = models.ForeignKey(
        "records.Source", null=True, blank=True, on_delete=models.PROTECT, related_name="task_equivalences"
    )
    locator = models.CharField(max_length=500, blank=True)
    quote = models.TextField(blank=True, help_text="The source's words saying they are the same data, verbatim.")
    basis = models.CharField(
        max_length=10,
        choices=IdentityBasis.choices,
        default=IdentityBasis.STATED,
        help_text="Stated: a source says they are the same data. Inferred: a curator concludes it.",
    )
    reason = models.TextField(blank=True, help_text="For an inferred equivalence: why a curator concludes it.")
    history = AuditHistory()

    class Meta:
        ordering = ["task_id", "same_as_id"]
        indexes = api_list_indexes("taskequivalence")
        constraints = [
            _non_empty("stable_id", "taskequivalence"),
            _check(
                Q(basis=IdentityBasis.INFERRED) | (~Q(locator="") & ~Q(quote="")),
                name="taskequivalence_stated_has_words",
                field="quote",
                message="A source's statement gives its locator and its words, verbatim.",
            ),
            *_provenance_checks("taskequivalence"),
            _check(
                ~Q(task=F("same_as")),
                name="taskequivalence_two_tasks",
                field="same_as",
                message="A task is the same data as another task, not as itself.",
            ),
            models.UniqueConstraint(
                fields=["task", "same_as"],
                name="taskequivalence_once",
                violation_error_message="These two tasks are already recorded as the same data.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.task_id} = {self.same_as_id}"


class ModelChangeKind(models.TextChoices):
    MERGE = "merge", "merge"
    SPLIT = "split", "split"
    UNDO = "undo", "undo"


class ModelChange(models.Model):
    """The audit row of a merge, a split or the undoing of one (records.identity): append-only.

    `configurations` and `aliases` list the stable ids moved from `from_model` to `to_model`, so
    the change can be undone exactly."""

    kind = models.CharField(max_length=10, choices=ModelChangeKind.choices)
    from_model = models.ForeignKey(GenomicModel, on_delete=models.PROTECT, related_name="+")
    to_model = models.ForeignKey(GenomicModel, on_delete=models.PROTECT, related_name="+")
    configurations = models.JSONField(default=list)
    aliases = models.JSONField(default=list)
    undoes = models.OneToOneField("self", null=True, blank=True, on_delete=models.PROTECT, related_name="undone_by")
    reason = models.TextField()
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            _non_empty("reason", "modelchange"),
            _check(
                Q(kind__in=ModelChangeKind.values),
                name="modelchange_kind_valid",
                field="kind",
                message="Unknown kind of model change.",
            ),
            _check(
                Q(kind=ModelChangeKind.UNDO, undoes__isnull=False)
                | (~Q(kind=ModelChangeKind.UNDO) & Q(undoes__isnull=True)),
                name="modelchange_undo_names_change",
                field="undoes",
                message="An undo names the change it undoes, and only an undo does.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.from_model_id} -> {self.to_model_id}"
