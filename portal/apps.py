from django.apps import AppConfig


class PortalConfig(AppConfig):
    name = "portal"
    verbose_name = "Portal"

    def ready(self) -> None:
        from prometheus_client import REGISTRY

        from portal import checks  # noqa: F401  (registers the deployment checks)
        from portal.observability import JobCollector, QueueCollector, connect_task_logging

        connect_task_logging()
        registered = {type(collector) for collector in getattr(REGISTRY, "_collector_to_names", {})}
        for collector in (QueueCollector, JobCollector):
            if collector not in registered:
                REGISTRY.register(collector())
