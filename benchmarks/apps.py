from django.apps import AppConfig


class BenchmarksConfig(AppConfig):
    name = "benchmarks"
    verbose_name = "Benchmarks"

    def ready(self) -> None:
        from benchmarks import checks  # noqa: F401  (registers the system checks)
