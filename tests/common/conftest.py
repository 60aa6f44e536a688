"""Fixtures of the tests of common/: the lifecycle's tests use benchmark jobs as their concrete rows."""

from tests.benchmarks.conftest import timed_protocol  # noqa: F401 (a run-time protocol and its task's dataset)
