"""The robust example with one planted bug: it treats 404 Not Found as transient and retries it.

Everything else is the robust executor unchanged, so the harness must report exactly one
violation: ``retry_violation`` (a non-transient client error retried)."""

from fuzzer.targets.executor_robust import RETRY_STATUSES, RobustExecutor


class RetriesNotFound(RobustExecutor):
    retry_statuses = RETRY_STATUSES | {404}


def make_executor(tools):
    return RetriesNotFound(tools)
