"""The recipe admin's "Queue a job with a preset and overrides…": its page, its form, who may use it,
and the job's label, which names what the job runs rather than its recipe's defaults."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from benchmarks.models import BenchmarkJob, JobEvent, JobStatus

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.benchmarks.urls_for_tests")]

ACTION = "queue_job_with_overrides"
CHANGELIST = "admin:benchmarks_recipe_changelist"


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def queue(client: Client, recipes, **values):
    """Post the action's form, as its page sends it ("apply" set) with the given fields."""
    data = {"action": ACTION, "_selected_action": [recipe.pk for recipe in recipes], "apply": "1", **values}
    return client.post(reverse(CHANGELIST), data)


@pytest.fixture
def big_recipe(tiny_recipe):
    """A recipe as the seed's stands: the 500M shape and 10,000 steps."""
    from benchmarks.services import recipe_save

    tiny_recipe.preset, tiny_recipe.steps, tiny_recipe.batch_size = "nt-v1-500m", 10_000, 8
    tiny_recipe.title = "NT-500M-shaped model on promoter_tata (10,000 steps, batch 8)"
    recipe_save(recipe=tiny_recipe, actor=None, changed_fields=["preset", "steps", "batch_size", "title"])
    return tiny_recipe


def test_it_shows_the_form_with_the_recipes_values_before_queueing_anything(big_recipe, operator, broker):
    client = logged_in(operator)
    page = client.post(reverse(CHANGELIST), {"action": ACTION, "_selected_action": [big_recipe.pk], "index": 0})
    text = page.content.decode()
    assert page.status_code == 200 and 'id="queue-job-form"' in text
    assert '<option value="tiny">tiny: Tiny NT v1-shaped test model' in text
    assert "Blank: nt-v1-500m (the recipe&#x27;s)" in text and "Blank: 10000 (the recipe&#x27;s)" in text
    assert BenchmarkJob.objects.count() == 0


def test_it_queues_the_tiny_preset_with_30_steps(big_recipe, operator, broker, django_capture_on_commit_callbacks):
    client = logged_in(operator)
    with django_capture_on_commit_callbacks(execute=True):
        response = queue(client, [big_recipe], preset="tiny", steps="30")
    job = BenchmarkJob.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"{reverse('admin:benchmarks_benchmarkjob_changelist')}?id__in={job.pk}"
    assert job.status == JobStatus.QUEUED and job.recipe == big_recipe and job.requested_by == operator
    assert (job.parameters["preset"], job.parameters["steps"], job.parameters["batch_size"]) == ("tiny", 30, 8)
    assert job.parameters["learning_rate"] == big_recipe.learning_rate  # blank fields keep the recipe's
    assert [message["args"] for message in broker.sent] == [[job.pk]]  # sent after the commit
    event = JobEvent.objects.get(job=job)
    assert event.reason == f"queued from recipe {big_recipe.stable_id} with {{'preset': 'tiny', 'steps': 30}}"
    assert str(job) == f"Benchmark job {job.pk}: tiny on promoter_tata, 30 steps, batch 8 (queued)"
    big_recipe.refresh_from_db()
    assert (big_recipe.preset, big_recipe.steps) == ("nt-v1-500m", 10_000)  # the recipe is left as it was
    jobs = client.get(response["Location"]).content.decode()
    assert "Queued:" in jobs and "tiny on promoter_tata, 30 steps, batch 8" in jobs


def test_the_tiny_preset_with_the_steps_left_blank_queues_a_smoke_test_not_the_recipes_run(
    big_recipe, operator, broker
):
    client = logged_in(operator)
    assert queue(client, [big_recipe], preset="tiny").status_code == 302
    job = BenchmarkJob.objects.get()
    assert (job.parameters["preset"], job.parameters["steps"], job.parameters["warmup_steps"]) == ("tiny", 20, 2)
    assert job.parameters["batch_size"] == 8  # the rest as the recipe says
    reason = JobEvent.objects.get(job=job).reason  # says the steps the preset chose
    assert reason == f"queued from recipe {big_recipe.stable_id} with {{'preset': 'tiny', 'steps': 20}}"
    assert queue(client, [big_recipe], preset="tiny", steps="500").status_code == 302  # steps given: kept
    assert BenchmarkJob.objects.latest("pk").parameters["steps"] == 500


