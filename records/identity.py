"""Merging and splitting models, and undoing either: the curators' corrections of which
configurations (and printed aliases) name one model.

Each service is atomic, locks the rows it changes (select_for_update), writes the moved records
through `records.services.record_save` (history rows under the actor, with the reason), bumps the
catalogue version (pages, caches and the next release follow) and appends one `ModelChange`, the
audit row that lists the stable ids moved, so the change can be undone exactly. The search index's
entries of both models, their configurations and evaluations are refreshed once, before the
change commits (records.search_index).

Rules kept here (pages rely on them):
- `merged_into` points at a model that is not merged itself: a merge into a merged model, of a
  merged model, or of a model others are merged into is refused (undo those merges first);
- an undo moves back exactly what its change moved, only while each of those records is still
  where the change put it, and is itself never undone (make the change again instead).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from django.core.exceptions import ValidationError
from django.db import models, transaction

from common.errors import Forbidden, Invalid
from common.locks import advisory_lock
from common.text import text_canonical
from common.types import Actor, acting_user
from common.versions import version_bump
from records.models import Configuration, GenomicModel, ModelAlias, ModelChange, ModelChangeKind
from records.search_index import search_index_batch
from records.services import errors_by_field, record_save

#: What merging, splitting and undoing write: models, and the configurations and aliases they move.
MODEL_CURATION_PERMISSIONS = (
    "records.add_genomicmodel",
    "records.change_genomicmodel",
    "records.change_configuration",
    "records.change_modelalias",
)

_Moved = TypeVar("_Moved", Configuration, ModelAlias)


def may_curate_models(actor: Actor) -> bool:
    """Whether `actor` may merge, split and undo: the portal itself (None), or an active user holding
    the curators' permissions to add and change models and to change configurations and aliases."""
    if actor is None:
        return True
    return bool(actor.is_authenticated and actor.is_active and actor.has_perms(MODEL_CURATION_PERMISSIONS))


def _permitted(actor: Actor) -> None:
    if not may_curate_models(actor):
        raise Forbidden(
            "merging and splitting models needs the curators' permissions to change models, configurations and aliases",
            field="permission",
        )


def _reason(reason: str) -> str:
    text = text_canonical(reason or "")
    if not text:
        raise Invalid(
            "say why (the reason is kept with the change and in every moved record's history)", field="reason"
        )
    return text


def _locked_models(*models_: GenomicModel) -> dict[int, GenomicModel]:
    """The models' rows, locked, in one order (by id) whoever locks them, so two changes never deadlock."""
    ids = sorted({model.pk for model in models_})
    return {model.pk: model for model in GenomicModel.objects.select_for_update().filter(pk__in=ids).order_by("pk")}


def _moved(
    configurations: Sequence[Configuration], aliases: Sequence[ModelAlias], *, to: GenomicModel, actor: Actor, note: str
) -> None:
    records: list[Configuration | ModelAlias] = [*configurations, *aliases]
    moving = frozenset(alias.pk for alias in aliases)
    for record in records:
        if isinstance(record, ModelAlias):
            record.moved_with = moving
        record.model = to
        record_save(record=record, actor=actor, changed_fields=["model"], reason=note)


def _model_set(model: GenomicModel, *, merged_into: GenomicModel | None, actor: Actor, note: str) -> None:
    model.merged_into = merged_into
    record_save(record=model, actor=actor, changed_fields=["merged_into"], reason=note)


def _audit(
    *,
    kind: str,
    from_model: GenomicModel,
    to_model: GenomicModel,
    configurations: Sequence[Configuration],
    aliases: Sequence[ModelAlias],
    reason: str,
    actor: Actor,
    undoes: ModelChange | None = None,
) -> ModelChange:
    change = ModelChange.objects.create(
        kind=kind,
        from_model=from_model,
        to_model=to_model,
        configurations=[record.stable_id for record in configurations],
        aliases=[record.stable_id for record in aliases],
        undoes=undoes,
        reason=reason,
        actor=acting_user(actor),
    )
    version_bump()
    return change


def _merged_into_refusal(model: GenomicModel, *, field: str, what: str) -> None:
    if model.merged_into_id is not None:
        target = GenomicModel.objects.filter(pk=model.merged_into_id).values_list("stable_id", flat=True).first()
        raise Invalid(f"{what} {model.stable_id!r} is already merged into {target!r}", field=field)


