"""factory_boy factories for the catalogue. Review states are set only through the review service."""

from __future__ import annotations

from decimal import Decimal

import factory

from records.models import (
    Configuration,
    Dataset,
    Direction,
    Evaluation,
    GenomicModel,
    MeasuredBy,
    ModelAlias,
    Protocol,
    ReadingMethod,
    Result,
    Source,
    SourceKind,
    Work,
    alias_key,
)
from releases.models import Release, ReleaseBuild


class WorkFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Work

    stable_id = factory.Sequence(lambda n: f"work-{n}")
    title = factory.Sequence(lambda n: f"A work about genomic models, number {n}")


class GenomicModelFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = GenomicModel

    stable_id = factory.Sequence(lambda n: f"model-{n}")
    name = factory.Sequence(lambda n: f"Genomic model {n:05d}")
    family = "Test family"


class ModelAliasFactory(factory.django.DjangoModelFactory):
    """An alias; its key is derived as the services and the import derive it."""

    class Meta:
        model = ModelAlias

    stable_id = factory.Sequence(lambda n: f"alias-{n}")
    model = factory.SubFactory(GenomicModelFactory)
    alias = factory.Sequence(lambda n: f"Printed name {n}")
    key = factory.LazyAttribute(lambda o: alias_key(o.alias))
    source = factory.SubFactory("tests.factories.SourceFactory")  # a stated alias names the source that prints it


class SourceFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Source

    stable_id = factory.Sequence(lambda n: f"source-{n}")
    title = factory.Sequence(lambda n: f"A paper about genomic models, part {n}")
    venue = "Test Venue"
    kind = SourceKind.PAPER


class DatasetFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Dataset
        django_get_or_create = ("stable_id",)

    stable_id = factory.Sequence(lambda n: f"dataset-{n}")
    name = factory.Sequence(lambda n: f"Dataset {n}")


class ConfigurationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Configuration

    stable_id = factory.Sequence(lambda n: f"configuration-{n}")
    name = factory.Sequence(lambda n: f"Model {n:05d}, fine-tuned")
    family = "Test family"


class ProtocolFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Protocol

    stable_id = factory.Sequence(lambda n: f"protocol-{n}")
    title = factory.Sequence(lambda n: f"Protocol {n}")
    summary = "What the protocol measures."
    metric_name = "Runtime"
    metric_short_name = "runtime"
    metric_description = "Mean wall time"
    metric_unit = "minute"
    metric_direction = Direction.LOWER
    source = factory.SubFactory(SourceFactory)


class EvaluationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Evaluation

    stable_id = factory.Sequence(lambda n: f"evaluation-{n}")
    title = factory.Sequence(lambda n: f"Evaluation {n}")
    protocol = factory.SubFactory(ProtocolFactory)
    configuration = factory.SubFactory(ConfigurationFactory)
    # One dataset unless a test says otherwise: comparisons are made within a dataset or task.
    dataset = factory.SubFactory(DatasetFactory, stable_id="dataset-default", name="Default dataset")
    measured_by = MeasuredBy.AUTHORS
    reading_method = ReadingMethod.TABLE
    source = factory.SelfAttribute("protocol.source")
    source_locator = "Table 1"
    # No quote unless a test gives one: a quote must print its results' values (records.values).
    quote = ""


class ResultFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Result

    stable_id = factory.Sequence(lambda n: f"result-{n}")
    evaluation = factory.SubFactory(EvaluationFactory)
    value = Decimal("1")
    unit = factory.SelfAttribute("evaluation.protocol.metric_unit")
    printed_value = factory.LazyAttribute(lambda o: f"{o.value}")


def release_with_build(
    *, release_date: object = None, pk: int | None = None, release_id: str | None = None, **build_fields: object
) -> Release:
    """An unpublished release (with its `counts` and `note`, if given) and its build (`ReleaseBuild`)
    with the other `build_fields` (status, error, sent_at, ...), for tests of the build's lifecycle."""
    from django.utils import timezone

    release_fields = {name: build_fields.pop(name) for name in ("counts", "note") if name in build_fields}
    release = Release.objects.create(
        pk=pk, release_date=release_date or timezone.localdate(), release_id=release_id, **release_fields
    )
    ReleaseBuild.objects.create(release=release, **build_fields)
    return release