@pytest.mark.parametrize(
    ("values", "field", "message"),
    [
        ({"steps": "0"}, "steps", "greater than or equal to 1"),
        ({"steps": "thirty"}, "steps", "Enter a whole number"),
        ({"steps": "٣٠"}, "steps", "digits of another script"),
        ({"steps": "1000001"}, "steps", "less than or equal to 1000000"),
        ({"preset": "nt-v9-huge"}, "preset", "Select a valid choice"),
        ({"learning_rate": "0"}, "learning_rate", "positive number"),
        ({"learning_rate": "nan"}, "learning_rate", "Enter a number"),
        ({"batch_size": "-2"}, "batch_size", "greater than or equal to 1"),
        ({"task": "not_a_task"}, "task", "Select a valid choice"),
        # valid alone, refused by the service against the recipe: the warm-up must be shorter than the run
        ({"steps": "3", "warmup_steps": "5"}, "warmup_steps", "fewer than steps (3)"),
    ],
)
def test_a_bad_value_is_an_error_on_its_field_and_queues_nothing(tiny_recipe, operator, broker, values, field, message):
    response = queue(logged_in(operator), [tiny_recipe], **values)
    assert response.status_code == 200
    form = response.context["form"]
    assert message in " ".join(form.errors[field])
    text = response.content.decode()
    assert 'class="errornote" role="alert" id="form-errors">Nothing was queued.' in text
    assert f'id="id_{field}_errors"' in text and f"Correct the field marked below: {form[field].label}." in text
    assert BenchmarkJob.objects.count() == 0 and broker.sent == []


def test_a_refusal_about_the_recipe_is_said_on_the_form(tiny_recipe, operator, broker):
    tiny_recipe.protocol.metric_unit = "MCC"  # a protocol the runner does not measure
    tiny_recipe.protocol.save(update_fields=["metric_unit"])
    response = queue(logged_in(operator), [tiny_recipe], preset="tiny")
    assert response.status_code == 200
    assert "not a time unit" in " ".join(response.context["form"].non_field_errors())
    assert BenchmarkJob.objects.count() == 0


def test_several_recipes_are_queued_together_or_not_at_all(tiny_recipe, timed_protocol, operator, broker):
    from tests.benchmarks.conftest import make_tiny_recipe

    short = make_tiny_recipe(timed_protocol, "tiny-short", steps=10, warmup_steps=2)
    response = queue(logged_in(operator), [tiny_recipe, short], steps="30")
    assert response.status_code == 302 and BenchmarkJob.objects.count() == 2
    assert sorted(job.parameters["steps"] for job in BenchmarkJob.objects.all()) == [30, 30]
    refused = queue(logged_in(operator), [tiny_recipe, short], steps="4", warmup_steps="4")
    assert refused.status_code == 200 and BenchmarkJob.objects.count() == 2
    errors = " ".join(refused.context["form"].errors["warmup_steps"])
    assert errors.startswith(f"{short.stable_id}: ") or errors.startswith(f"{tiny_recipe.stable_id}: ")


@pytest.mark.parametrize("role", ["curator", "release_manager"])
def test_a_user_without_the_queue_permission_neither_sees_nor_runs_it(tiny_recipe, make_user, broker, role):
    client = logged_in(make_user(role))
    listing = client.get(reverse(CHANGELIST))
    assert listing.status_code in (200, 403) and ACTION not in listing.content.decode()
    for data in ({"index": 0}, {"apply": "1", "preset": "tiny", "steps": "30"}):
        client.post(reverse(CHANGELIST), {"action": ACTION, "_selected_action": [tiny_recipe.pk], **data})
    assert BenchmarkJob.objects.count() == 0


def test_an_operator_sees_the_action(tiny_recipe, operator):
    assert ACTION in logged_in(operator).get(reverse(CHANGELIST)).content.decode()
