"""An async executor (tools awaited, asyncio.sleep backoff), correct except that it never gives
up on a 503 before its attempts run out — it has no circuit breaker."""

import asyncio

TRANSIENT = {429, 500, 502, 503, 504}


class AsyncExecutor:
    def __init__(self, tools):
        self.tools = tools

    async def execute_tool(self, name, arguments):
        tool = self.tools.get(name)
        if tool is None:
            return {"error": "unknown tool"}
        from fuzzer.targets.executor_robust import model_for

        try:
            model_for(tool.schema).model_validate(arguments, strict=True)
        except Exception:
            return {"error": "invalid arguments"}
        for attempt in range(1, 11):
            try:
                return await tool(**arguments)
            except Exception as exc:
                status = getattr(getattr(exc, "response", None), "status_code", None)
                transient = status in TRANSIENT or isinstance(exc, (TimeoutError, ConnectionError))
                if not transient or attempt == 10 or not tool.idempotent:
                    return {"error": type(exc).__name__}
                await asyncio.sleep(min(0.1 * 2 ** (attempt - 1), 5.0))
        return {"error": "gave up"}


def make_executor(tools):
    return AsyncExecutor(tools)