@transaction.atomic
@search_index_batch()
def model_merge(*, model: GenomicModel, into: GenomicModel, reason: str, actor: Actor) -> ModelChange:
    """Say `model` is the same as `into`: every configuration and alias of `model` moves to `into`
    and `model.merged_into` is set (its stable id stays, pointing at `into`).

    Refuses (Invalid, with the field) a merge into itself (`into`), into a merged model (`into`), of a
    merged model or of one other models are merged into (`model`), and an empty reason (`reason`);
    an actor without the curators' permissions is refused (Forbidden)."""
    _permitted(actor)
    reason = _reason(reason)
    if model.pk == into.pk:
        raise Invalid("a model cannot be merged into itself: choose another model", field="into")
    locked = _locked_models(model, into)
    model, into = locked[model.pk], locked[into.pk]
    _merged_into_refusal(model, field="model", what="model")
    _merged_into_refusal(into, field="into", what="the target model")
    merged_here = list(GenomicModel.objects.filter(merged_into=model).order_by("stable_id")[:5])
    if merged_here:
        names = ", ".join(repr(other.stable_id) for other in merged_here)
        raise Invalid(
            f"models {names} are merged into {model.stable_id!r}: undo those merges first, or merge them "
            f"into {into.stable_id!r} themselves",
            field="model",
        )
    configurations = list(Configuration.objects.select_for_update().filter(model=model).order_by("pk"))
    aliases = list(ModelAlias.objects.select_for_update().filter(model=model).order_by("pk"))
    note = f"merged model {model.stable_id} into {into.stable_id}: {reason}"
    _moved(configurations, aliases, to=into, actor=actor, note=note)
    _model_set(model, merged_into=into, actor=actor, note=note)
    return _audit(
        kind=ModelChangeKind.MERGE,
        from_model=model,
        to_model=into,
        configurations=configurations,
        aliases=aliases,
        reason=reason,
        actor=actor,
    )


def _of_model(kind: type[_Moved], records: Sequence[_Moved], *, model: GenomicModel, field: str) -> list[_Moved]:
    """The records' rows, locked; refuses (field `field`) any that is not `model`'s now."""
    ids = sorted({record.pk for record in records})
    locked = list(kind._default_manager.select_for_update().filter(pk__in=ids).order_by("pk"))
    strays = [record.stable_id for record in locked if record.model_id != model.pk]
    missing = len(ids) - len(locked)
    if strays or missing:
        named = kind._meta.verbose_name_plural
        detail = f"{', '.join(map(repr, strays))} belong to another model" if strays else f"{missing} no longer exist"
        raise Invalid(f"{named} {detail}: only {model.stable_id!r}'s can be split off", field=field)
    return locked


@transaction.atomic
@search_index_batch()
def model_split(
    *,
    model: GenomicModel,
    configurations: Sequence[Configuration],
    stable_id: str,
    name: str,
    reason: str,
    actor: Actor,
    aliases: Sequence[ModelAlias] = (),
    family: str | None = None,
    parameter_count: int | None = None,
) -> ModelChange:
    """Say some configurations of `model` (and some of its aliases) test another model: a new model
    (`stable_id`, `name`; `family` and `parameter_count` copied from `model` unless given) takes them.

    Splitting off every configuration is allowed: `model` then keeps its aliases and its page (it
    was catalogued before any configuration named it, as an import's "models" section does).
    Refuses (Invalid, with the field) no configurations, a configuration or alias of another model,
    a merged model, a stable id in use and an empty reason; Forbidden for an actor without the
    curators' permissions."""
    _permitted(actor)
    reason = _reason(reason)
    if not configurations:
        raise Invalid("choose the configurations the new model takes", field="configurations")
    stable_id = (stable_id or "").strip()
    if GenomicModel.objects.filter(stable_id=stable_id).exists():
        raise Invalid(f"the stable id {stable_id!r} is another model's: choose a new one", field="stable_id")
    model = _locked_models(model)[model.pk]
    _merged_into_refusal(model, field="model", what="model")
    moved_configurations = _of_model(Configuration, configurations, model=model, field="configurations")
    moved_aliases = _of_model(ModelAlias, aliases, model=model, field="aliases") if aliases else []
    new = GenomicModel(
        stable_id=stable_id,
        name=name,
        family=model.family if family is None else family,
        parameter_count=model.parameter_count if parameter_count is None else parameter_count,
    )
    try:
        record_save(record=new, actor=actor, reason=f"split from model {model.stable_id}: {reason}")
    except ValidationError as invalid:
        field, messages = next(iter(errors_by_field(invalid, GenomicModel).items()))
        raise Invalid(" ".join(messages), field="non_field_errors" if field == "__all__" else field) from None
    note = f"split from model {model.stable_id} into {new.stable_id}: {reason}"
    _moved(moved_configurations, moved_aliases, to=new, actor=actor, note=note)
    return _audit(
        kind=ModelChangeKind.SPLIT,
        from_model=model,
        to_model=new,
        configurations=moved_configurations,
        aliases=moved_aliases,
        reason=reason,
        actor=actor,
    )


