"""Evaluations: the measurements, as one source reports each (their results: records.models.results)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import F, Q

from common.history import AuditHistory
from records.models.base import (
    CuratedModel,
    MeasuredBy,
    ReadingMethod,
    _check,
    _non_empty,
    api_list_indexes,
)
from records.models.catalogue import Configuration, Dataset, Protocol, Source
from records.models.evidence_rules import evaluation_comparable, quote_problem_of
from records.models.identity import IdentityBasis
from records.rules import count_off_unit
from records.rules.provenance import Provenance, provenance_of
from reviews.models import Reviewable

if TYPE_CHECKING:
    from records.models.results import Result


class Evaluation(CuratedModel, Reviewable):
    """One measurement of a configuration on a dataset or task under a protocol, as one source reports it.

    Provenance has three parts: the source that reports it (`source`), the party that measured it
    (`measured_by`, `measured_by_name`), and how the curator read it (`reading_method`). A source
    that only copies another's number `repeats` that evaluation: the same measurement reported again,
    counted once in comparisons and never as a replication.
    """

    page_url_name = "pages:evaluation"
    page_priority = 0.5
    # Set on an instance whose value-and-quote check its caller runs on the whole change (the admin's
    # inline, the import's plan), so that `clean` does not read the stored rows it replaces.
    quote_checked_elsewhere = False
    title = models.CharField(max_length=500)
    protocol = models.ForeignKey(Protocol, on_delete=models.PROTECT, related_name="evaluations")
    configuration = models.ForeignKey(Configuration, on_delete=models.PROTECT, related_name="evaluations")
    dataset = models.ForeignKey(
        Dataset,
        on_delete=models.PROTECT,
        related_name="evaluations",
        help_text="The dataset or task it was measured on.",
    )
    measured_by = models.CharField(max_length=20, choices=MeasuredBy.choices, help_text="Who ran the measurement.")
    measured_by_name = models.CharField(
        max_length=300,
        blank=True,
        help_text='Who the third party is, e.g. "Zhou et al. 2024 (DNABERT-2 authors)"; required for a third party.',
    )
    repeats = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="repeated_by",
        help_text="The evaluation whose measurement this source reports again (a copy, not a replication).",
    )
    reading_method = models.CharField(
        max_length=20, choices=ReadingMethod.choices, help_text="How the value was read off its source."
    )
    setup = models.TextField(blank=True, verbose_name="evaluation setup")
    aggregation = models.TextField(blank=True, help_text="Blank when the source does not report it.")
    uncertainty = models.TextField(
        blank=True,
        verbose_name="uncertainty note",
        help_text="The source's words on uncertainty; blank when it reports none. The numbers are on each result.",
    )
    coverage_scored = models.PositiveIntegerField(null=True, blank=True, help_text="Blank when not reported.")
    coverage_eligible = models.PositiveIntegerField(null=True, blank=True, help_text="Blank when not reported.")
    source = models.ForeignKey(
        Source,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="evaluations",
        help_text="The source that reports it.",
    )
    source_locator = models.CharField(max_length=500, blank=True)
    quote = models.TextField(blank=True, help_text="The source's words, verbatim.")
    original_source = models.ForeignKey(
        Source,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="copied_evaluations",
        help_text="The source that first published this number, when this source reports it again (catalogued).",
    )
    # db_default: rows written by code that predates these columns (an older migration's data step) stay valid.
    original_citation = models.CharField(
        max_length=300,
        blank=True,
        default="",
        db_default="",
        help_text='The original when it is not catalogued, e.g. "InstaDeep Nucleotide Transformer leaderboard".',
    )
    original_locator = models.CharField(
        max_length=500, blank=True, default="", db_default="", help_text="Where in the original."
    )
    original_basis = models.CharField(
        max_length=10,
        choices=IdentityBasis.choices,
        blank=True,
        default="",
        db_default="",
        verbose_name="who says it is a copy",
        help_text=(
            "For a copy (a repeat, an original source or citation): stated, the source says whose number it reports "
            "(its locator and quote); inferred, a curator concludes it (give the reason). Blank for an original."
        ),
    )
    original_reason = models.TextField(
        blank=True,
        default="",
        db_default="",
        verbose_name="why a curator takes it for a copy",
        help_text="For an inferred copy: why a curator concludes the number is another's.",
    )
    concern_source = models.ForeignKey(Source, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    concern_locator = models.CharField(max_length=500, blank=True)
    different_measurement = models.CharField(
        max_length=500,
        blank=True,
        help_text=(
            "What makes this a different measurement from the protocol's (model shape, task, step count), e.g. "
            '"30 steps of the tiny preset; the recipe runs 10,000 of nt-v1-500m"; blank when it measures what the '
            "protocol states. A different measurement is labelled as such and never compared with the protocol's own."
        ),
    )
    history = AuditHistory()

    class Meta:
        ordering = ["configuration__name", "stable_id"]
        indexes = api_list_indexes("evaluation")
        constraints = [
            _non_empty("stable_id", "evaluation"),
            _non_empty("title", "evaluation"),
            _check(
                Q(measured_by__in=MeasuredBy.values),
                name="evaluation_measured_by_valid",
                field="measured_by",
                message="Unknown measuring party.",
            ),
            _check(
                ~Q(measured_by=MeasuredBy.THIRD_PARTY) | ~Q(measured_by_name=""),
                name="evaluation_third_party_named",
                field="measured_by_name",
                message="Name the third party that measured it.",
            ),
            _check(
                Q(reading_method__in=ReadingMethod.values),
                name="evaluation_reading_method_valid",
                field="reading_method",
                message="Unknown reading method.",
            ),
            # The portal's own runs are read from their job report, and only they are.
            _check(
                Q(measured_by=MeasuredBy.PORTAL, reading_method=ReadingMethod.JOB_REPORT)
                | (~Q(measured_by=MeasuredBy.PORTAL) & ~Q(reading_method=ReadingMethod.JOB_REPORT)),
                name="evaluation_job_report_iff_portal",
                field="reading_method",
                message="Only the portal's own measurements are read from a job report, and they always are.",
            ),
            _check(
                ~Q(repeats=F("id")),
                name="evaluation_not_own_repeat",
                field="repeats",
                message="An evaluation cannot repeat itself.",
            ),
            _check(
                Q(coverage_scored__isnull=True)
                | Q(coverage_eligible__isnull=True)
                | Q(coverage_scored__lte=F("coverage_eligible")),
                name="evaluation_coverage_scored_le_eligible",
                field="coverage_scored",
                message="More items scored than eligible.",
            ),
            _check(
                Q(original_source__isnull=True) | Q(original_citation=""),
                name="evaluation_original_once",
                field="original_citation",
                message="Name the original either as a catalogued source or as a citation, not both.",
            ),
            _check(
                Q(original_locator="") | Q(original_source__isnull=False) | ~Q(original_citation=""),
                name="evaluation_original_locator_has_original",
                field="original_locator",
                message="A locator in the original needs the original (its source or its citation).",
            ),
            _check(
                Q(repeats__isnull=True) | (Q(original_source__isnull=True) & Q(original_citation="")),
                name="evaluation_repeat_or_original",
                field="repeats",
                message="A repeat points at the catalogued evaluation; an original source or citation is for one that is not catalogued.",
            ),
            _check(
                Q(original_source__isnull=True) | Q(source__isnull=True) | ~Q(original_source=F("source")),
                name="evaluation_original_not_own_source",
                field="original_source",
                message="The original is another source than the one that reports the copy.",
            ),
            _check(
                (Q(repeats__isnull=True, original_source__isnull=True, original_citation="") & Q(original_basis=""))
                | (
                    (Q(repeats__isnull=False) | Q(original_source__isnull=False) | ~Q(original_citation=""))
                    & Q(original_basis__in=IdentityBasis.values)
                ),
                name="evaluation_copy_has_basis",
                field="original_basis",
                message="A copy says who states it is one (stated by its source, or inferred by a curator); an original says nothing.",
            ),
            _check(
                ~Q(original_basis=IdentityBasis.INFERRED) | ~Q(original_reason=""),
                name="evaluation_inferred_copy_has_reason",
                field="original_reason",
                message="A curator's inference that this is a copy says why: give the reason.",
            ),
            # Only the portal's own measurements may lack a literature source.
            _check(
                Q(measured_by=MeasuredBy.PORTAL) | Q(source__isnull=False),
                name="evaluation_reported_has_source",
                field="source",
                message="A reported evaluation needs its source (only the portal's own measurements have none).",
            ),
        ]

    def clean(self) -> None:
        """Moving an evaluation to another protocol must keep its results in that protocol's unit; a
        repeat names the original measurement of the same thing, reported by another source."""
        super().clean()
        protocol = getattr(self, "protocol", None)
        if self.pk is not None and protocol is not None:
            others = count_off_unit(self.results.all(), metric_unit=protocol.metric_unit)
            if others:
                raise ValidationError(
                    {
                        "protocol": f"{others} result(s) of this evaluation are not in {protocol.metric_unit!r}, this protocol's unit"
                    }
                )
        if self.pk is not None:
            moved = self.repeated_by.exclude(
                protocol_id=self.protocol_id, configuration_id=self.configuration_id, dataset_id=self.dataset_id
            )
            if moved.exists() or (self.repeats_id and self.repeated_by.exists()):
                raise ValidationError(
                    {
                        "repeats" if self.repeats_id else "protocol": (
                            f"{self.repeated_by.count()} evaluation(s) repeat this one: they must keep its protocol, configuration and "
                            "dataset, and an original repeats nothing; change or unlink them first"
                        )
                    }
                )
        self._clean_quote_of_stored_results()
        original = self.repeats if self.repeats_id else None
        if original is not None:
            problem = ""
            if original.repeats_id:
                problem = f"{original.stable_id} repeats {original.repeats.stable_id} itself: point to the original measurement"
            elif (original.protocol_id, original.configuration_id, original.dataset_id) != (
                self.protocol_id,
                self.configuration_id,
                self.dataset_id,
            ):
                problem = "the repeated evaluation must have the same protocol, configuration and dataset"
            elif original.measured_by != self.measured_by:
                problem = (
                    f"the same measurement has the same measuring party ({original.get_measured_by_display().lower()})"
                )
            elif self.source_id is not None and original.source_id == self.source_id:
                problem = "a repeat is the same measurement reported by another source; this one has the same source"
            if problem:
                raise ValidationError({"repeats": problem})

    def _clean_quote_of_stored_results(self) -> None:
        """A new quote (or reading method) must still print each stored result's value, or the
        result says why not. Skipped where the caller validates the results alongside, in memory
        (the admin's inline, the import's plan: `quote_checked_elsewhere`)."""
        if self.pk is None or self.quote_checked_elsewhere:
            return
        stored = Evaluation.objects.filter(pk=self.pk).values_list("quote", "reading_method").first()
        if stored is None or stored == (self.quote, self.reading_method):
            return
        problems = [
            f"{result.stable_id}: {problem}"
            for result in self.results.all()
            if (problem := result.quote_problem(evaluation=self))
        ]
        if problems:
            raise ValidationError(
                {
                    "quote": f"{len(problems)} result(s) would contradict this quote ({'; '.join(problems[:5])}): "
                    "correct the values, or record on each result why its quote does not print it"
                }
            )

    def quote_contradictions(self) -> list[tuple[Result, str]]:
        """Its results whose value the quote does not print, each with why (a recorded reason included)."""
        return [
            (result, problem) for result in self.results.all() if (problem := quote_problem_of(result, evaluation=self))
        ]

    def review_check_problems(self) -> list[str]:
        return [f"{result.stable_id}: {problem}" for result, problem in self.quote_contradictions()]

    @property
    def is_copy(self) -> bool:
        """Whether this source reports a number first published elsewhere (catalogued or not)."""
        return bool(self.repeats_id or self.original_source_id or self.original_citation)

    def basis_fill(self) -> None:
        """A copy left without its basis is taken as its source states it (the copying source names
        its original: its locator and quote); an original has none. Run before the fields are
        checked and before a save, so every write path stores the same."""
        cache = self._state.fields_cache  # a planned import names records not written yet
        names_original = bool(
            self.is_copy or cache.get("repeats") is not None or cache.get("original_source") is not None
        )
        if not names_original:
            self.original_basis = ""
        elif not isinstance(self.original_basis, str) or not self.original_basis:
            self.original_basis = IdentityBasis.STATED

    def clean_fields(self, exclude: Any = None) -> None:
        self.basis_fill()
        super().clean_fields(exclude=exclude)

    def save(self, *args: Any, **kwargs: Any) -> None:
        self.basis_fill()
        super().save(*args, **kwargs)

    @property
    def provenance(self) -> Provenance:
        """Where its number comes from, as the same-measurement rule reads it (records.rules.evidence)."""
        return provenance_of(
            source=self.source if self.source_id else None,
            repeats_id=self.repeats_id,
            original_source=self.original_source if self.original_source_id else None,
            original_citation=self.original_citation,
        )

    @property
    def results_with_uncertainty(self) -> list[Result]:
        return [result for result in self.results.all() if result.uncertainty_kind]

    @property
    def is_comparable(self) -> bool:
        return evaluation_comparable(
            review_state=self.review_state,
            original_state=self.repeats.review_state if self.repeats_id is not None else None,
            different_measurement=self.different_measurement,
        )
