"""What the public may suggest corrections to, and how an accepted suggestion is applied.

The reviews app owns suggestions and their moderation but never imports this app; it reaches
these functions through `settings.CORRECTION_TARGETS` (this module's dotted path).
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import models, transaction

from records import models as m
from records.services import record_save, reviewed_owner
from reviews.services import review_reopen_if_reviewed

# model name -> (field, label) pairs a suggestion may concern; the order is the form's order.
CORRECTABLE_FIELDS: dict[str, tuple[tuple[str, str], ...]] = {
    "protocol": (
        ("title", "title"), ("summary", "summary"), ("procedure", "procedure"), ("version_label", "version"),
        ("metric_description", "metric description"), ("metric_unit", "metric unit"), ("source_locator", "source locator"),
    ),
    "evaluation": (
        ("title", "title"), ("setup", "evaluation setup"), ("aggregation", "aggregation"), ("uncertainty", "uncertainty"),
        ("coverage_scored", "coverage scored"), ("coverage_eligible", "coverage eligible"),
        ("source_locator", "source locator"), ("quote", "quote"), ("concern_locator", "concern locator"),
    ),
    "result": (
        ("value", "value"), ("unit", "unit"), ("printed_value", "printed value"),
        ("lower_bound", "lower bound"), ("upper_bound", "upper bound"), ("num_runs", "number of runs"),
    ),
    "configuration": (("name", "name"), ("family", "family"), ("parameter_count", "parameter count"), ("method", "method")),
    "dataset": (
        ("name", "name"), ("description", "description"), ("train_size", "train size"), ("test_size", "test size"),
        ("num_classes", "classes"), ("sequence_length_bp", "sequence length (bp)"), ("metric", "metric"),
    ),
    "source": (
        ("title", "title"), ("venue", "venue"), ("citation", "citation"), ("published_date", "published date"),
        ("doi", "DOI"), ("pmcid", "PMCID"), ("url", "URL"),
    ),
    "evidencerow": (("statement", "statement"), ("locator", "locator"), ("quote", "quote")),
    "baselinerole": (("selection_rule", "selection rule"), ("requirements", "requirements")),
    "decision": (("title", "title"), ("description", "description")),
}
MODELS: dict[str, type[models.Model]] = {
    model._meta.model_name: model
    for model in (m.Protocol, m.Evaluation, m.Result, m.Configuration, m.Dataset, m.Source, m.EvidenceRow, m.BaselineRole, m.Decision)
}
# A protocol page offers its results' values too, up to this many (beyond, each evaluation page has its form).
PAGE_RESULT_CHOICES = 200


def target_types() -> list[str]:
    return list(MODELS)


def resolve(target_type: str, stable_id: str) -> models.Model | None:
    model = MODELS.get(target_type)
    return None if model is None else model.objects.filter(stable_id=stable_id).first()


def field_label(target_type: str, field_name: str) -> str | None:
    return dict(CORRECTABLE_FIELDS.get(target_type, ())).get(field_name)


def field_text(record: models.Model, field_name: str) -> str:
    """A field's current value as plain text (exact decimals, ISO dates, related records by stable id)."""
    value = getattr(record, field_name)
    if value is None:
        return ""
    if isinstance(value, models.Model):
        return getattr(value, "stable_id", str(value.pk))
    if hasattr(value, "as_tuple"):
        return m.format_decimal(value)
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


def label_of(record: models.Model) -> str:
    if isinstance(record, m.Result):
        return f"{record.evaluation.title}: {record.display_value} {record.unit}"
    return str(record)


def protocol_of(record: models.Model) -> str:
    if isinstance(record, m.Protocol):
        return record.stable_id
    if isinstance(record, m.Result):
        return record.evaluation.protocol.stable_id
    protocol = getattr(record, "protocol", None)
    return protocol.stable_id if protocol is not None else ""


def page_choices(record: models.Model) -> list[tuple[str, str]]:
    """The options of a record page's "what should change?" select: (type:stable_id:field, label)."""
    kind = record._meta.model_name
    choices = [(f"{kind}:{record.stable_id}:", f"this {record._meta.verbose_name} as a whole")]
    choices += [(f"{kind}:{record.stable_id}:{name}", label) for name, label in CORRECTABLE_FIELDS[kind]]
    if isinstance(record, m.Protocol):
        results = m.Result.objects.filter(evaluation__protocol=record).select_related("evaluation__configuration")
        results = results.order_by("evaluation__configuration__name", "stable_id")[:PAGE_RESULT_CHOICES]
    elif isinstance(record, m.Evaluation):
        results = record.results.select_related("evaluation__configuration").order_by("stable_id")
    else:
        results = []
    for result in results:
        name = result.evaluation.configuration.short_name or result.evaluation.configuration.name
        choices.append((f"result:{result.stable_id}:value", f"value of {name} ({result.display_value} {result.unit})"))
    return choices


@transaction.atomic
def apply_value(*, record: models.Model, field_name: str, value_text: str, actor, correction_id: int) -> None:
    """Write an accepted suggestion's value through the records service, then reopen the record.

    Raises ValidationError (naming the field) when the text is not a valid value for the field.
    """
    if field_label(record._meta.model_name, field_name) is None:
        raise ValidationError({field_name: "this field cannot be changed by a suggestion"})
    field = record._meta.get_field(field_name)
    try:
        value = field.clean(value_text.strip() if value_text.strip() or not field.null else None, record)
    except ValidationError as exc:
        raise ValidationError({field_name: exc.messages}) from None
    setattr(record, field_name, value)
    reason = f"correction #{correction_id} accepted: {field_name}"
    record_save(record=record, actor=actor, changed_fields=[field_name], reason=reason)
    owner = reviewed_owner(record)
    if owner is not None:  # any accepted value, sourced or not, is news to the record's review
        review_reopen_if_reviewed(record=owner, actor=actor, reason=reason)
