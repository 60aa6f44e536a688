"""Helpers shared by tests."""

from __future__ import annotations


def apply_transitions(record, *names: str, reason: str = "test reason") -> None:
    """Move a record along the workflow through the one service, as the portal's importer does."""
    from reviews.services import review_transition_apply

    for name in names:
        review_transition_apply(record=record, transition=name, actor=None, reason=reason, automatic=True)


def seed_import() -> None:
    """The seed record page, imported as `manage.py import_seed` does."""
    from django.core.management import call_command

    call_command("import_seed", stdout=open("/dev/null", "w"))


def load_examples(*names: str):
    """Import the named documents of data/examples/ (file-name stems) with the documents before them
    in file-name order (a document may name the records of those before it: their models, works
    and sources; every one when none is named; the seed first: they name its areas, contexts and
    sources), with their curation review, as `manage.py load_examples` does for all of them."""
    from records.examples import example_paths, examples_load

    if not names:
        return examples_load(paths=None)
    paths = example_paths()
    last = max(index for index, path in enumerate(paths) if path.stem in names)
    return examples_load(paths=paths[: last + 1])


def load_for_module(module_transaction, *names: str):
    """The seed, then `load_examples(*names)`, in a module's transaction (tests/conftest.py's
    `module_transaction`): loaded once for the module's tests, rolled back after them."""
    with module_transaction.unblock():
        seed_import()
        return load_examples(*names)
