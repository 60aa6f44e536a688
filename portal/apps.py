from django.apps import AppConfig


class PortalConfig(AppConfig):
    name = "portal"
    verbose_name = "Portal"

    def ready(self) -> None:
        from prometheus_client import REGISTRY

        from portal.observability import QueueCollector, connect_task_logging

        connect_task_logging()
        if not any(isinstance(c, QueueCollector) for c in getattr(REGISTRY, "_collector_to_names", {})):
            REGISTRY.register(QueueCollector())
