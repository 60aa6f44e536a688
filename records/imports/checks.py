"""The database's rules for a record not yet written, checked in Python: the model's check
constraints (each evaluated over the record's values with SQL's three-valued logic: a rule whose
value is unknown, NULL, passes, as a CHECK does) and its unique constraints, against the database
and against the other records of the same document.

An import plans every record before writing any (records.imports.plan), so the database cannot be
asked by writing the row; asking it with one query per constraint per record would cost most of a
large import's time. A condition this module cannot evaluate (an expression it does not know) is
asked of the database for that record (`BaseConstraint.validate`)."""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable
from decimal import Decimal
from typing import Any

from django.core.exceptions import FieldDoesNotExist, ValidationError
from django.db import models
from django.db.models import F, Q, Value
from django.db.models.functions import Cast, Lower
from django.db.models.lookups import GreaterThanOrEqual, LessThanOrEqual


class _Unsupported(Exception):
    """A part of a condition this module does not evaluate: the database is asked instead."""


class _Unsaved:
    """A reference to a record planned in the same document, not yet written (no primary key)."""

    def __init__(self, record: models.Model):
        self.identity = id(record)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Unsaved) and other.identity == self.identity

    def __hash__(self) -> int:
        return self.identity


Getter = Callable[[models.Model], Any]
Test = Callable[[models.Model], "bool | None"]


def _getter(model: type[models.Model], name: str) -> Getter:
    """A function giving a record's value of `name` as the database would hold it: a reference as
    its primary key, or as a token of the planned record it names when that one is not written yet."""
    if name == "pk":
        return lambda record: record.pk
    try:
        field = model._meta.get_field(name)
    except FieldDoesNotExist:
        raise _Unsupported(name) from None
    if field.many_to_one or field.one_to_one:
        attname, cache_name = field.attname, field.cache_name  # type: ignore[union-attr]

        def reference(record: models.Model) -> Any:
            raw = getattr(record, attname)
            if raw is not None:
                return raw
            related = record._state.fields_cache.get(cache_name)
            if related is None:
                return None
            return related.pk if related.pk is not None else _Unsaved(related)

        return reference
    if field.is_relation:
        raise _Unsupported(name)
    return operator.attrgetter(field.attname)  # type: ignore[union-attr]


def _operand(model: type[models.Model], expression: Any) -> Getter:
    if isinstance(expression, F):
        return _getter(model, expression.name)
    if isinstance(expression, Value):
        value = expression.value
        return lambda record: value
    if isinstance(expression, Cast):
        if not isinstance(expression.output_field, models.FloatField):
            raise _Unsupported(expression)
        inner = _operand(model, expression.source_expressions[0])
        return lambda record: None if (v := inner(record)) is None else float(v)
    if isinstance(expression, Lower):
        inner = _operand(model, expression.source_expressions[0])
        return lambda record: v.lower() if isinstance(v := inner(record), str) else v
    if isinstance(expression, str | int | float | Decimal | bool) or expression is None:
        return lambda record: expression
    if isinstance(expression, list | tuple | set | frozenset):
        items = [_operand(model, item) for item in expression]
        return lambda record: [item(record) for item in items]
    raise _Unsupported(expression)


def _compare(lookup: str, left: Any, right: Any) -> bool | None:
    if lookup == "isnull":
        return (left is None) == bool(right)
    if left is None:
        return None
    if lookup == "in":
        return left in right if None not in right or left in right else None
    if right is None:
        return None
    if isinstance(left, _Unsaved) or isinstance(right, _Unsaved):
        if lookup == "exact":
            return left == right
        raise _Unsupported(lookup)
    if lookup == "exact":
        return left == right
    if lookup == "gte":
        return left >= right
    if lookup == "gt":
        return left > right
    if lookup == "lte":
        return left <= right
    if lookup == "lt":
        return left < right
    raise _Unsupported(lookup)


def _and(results: list[bool | None]) -> bool | None:
    return False if False in results else None if None in results else True


def _or(results: list[bool | None]) -> bool | None:
    return True if True in results else None if None in results else False


