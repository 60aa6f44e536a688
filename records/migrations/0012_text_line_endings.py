"""Text stored before common.text's rule (CRLF or lone CR line endings, whitespace around a text)
rewritten in its canonical form, with a history row for each rewritten record.

A browser sent the admin's textareas with CRLF, and an import document could hold CR, CRLF or
surrounding whitespace, so some rows hold text in another form than the one every way in now
stores. The rewrite is not an edit: no review is reopened, no last editor changes; the history row
("~", no user) gives the reason below, and the catalogue version is bumped once so that caches and
conditional GETs see the change. A row the database refuses in its new form (a padded unit whose
protocol's unit is padded too: the unit rule's triggers check each row alone) keeps its text.

Import snapshots (what a document held at its last import) get the same form, so that a re-import
compares like with like. The reverse migration changes nothing.
"""

from django.db import IntegrityError, migrations, models, transaction
from django.utils import timezone

from common.text import text_canonical
from records.fields import ExactDecimalField

REASON = "data migration: text in its canonical form (LF line endings, no surrounding whitespace)"

# The catalogue's history-tracked models, with their many-to-many fields whose history
# simple-history keeps beside each history row.
MODELS = {
    "source": (),
    "area": (),
    "context": (),
    "dataset": (),
    "configuration": (),
    "protocol": ("datasets", "areas", "contexts"),
    "limitation": (),
    "evaluation": (),
    "result": (),
    "evidencerow": (),
    "baselinerole": (),
    "decision": ("protocols",),
}


def text_columns(model) -> list[str]:
    return [
        field.attname
        for field in model._meta.concrete_fields
        if isinstance(field, (models.CharField, models.TextField)) and not isinstance(field, ExactDecimalField)
    ]


def rewrites(model, columns: list[str]):
    """(pk, {column: canonical text}) of each row holding text in another form."""
    for pk, *texts in model._default_manager.values_list("pk", *columns).order_by("pk").iterator(chunk_size=2000):
        new = {
            column: text_canonical(text)
            for column, text in zip(columns, texts, strict=True)
            if isinstance(text, str) and text != text_canonical(text)
        }
        if new:
            yield pk, new


def history_row(apps, name: str, model, pk, now) -> None:
    """The history row simple-history would write for the record's save now (with its many-to-many sets)."""
    history_model = apps.get_model("records", f"historical{name}")
    values = model._default_manager.filter(pk=pk).values(*[f.attname for f in model._meta.concrete_fields]).get()
    row = history_model._default_manager.create(
        **values, history_date=now, history_type="~", history_change_reason=REASON, history_user=None
    )
    for field_name in MODELS[name]:
        through = model._meta.get_field(field_name).remote_field.through
        m2m_history = apps.get_model("records", f"historical{name}_{field_name}")
        source = next(f for f in through._meta.concrete_fields if f.is_relation and f.related_model is model)
        for link in through._default_manager.filter(**{source.attname: pk}).values():
            m2m_history._default_manager.create(history=row, **link)


def canonical_text(apps, schema_editor) -> None:
    now = timezone.now()
    rewritten = 0
    for name in MODELS:
        model = apps.get_model("records", name)
        columns = text_columns(model)
        stamped = {"updated_at": now} if any(f.name == "updated_at" for f in model._meta.fields) else {}
        for pk, new in list(rewrites(model, columns)):
            try:
                with transaction.atomic(using=schema_editor.connection.alias):
                    model._default_manager.filter(pk=pk).update(**new, **stamped)
            except IntegrityError:
                continue
            history_row(apps, name, model, pk, now)
            rewritten += 1
    snapshot = apps.get_model("records", "importsnapshot")
    for row in snapshot._default_manager.order_by("pk").iterator(chunk_size=2000):
        values = {key: _canonical_json(value) for key, value in row.values.items()}
        if values != row.values:
            snapshot._default_manager.filter(pk=row.pk).update(values=values)
    if rewritten:
        version = apps.get_model("common", "version")
        if not version._default_manager.filter(name="catalogue").update(number=models.F("number") + 1, changed_at=now):
            version._default_manager.create(name="catalogue", number=1, changed_at=now)


def _canonical_json(value):
    if isinstance(value, str):
        return text_canonical(value)
    if isinstance(value, list):
        return [_canonical_json(item) for item in value]
    return value


class Migration(migrations.Migration):
    dependencies = [
        ("records", "0001_squashed_0011_append_only_audit"),
        ("common", "0001_versions"),
    ]

    operations = [migrations.RunPython(canonical_text, migrations.RunPython.noop)]
