"""The API lists' lean read path: rows as `values()` dicts, shaped by the serializers' own fields.

A list page builds no model instance per row and no serializer per request: the columns are read
once from the record's serializer (`RowShape`), the page's rows come from one `values()` query
and their nested results from one more, and each cell goes through the same field's
`to_representation` the serializer would call (or none, where that call returns its input). The
bytes are the serializer path's; tests/api/test_lean_lists.py compares the two.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import cache
from typing import Any

from django.db.models import Max, Model, QuerySet, Subquery
from rest_framework import serializers

from records.models import Evaluation, Result, evaluation_comparable
from reviews.models import Reviewable, ReviewState

Row = dict[str, Any]

# Fields whose to_representation returns a value the database already gives in that type.
_AS_STORED = (serializers.CharField, serializers.SlugField, serializers.IntegerField, serializers.BooleanField)


class RowShape:
    """The API columns of one serializer as `values()` lookups and the field's representation."""

    def __init__(self, serializer: serializers.Serializer, computed: dict[str, tuple[Sequence[str], Callable]]):
        self.columns: list[tuple[str, str | None, Callable[[Any], Any] | None]] = []
        self.computed: list[tuple[str, Sequence[str], Callable[..., Any]]] = []
        self.nested: list[str] = []
        lookups: list[str] = ["id"]
        for name, field in serializer.fields.items():
            if name in computed:
                needs, function = computed[name]
                self.computed.append((name, needs, function))
                lookups.extend(needs)
                self.columns.append((name, None, None))
            elif isinstance(field, serializers.BaseSerializer):
                self.nested.append(name)
                self.columns.append((name, None, None))
            elif isinstance(field, serializers.SlugRelatedField):
                lookup = f"{field.source}__{field.slug_field}"
                lookups.append(lookup)
                self.columns.append((name, lookup, None))
            elif isinstance(field, serializers.ReadOnlyField | serializers.SerializerMethodField) or "." in (
                field.source or ""
            ):
                raise TypeError(f"{name}: not a column the lean path can read")
            else:
                lookups.append(field.source)
                as_stored = type(field) in _AS_STORED
                self.columns.append((name, field.source, None if as_stored else field.to_representation))
        self.lookups = tuple(dict.fromkeys(lookups))

    def represent(self, row: Row, nested: dict[str, list[Row]] | None = None) -> Row:
        """One API row from one `values()` row; `nested` holds the nested lists by field name."""
        values = {name: function(*(row[need] for need in needs)) for name, needs, function in self.computed}
        out: Row = {}
        for name, lookup, function in self.columns:
            if lookup is None:
                out[name] = values[name] if name in values else (nested or {}).get(name, [])
                continue
            value = row[lookup]
            out[name] = value if value is None or function is None else function(value)
        return out


def _evaluation_comparable(review_state: str, original_state: str | None, different_measurement: str) -> bool:
    return evaluation_comparable(
        review_state=review_state, original_state=original_state, different_measurement=different_measurement
    )


def _reviewed_comparable(review_state: str) -> bool:
    return review_state == ReviewState.SOURCE_CHECKED


def _computed(model: type[Model]) -> dict[str, tuple[Sequence[str], Callable]]:
    """The serializers' one column that is a model property, as the rule the property applies."""
    if model is Evaluation:
        return {
            "comparable": (("review_state", "repeats__review_state", "different_measurement"), _evaluation_comparable)
        }
    if getattr(model, "is_comparable", None) is Reviewable.is_comparable:
        return {"comparable": (("review_state",), _reviewed_comparable)}
    return {}


@cache
def row_shape(serializer_class: type[serializers.ModelSerializer]) -> RowShape:
    """The columns of a list's serializer, read once per process."""
    return RowShape(serializer_class(), _computed(serializer_class.Meta.model))


def list_rows(queryset: QuerySet, serializer_class: type[serializers.ModelSerializer], *, also: Sequence[str] = ()):
    """A list's (filtered, ordered) query as `values()` rows for `list_page`; `also` names more
    columns the pagination reads (an annotation it orders by)."""
    return queryset.prefetch_related(None).values(*dict.fromkeys((*row_shape(serializer_class).lookups, *also)))


def list_page(rows: Iterable[Row], serializer_class: type[serializers.ModelSerializer]) -> list[Row]:
    """The API rows of one page of `list_rows`, with an evaluation's results: one query for all of them."""
    shape = row_shape(serializer_class)
    rows = list(rows)
    nested: dict[int, dict[str, list[Row]]] = {row["id"]: {name: [] for name in shape.nested} for row in rows}
    if set(shape.nested) - {"results"}:
        raise TypeError(f"{serializer_class.__name__}: nested {shape.nested} have no lean read")
    if shape.nested and nested:
        from records.serializers import NestedResultSerializer

        result = row_shape(NestedResultSerializer)
        for row in (
            Result.objects.filter(evaluation_id__in=list(nested))
            .order_by("stable_id")
            .values("evaluation_id", *result.lookups)
        ):
            nested[row["evaluation_id"]]["results"].append(result.represent(row))
    return [shape.represent(row, nested[row["id"]]) for row in rows]


def newest_update(model: type[Model], children: Sequence[type[Model]] = ()) -> Any:
    """The newest `updated_at` of any row of `model` and of its child tables, in one query (indexed)."""
    latest = {
        f"child_{index}": Subquery(child._default_manager.order_by("-updated_at").values("updated_at")[:1])
        for index, child in enumerate(children)
    }
    row = model._default_manager.order_by("-updated_at").annotate(**latest).values("updated_at", *latest).first()
    if row is None:  # no row of `model`: its children's own, as rare as it is cheap
        row = {str(i): t._default_manager.aggregate(latest=Max("updated_at"))["latest"] for i, t in enumerate(children)}
    moments = [moment for moment in row.values() if moment is not None]
    return max(moments) if moments else None


__all__ = ["RowShape", "list_page", "list_rows", "newest_update", "row_shape"]
