import pytest


def pytest_collection_modifyitems(items):
    """The runner has no Django: its tests answer the same on every database and broker."""
    for item in items:
        if "/benchmarks/ia3/" in str(item.fspath):
            item.add_marker(pytest.mark.backend_independent)
