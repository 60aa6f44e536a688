import pytest


def pytest_collection_modifyitems(items):
    """The runner has no Django: its tests answer the same on every database and broker. CI runs them
    in its embedded pass, which keeps the two passes about equally long."""
    for item in items:
        if "/benchmarks/ia3/" in str(item.fspath):
            item.add_marker(pytest.mark.backend_independent)
            item.add_marker(pytest.mark.embedded_pass)
