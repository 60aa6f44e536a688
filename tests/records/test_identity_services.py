"""Merging and splitting models, and undoing either (records.identity): what moves, what is refused,
the audit rows and history notes, and that an undo puts every configuration and alias back."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from common.errors import Forbidden, Invalid
from common.versions import version_current
from records.identity import may_curate_models, model_change_undo, model_merge, model_split
from records.models import Configuration, GenomicModel, ModelAlias, ModelChange
from tests.factories import ConfigurationFactory, GenomicModelFactory, ModelAliasFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def model_curator(curator):
    return curator


@pytest.fixture
def two_models():
    """Two models printed under different names: `duplicate` (two configurations, two aliases) is `kept`."""
    kept, duplicate = GenomicModelFactory(stable_id="hyenadna-tiny"), GenomicModelFactory(stable_id="hyenadna-1k")
    ConfigurationFactory(stable_id="kept-config", model=kept)
    for n in (1, 2):
        ConfigurationFactory(stable_id=f"duplicate-config-{n}", model=duplicate)
        ModelAliasFactory(stable_id=f"duplicate-alias-{n}", model=duplicate, alias=f"HyenaDNA-1KB v{n}")
    ModelAliasFactory(stable_id="kept-alias", model=kept, alias="HyenaDNA tiny")
    return kept, duplicate


def where(model_class) -> dict[str, str | None]:
    """Each configuration's (or alias's) model, by stable id."""
    return dict(model_class.objects.values_list("stable_id", "model__stable_id"))


def test_curators_may_merge_and_split_and_release_managers_may_not(curator, make_user):
    assert may_curate_models(curator) and may_curate_models(None)
    assert not may_curate_models(make_user("release_manager"))


def test_it_merges_every_configuration_and_alias_into_the_target(two_models, model_curator):
    kept, duplicate = two_models
    before = version_current().number
    change = model_merge(model=duplicate, into=kept, reason="The same checkpoint (HF model card).", actor=model_curator)

    assert set(kept.configurations.values_list("stable_id", flat=True)) == {
        "kept-config",
        "duplicate-config-1",
        "duplicate-config-2",
    }
    assert set(kept.aliases.values_list("stable_id", flat=True)) == {
        "kept-alias",
        "duplicate-alias-1",
        "duplicate-alias-2",
    }
    duplicate.refresh_from_db()
    assert duplicate.merged_into == kept
    assert (change.kind, change.from_model, change.to_model, change.actor) == ("merge", duplicate, kept, model_curator)
    assert change.configurations == ["duplicate-config-1", "duplicate-config-2"]
    assert change.aliases == ["duplicate-alias-1", "duplicate-alias-2"]
    assert change.reason == "The same checkpoint (HF model card)."
    assert version_current().number > before


def test_every_moved_record_keeps_the_reason_in_its_history(two_models, model_curator):
    kept, duplicate = two_models
    model_merge(model=duplicate, into=kept, reason="Same weights.", actor=model_curator)
    for record in [
        Configuration.objects.get(stable_id="duplicate-config-1"),
        ModelAlias.objects.get(stable_id="duplicate-alias-2"),
        duplicate,
    ]:
        latest = record.history.first()
        assert latest.history_user == model_curator
        assert latest.history_change_reason == "merged model hyenadna-1k into hyenadna-tiny: Same weights."


def test_it_stores_a_reason_typed_with_crlf_line_endings_with_lf(two_models, model_curator):
    kept, duplicate = two_models
    change = model_merge(model=duplicate, into=kept, reason="  Line one.\r\nLine two.\r\n", actor=model_curator)
    assert change.reason == "Line one.\nLine two."
    assert duplicate.history.first().history_change_reason.endswith(": Line one.\nLine two.")


def test_it_refuses_a_merge_into_itself(two_models, model_curator):
    kept, _ = two_models
    with pytest.raises(Invalid) as refused:
        model_merge(model=kept, into=kept, reason="why", actor=model_curator)
    assert refused.value.field == "into"
    assert not ModelChange.objects.exists()


@pytest.mark.parametrize("reason", ["", "   ", "\r\n"])
def test_it_refuses_a_merge_without_a_reason(two_models, model_curator, reason):
    kept, duplicate = two_models
    with pytest.raises(Invalid) as refused:
        model_merge(model=duplicate, into=kept, reason=reason, actor=model_curator)
    assert refused.value.field == "reason"
    assert where(Configuration)["duplicate-config-1"] == "hyenadna-1k"


def test_it_refuses_a_merge_into_a_merged_model_and_of_a_merged_model(two_models, model_curator):
    kept, duplicate = two_models
    third = GenomicModelFactory(stable_id="third")
    model_merge(model=duplicate, into=kept, reason="same", actor=model_curator)
    with pytest.raises(Invalid) as into_merged:
        model_merge(model=third, into=duplicate, reason="same", actor=model_curator)
    assert into_merged.value.field == "into" and "'hyenadna-tiny'" in into_merged.value.message
    with pytest.raises(Invalid) as of_merged:
        model_merge(model=duplicate, into=third, reason="same", actor=model_curator)
    assert of_merged.value.field == "model" and "already merged" in of_merged.value.message
    with pytest.raises(Invalid) as others_merged_here:
        model_merge(model=kept, into=third, reason="same", actor=model_curator)
    assert others_merged_here.value.field == "model" and "'hyenadna-1k'" in others_merged_here.value.message
    assert ModelChange.objects.count() == 1


@pytest.mark.parametrize("role", ["anonymous", "release_manager", "staff_without_a_role"])
def test_it_refuses_a_merge_by_someone_who_may_not_curate_models(two_models, make_user, role):
    from django.contrib.auth.models import AnonymousUser

    kept, duplicate = two_models
    if role == "anonymous":
        actor = AnonymousUser()
    elif role == "release_manager":
        actor = make_user("release_manager")
    else:
        actor = make_user("staff")
    with pytest.raises(Forbidden):
        model_merge(model=duplicate, into=kept, reason="same", actor=actor)
    assert not ModelChange.objects.exists()


def test_an_undone_merge_puts_every_configuration_and_alias_back_exactly(two_models, model_curator):
    kept, duplicate = two_models
    configurations, aliases = where(Configuration), where(ModelAlias)
    merge = model_merge(model=duplicate, into=kept, reason="same", actor=model_curator)
    before = version_current().number

    undo = model_change_undo(change=merge, reason="Not the same: different context length.", actor=model_curator)

    assert where(Configuration) == configurations and where(ModelAlias) == aliases
    duplicate.refresh_from_db()
    assert duplicate.merged_into is None
    assert (undo.kind, undo.undoes, undo.from_model, undo.to_model) == ("undo", merge, kept, duplicate)
    assert undo.configurations == merge.configurations and undo.aliases == merge.aliases
    assert version_current().number > before
    reason = Configuration.objects.get(stable_id="duplicate-config-2").history.first().history_change_reason
    assert reason.endswith("Not the same: different context length.") and f"#{merge.pk}" in reason


def test_it_refuses_to_undo_an_undo_or_a_change_already_undone(two_models, model_curator):
    kept, duplicate = two_models
    merge = model_merge(model=duplicate, into=kept, reason="same", actor=model_curator)
    undo = model_change_undo(change=merge, reason="no", actor=model_curator)
    with pytest.raises(Invalid) as of_undo:
        model_change_undo(change=undo, reason="again", actor=model_curator)
    assert of_undo.value.field == "change" and "undo" in of_undo.value.message
    with pytest.raises(Invalid) as twice:
        model_change_undo(change=merge, reason="again", actor=model_curator)
    assert twice.value.field == "change" and f"#{undo.pk}" in twice.value.message
    assert ModelChange.objects.count() == 2


def test_it_refuses_an_undo_when_a_moved_configuration_has_moved_again(two_models, model_curator):
    kept, duplicate = two_models
    merge = model_merge(model=duplicate, into=kept, reason="same", actor=model_curator)
    moved = Configuration.objects.get(stable_id="duplicate-config-2")
    model_split(
        model=kept, configurations=[moved], stable_id="hyenadna-other", name="Other", reason="r", actor=model_curator
    )
    with pytest.raises(Invalid) as refused:
        model_change_undo(change=merge, reason="undo", actor=model_curator)
    assert refused.value.field == "change"
    assert "'duplicate-config-2'" in refused.value.message and "'hyenadna-other'" in refused.value.message
    assert where(Configuration)["duplicate-config-1"] == "hyenadna-tiny"  # nothing moved back


def test_it_splits_configurations_and_aliases_off_into_a_new_model(two_models, model_curator):
    kept, duplicate = two_models
    duplicate.parameter_count, duplicate.family = 6_600_000, "HyenaDNA"
    duplicate.save()
    before = version_current().number
    change = model_split(
        model=duplicate,
        configurations=[Configuration.objects.get(stable_id="duplicate-config-2")],
        aliases=[ModelAlias.objects.get(stable_id="duplicate-alias-2")],
        stable_id="hyenadna-small",
        name="HyenaDNA small",
        reason="Table 2 tests the 32k checkpoint.",
        actor=model_curator,
    )
    new = GenomicModel.objects.get(stable_id="hyenadna-small")
    assert (new.name, new.family, new.parameter_count, new.merged_into) == (
        "HyenaDNA small",
        "HyenaDNA",
        6_600_000,
        None,
    )
    assert where(Configuration)["duplicate-config-2"] == "hyenadna-small"
    assert where(Configuration)["duplicate-config-1"] == "hyenadna-1k"
    assert where(ModelAlias)["duplicate-alias-2"] == "hyenadna-small"
    assert (change.kind, change.from_model, change.to_model) == ("split", duplicate, new)
    assert change.configurations == ["duplicate-config-2"] and change.aliases == ["duplicate-alias-2"]
    assert (
        new.history.first().history_change_reason == "split from model hyenadna-1k: Table 2 tests the 32k checkpoint."
    )
    assert version_current().number > before


def test_a_split_takes_the_family_and_parameter_count_it_is_given(two_models, model_curator):
    _, duplicate = two_models
    model_split(
        model=duplicate,
        configurations=list(duplicate.configurations.all()),
        stable_id="new-one",
        name="New one",
        family="Other family",
        parameter_count=42,
        reason="r",
        actor=model_curator,
    )
    new = GenomicModel.objects.get(stable_id="new-one")
    assert (new.family, new.parameter_count) == ("Other family", 42)
    assert not duplicate.configurations.exists()  # splitting off every configuration is allowed
    assert duplicate.aliases.count() == 2  # the aliases not chosen stay


def test_an_undone_split_puts_its_configurations_and_aliases_back(two_models, model_curator):
    _, duplicate = two_models
    configurations, aliases = where(Configuration), where(ModelAlias)
    split = model_split(
        model=duplicate,
        configurations=list(duplicate.configurations.all()),
        aliases=[ModelAlias.objects.get(stable_id="duplicate-alias-1")],
        stable_id="split-off",
        name="Split off",
        reason="r",
        actor=model_curator,
    )
    undo = model_change_undo(change=split, reason="They were the same after all.", actor=model_curator)
    assert where(Configuration) == configurations and where(ModelAlias) == aliases
    assert undo.undoes == split and undo.configurations == split.configurations
    new = GenomicModel.objects.get(stable_id="split-off")
    assert not new.configurations.exists() and not new.aliases.exists()  # it stays: its id may be published


def test_it_refuses_a_split_of_another_models_configuration(two_models, model_curator):
    kept, duplicate = two_models
    with pytest.raises(Invalid) as refused:
        model_split(
            model=duplicate,
            configurations=[Configuration.objects.get(stable_id="kept-config")],
            stable_id="new",
            name="New",
            reason="r",
            actor=model_curator,
        )
    assert refused.value.field == "configurations" and "'kept-config'" in refused.value.message
    assert not GenomicModel.objects.filter(stable_id="new").exists()


def test_it_refuses_a_split_of_another_models_alias(two_models, model_curator):
    kept, duplicate = two_models
    with pytest.raises(Invalid) as refused:
        model_split(
            model=duplicate,
            configurations=list(duplicate.configurations.all()),
            aliases=[ModelAlias.objects.get(stable_id="kept-alias")],
            stable_id="new",
            name="New",
            reason="r",
            actor=model_curator,
        )
    assert refused.value.field == "aliases"
    assert not GenomicModel.objects.filter(stable_id="new").exists()


@pytest.mark.parametrize(
    ("stable_id", "name", "configurations", "reason", "field"),
    [
        ("hyenadna-tiny", "New", True, "r", "stable_id"),  # another model's id
        ("not a slug!", "New", True, "r", "stable_id"),
        ("new", "", True, "r", "name"),
        ("new", "New", False, "r", "configurations"),
        ("new", "New", True, " ", "reason"),
    ],
)
def test_it_refuses_a_split_with_a_bad_input(two_models, model_curator, stable_id, name, configurations, reason, field):
    _, duplicate = two_models
    with pytest.raises(Invalid) as refused:
        model_split(
            model=duplicate,
            configurations=list(duplicate.configurations.all()) if configurations else [],
            stable_id=stable_id,
            name=name,
            reason=reason,
            actor=model_curator,
        )
    assert refused.value.field == field
    assert GenomicModel.objects.count() == 2 and not ModelChange.objects.exists()


def test_it_refuses_a_split_of_a_merged_model(two_models, model_curator):
    kept, duplicate = two_models
    model_merge(model=duplicate, into=kept, reason="same", actor=model_curator)
    with pytest.raises(Invalid) as refused:
        model_split(
            model=duplicate,
            configurations=list(kept.configurations.all()),
            stable_id="new",
            name="New",
            reason="r",
            actor=model_curator,
        )
    assert refused.value.field == "model"


def test_it_locks_the_rows_it_changes(two_models, model_curator):
    if not connection.features.has_select_for_update:
        pytest.skip("this database has no row locks (SQLite serialises every writer)")
    kept, duplicate = two_models
    with CaptureQueriesContext(connection) as queries:
        model_merge(model=duplicate, into=kept, reason="same", actor=model_curator)
    locked = [q["sql"] for q in queries.captured_queries if "FOR UPDATE" in q["sql"]]
    for table in ("records_genomicmodel", "records_configuration", "records_modelalias"):
        assert any(f'FROM "{table}"' in sql for sql in locked), table