def _still_moved(kind: type[_Moved], stable_ids: Sequence[str], *, change: ModelChange) -> list[_Moved]:
    """The records `change` moved, locked; refuses (field `change`) when one has moved again since
    (or is gone), naming it and where it is now."""
    locked = list(kind._default_manager.select_for_update().filter(stable_id__in=stable_ids).order_by("pk"))
    found = {record.stable_id: record for record in locked}
    label = kind._meta.verbose_name
    for stable_id in stable_ids:
        record = found.get(stable_id)
        if record is None:
            raise Invalid(f"{label} {stable_id!r} no longer exists: this change cannot be undone", field="change")
        if record.model_id != change.to_model_id:
            where = record.model.stable_id if record.model is not None else "no model"
            raise Invalid(
                f"{label} {stable_id!r} has moved again since (it is now {where!r}'s): undo that change first",
                field="change",
            )
    return locked


@transaction.atomic
@search_index_batch()
def model_change_undo(*, change: ModelChange, reason: str, actor: Actor) -> ModelChange:
    """Undo a merge or a split: exactly the configurations and aliases it lists move back, and an
    undone merge's model is no longer merged. A split's new model stays (its stable id may be
    published already), with nothing left in it but what was added to it since.

    Refuses (Invalid, field `change`) an undo of an undo, of a change already undone, and of a
    change one of whose records has moved again since (named); Forbidden for an actor without the
    curators' permissions."""
    _permitted(actor)
    reason = _reason(reason)
    # The change is an audit row (append-only: the app's role may not lock it for update); two undos
    # of one change queue on its name instead.
    advisory_lock(name=f"model-change-undo:{change.pk}")
    change = ModelChange.objects.get(pk=change.pk)
    if change.kind == ModelChangeKind.UNDO:
        raise Invalid("an undo is not undone: make the change again instead", field="change")
    undone = ModelChange.objects.filter(undoes=change).values_list("pk", flat=True).first()
    if undone is not None:
        raise Invalid(f"this change is already undone (by change #{undone})", field="change")
    locked = _locked_models(change.from_model, change.to_model)
    back_to, away_from = locked[change.from_model_id], locked[change.to_model_id]
    if change.kind == ModelChangeKind.MERGE and back_to.merged_into_id != away_from.pk:
        raise Invalid(f"model {back_to.stable_id!r} is no longer merged into {away_from.stable_id!r}", field="change")
    configurations = _still_moved(Configuration, change.configurations, change=change)
    aliases = _still_moved(ModelAlias, change.aliases, change=change)
    note = (
        f"undid the {change.kind} of change #{change.pk} ({away_from.stable_id} back to {back_to.stable_id}): {reason}"
    )
    _moved(configurations, aliases, to=back_to, actor=actor, note=note)
    if change.kind == ModelChangeKind.MERGE:
        _model_set(back_to, merged_into=None, actor=actor, note=note)
    return _audit(
        kind=ModelChangeKind.UNDO,
        from_model=away_from,
        to_model=back_to,
        configurations=_in_listed_order(configurations, change.configurations),
        aliases=_in_listed_order(aliases, change.aliases),
        reason=reason,
        actor=actor,
        undoes=change,
    )


def _in_listed_order(records: Sequence[_Moved], stable_ids: Sequence[str]) -> list[_Moved]:
    by_id = {record.stable_id: record for record in records}
    return [by_id[stable_id] for stable_id in stable_ids]


def model_changes_of(*, model: GenomicModel) -> models.QuerySet[ModelChange]:
    """The merges, splits and undos that moved records to or from `model`, newest first."""
    return ModelChange.objects.filter(models.Q(from_model=model) | models.Q(to_model=model)).select_related(
        "from_model", "to_model", "actor"
    )
