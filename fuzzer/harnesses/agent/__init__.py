"""The agent-loop harness: an adversarial scripted model against the user's tool-use loop.

A tool-use loop is a state machine (user input -> the model decides -> a tool runs -> its result is
fed back -> the model decides again), and it fails in ways a single parse never shows: it never
stops, it runs the same call twice, it forgets a result, it runs a call the model truncated, it
loses the final answer. This package plays a generated **script** of model turns through a fake
model client in three shapes (text protocol, OpenAI-compatible, Anthropic-compatible) and tool
doubles, records what the loop did, and judges the record against the loop's declared **policy**.

Modules, one concept each:

* :mod:`~fuzzer.harnesses.agent.script` — the script of an episode: its turns, tool results and listing;
* :mod:`~fuzzer.harnesses.agent.generation` — the kinds of step, and a script drawn from a choice sequence;
* :mod:`~fuzzer.harnesses.agent.trace` — what the loop did in one episode (requests, executions, reply);
* :mod:`~fuzzer.harnesses.agent.models` — the scripted model in its three shapes;
* :mod:`~fuzzer.harnesses.agent.tools` — the tool doubles and the interface fault-injecting tools plug into;
* :mod:`~fuzzer.harnesses.agent.policy` — the loop's declared promises, with defaults;
* :mod:`~fuzzer.harnesses.agent.checks` — the oracles, one registered check per verdict;
* :mod:`~fuzzer.harnesses.agent.worker` — one episode, played inside an isolated worker process;
* :mod:`~fuzzer.harnesses.agent.job` — the campaign (generate, run, judge, confirm, shrink, record);
* :mod:`~fuzzer.harnesses.agent.findings` — a failure, printed as the shortest script that shows it;
* :mod:`~fuzzer.harnesses.agent.reproduce` — replay one script in-process (the reproduce command);
* :mod:`~fuzzer.harnesses.agent.harness` — the ``agent`` corpus entry kind for ``fuzz replay`` / ``fuzz gate``.
"""
