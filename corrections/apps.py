from django.apps import AppConfig


class CorrectionsConfig(AppConfig):
    """Public suggestions to correct a record: the form, the API, moderation in the admin, mail.
    Above records: an accepted value is written through records' services."""

    name = "corrections"
    verbose_name = "Correction suggestions"
