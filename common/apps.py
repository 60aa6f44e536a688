from django.apps import AppConfig


class CommonConfig(AppConfig):
    """What every app shares (API base classes, admin mixins, rate limiting, error and actor types).
    It has no models and imports no app of the portal."""

    name = "common"
    verbose_name = "Common"
