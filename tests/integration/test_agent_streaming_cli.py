"""`fuzz agent` against loops written with stream=True and the SDKs' .stream(...) helpers: the
clean ones run every episode and keep their promises; one that runs a call on its first chunk is
caught."""

from __future__ import annotations

import pytest

LOOPS = "tests.integration.targets.agent_streaming"


@pytest.mark.slow
@pytest.mark.parametrize("loop,shape", [("openai_stream", "openai"), ("anthropic_stream", "anthropic"),
                                        ("openai_helper", "openai"), ("anthropic_helper", "anthropic")])
def test_a_loop_written_against_streamed_responses_runs_under_fuzz_agent(cli, loop, shape):
    result = cli("agent", "--agent", f"{LOOPS}:{loop}", "--model-shape", shape, "--max-examples", "300",
                 "--report", "r.json", timeout=240)
    assert result.code == 0, result
    report = result.report()
    assert report["episodes"] >= 300 and report["tool_executions"] > 100 and report["failures"] == []


@pytest.mark.slow
def test_a_loop_that_runs_a_call_on_its_first_chunk_is_caught(cli):
    result = cli("agent", "--agent", f"{LOOPS}:openai_eager", "--model-shape", "openai", "--max-examples", "300",
                 "--report", "r.json", timeout=240)
    assert result.code == 1, result
    found = {f["verdict"]: f for f in result.report()["failures"]}
    assert "premature_execution" in found, sorted(found)
    assert "chunks that carry its call had arrived" in found["premature_execution"]["reason"]
