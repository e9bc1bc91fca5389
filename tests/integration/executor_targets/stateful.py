"""The robust example behind a wrapper with process-wide state: every 37th executor the process
builds fails its first call with an undeclared error (like a connection pool that leaks one
connection per scenario). Run again alone, the failing scenario passes: the violation is real
but does not reproduce."""

from fuzzer.targets.executor_robust import make_executor as robust

_BUILT = [0]


class PoolExhausted:
    def __init__(self, inner):
        self.inner = inner
        _BUILT[0] += 1
        self.exhausted = _BUILT[0] % 37 == 0

    def execute_tool(self, name, arguments):
        if self.exhausted:
            raise RuntimeError("connection pool exhausted")
        return self.inner.execute_tool(name, arguments)


def make_executor(tools):
    return PoolExhausted(robust(tools))
