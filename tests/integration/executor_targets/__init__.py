"""Executors used by the executor harness's tests (importable as tests.integration.executor_targets.*)."""
