"""HTTP mode: real tool code written with ``requests`` and with ``httpx`` runs unchanged against
injected faults, and no socket is opened (the worker's audit hook counts every socket created
and refuses every connect and DNS lookup)."""

from __future__ import annotations

from fuzzer.harnesses.executor.job import ExecutorCampaign, ExecutorSettings, ScenarioReplay, open_pool
from fuzzer.harnesses.executor.policy import policy_from_mapping
from fuzzer.harnesses.executor.scenario import scenario_from_json
from fuzzer.engine.pipeline import run_job
from strategies._internal.tools import builtin_registry
from tests.conftest import ROOT

REGISTRY = builtin_registry()
TOOLS = "fuzzer.targets.executor_http_tools:TOOLS"
POLICY = policy_from_mapping({"http_responses": {"get_weather": {"temperature": 21.5},
                                                 "get_stock_price": {"price": 187.25}}}, source="test")


class Recorded(ExecutorCampaign):
    """A campaign that keeps every trace it files (one worker sends them all whole: the engine
    judges them)."""

    def __init__(self, settings):
        super().__init__(settings, registry=REGISTRY, policy=POLICY)
        self.traces = []
        count = self.subject._count

        def keep(scenario, trace, job):
            self.traces.append(trace)
            count(scenario, trace, job)

        self.subject._count = keep


def test_requests_and_httpx_tools_meet_every_fault_and_no_socket_is_opened():
    settings = ExecutorSettings(executor="fuzzer.targets.executor_robust:make_executor", http=True, implementations=TOOLS,
                                max_examples=120, seed=3, cwd=str(ROOT))
    recorded = Recorded(settings)
    final = run_job(recorded)
    result = final.result
    assert len(recorded.traces) == result.executions == 120
    assert result.tools == ["get_weather", "get_stock_price"]
    assert final.exit_code == 0, [f.best_violation.reason for f in result.findings]
    invocations = [inv for t in recorded.traces for step in t.steps for inv in step["invocations"]]
    by_tool = {tool: [i for i in invocations if i["tool"] == tool] for tool in result.tools}
    for tool, calls in by_tool.items():  # each tool made real HTTP requests through the replaced transport
        assert sum(i.get("requests", 0) for i in calls) >= len(calls) > 20, tool
        assert {"timeout", "http_429", "http_503", "connection_refused", "malformed_body"} <= {i["fault"] for i in calls}
    assert all(not t.data.get("network_blocked") and not t.data.get("sockets_created") for t in recorded.traces)
    ok = [i for i in invocations if i["fault"] == "ok"]
    assert ok and all(not i.get("raised") for i in ok)


def test_a_tool_that_opens_a_socket_itself_is_refused_and_seen():
    settings = ExecutorSettings(executor="tests.integration.executor_targets.broken:make_socket_tool", cwd=str(ROOT))
    scenario = scenario_from_json({"steps": [{"name": "get_weather", "arguments": {"city": "Paris"}}]}, REGISTRY)
    final = run_job(ScenarioReplay(settings, scenario, registry=REGISTRY, policy=POLICY))
    trace = final.result.trace
    assert trace.data["network_blocked"][0].startswith("socket.getaddrinfo")
    assert "real network access is blocked" in trace.steps[0]["value"]["error"]


def test_a_server_answer_through_each_library_reaches_the_tool_as_the_library_shapes_it():
    settings = ExecutorSettings(executor="fuzzer.targets.executor_robust:make_executor", http=True, implementations=TOOLS,
                                cwd=str(ROOT))
    scenario = scenario_from_json({"steps": [
        {"name": "get_weather", "arguments": {"city": "Paris"},
         "schedule": {"faults": [{"kind": "http_429", "retry_after": 3, "form": "date"}]}},
        {"name": "get_stock_price", "arguments": {"ticker": "AAPL"},
         "schedule": {"faults": [{"kind": "timeout", "after": 5}]}},
    ]}, REGISTRY)
    final = run_job(ScenarioReplay(settings, scenario, registry=REGISTRY, policy=POLICY))
    weather, stock = final.result.trace.steps
    assert weather["value"] == {"city": "Paris", "temperature": 21.5, "unit": "celsius"}
    first, second = weather["invocations"]
    assert first["retry_after"] >= 3 and second["t0"] - first["t1"] >= first["retry_after"]  # HTTP date honoured
    assert stock["value"] == {"ticker": "AAPL", "price": 187.25}
    assert stock["invocations"][0]["t1"] - stock["invocations"][0]["t0"] == 5  # the timeout took its 5 s
    assert final.exit_code == 0