def compile_condition(model: type[models.Model], condition: Any) -> Test:
    """`condition` (a Q, a lookup expression) as a function of a record: True, False or None (unknown)."""
    if isinstance(condition, Q):
        children = [compile_condition(model, child) for child in condition.children]
        if condition.connector not in (Q.AND, Q.OR):
            raise _Unsupported(condition.connector)
        combine = _and if condition.connector == Q.AND else _or
        negated = condition.negated

        def node(record: models.Model) -> bool | None:
            value = combine([child(record) for child in children])
            return value if value is None or not negated else not value

        return node
    if isinstance(condition, tuple):
        path, right = condition
        name, _, lookup = path.partition("__")
        if "__" in lookup or lookup not in ("", "exact", "in", "isnull", "gte", "gt", "lte", "lt"):
            raise _Unsupported(path)
        left = _getter(model, name)
        if right is None and lookup in ("", "exact"):  # Q(field=None) means IS NULL
            return lambda record: left(record) is None
        value = _operand(model, right)
        lookup = lookup or "exact"
        return lambda record: _compare(lookup, left(record), value(record))
    if isinstance(condition, GreaterThanOrEqual | LessThanOrEqual):
        lookup = "gte" if isinstance(condition, GreaterThanOrEqual) else "lte"
        lhs, rhs = _operand(model, condition.lhs), _operand(model, condition.rhs)
        return lambda record: _compare(lookup, lhs(record), rhs(record))
    raise _Unsupported(condition)


_COMPILED: dict[tuple[type[models.Model], str], Test | None] = {}


def _compiled(model: type[models.Model], constraint: models.BaseConstraint, condition: Any) -> Test | None:
    """The compiled condition of the model's constraint, once a process; None when not evaluable here."""
    key = (model, constraint.name)
    if key not in _COMPILED:
        try:
            _COMPILED[key] = compile_condition(model, condition)
        except _Unsupported:
            _COMPILED[key] = None
    return _COMPILED[key]


def constraint_errors(record: models.Model, exclude: Iterable[str] = ()) -> dict[str, list[str]]:
    """The record's check-constraint violations by the field each names (its violation code), and
    its unique constraints' against the database (a new record cannot clash with itself)."""
    errors: dict[str, list[str]] = {}
    excluded = set(exclude)
    model = type(record)
    for constraint in model._meta.constraints:
        if isinstance(constraint, models.CheckConstraint):
            code = constraint.violation_error_code or "__all__"
            if code in excluded:
                continue
            test = _compiled(model, constraint, constraint.condition)
            try:
                failed = test(record) is False if test is not None else _refused(model, constraint, record, excluded)
            except (_Unsupported, TypeError):
                failed = _refused(model, constraint, record, excluded)
            if failed:
                errors.setdefault(code, []).append(str(constraint.get_violation_error_message()))
        elif isinstance(constraint, models.UniqueConstraint):
            try:
                constraint.validate(model, record, exclude=excluded)  # type: ignore[attr-defined]
            except ValidationError as exc:
                errors.setdefault("__all__", []).extend(exc.messages)
    return errors


def _refused(model: type[models.Model], constraint: models.BaseConstraint, record: models.Model, exclude: set) -> bool:
    try:
        constraint.validate(model, record, exclude=exclude)  # type: ignore[attr-defined]
    except ValidationError:
        return True
    return False


def unique_key(record: models.Model, constraint: models.UniqueConstraint) -> tuple | None:
    """The values `constraint` keeps unique, or None where it does not apply to the record (its
    condition is false, or a value is NULL): for finding two records of one document that clash."""
    model = type(record)
    if constraint.condition is not None:
        test = _compiled(model, constraint, constraint.condition)
        try:
            if test is None or test(record) is not True:
                return None
        except _Unsupported:
            return None
    try:
        getters = [_getter(model, name) for name in constraint.fields] or [
            _operand(model, expression) for expression in constraint.expressions
        ]
    except _Unsupported:
        return None
    values = tuple(getter(record) for getter in getters)
    return None if any(value is None for value in values) else values
