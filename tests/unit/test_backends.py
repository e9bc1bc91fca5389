"""Back ends: the dispatcher's promises under lost members, what travels to a member, the registry
and the CLI's one-line errors. No process is started here (the Ray cluster tests are in
tests/integration/test_ray_backend.py)."""

from __future__ import annotations

import pickle
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzer.backends import BACKENDS, BackendError, check_backend, describe, make_pool
from fuzzer.backends.dispatch import Dispatcher, MemberLost
from fuzzer.backends.relay import (RecordingOrder, chunk_bounds, chunk_of, deadline_in, orders_per_call,
                                   replay_resumes, seconds_left)
from fuzzer.harnesses.parser.outcome import TargetSpec
from fuzzer.isolation.pool import Lost
from fuzzer.harnesses.parser.outcome import Outcome


# --------------------------------------------------------------------------- the dispatcher

class _Member:
    def __init__(self, name: int):
        self.name, self.dead = name, False


class _Handle:
    def __init__(self, member: _Member, unit: int):
        self.member, self.unit, self.delivered = member, unit, False


def _weight(unit: int) -> int:
    """What a unit counts for (a group of orders sent in one call counts its orders)."""
    return unit % 3 + 1


class ScriptedTransport:
    """Members that finish units in the order a Hypothesis ``data`` draws, and die when it says
    (then every handle they hold fails, as a Ray actor's calls do when its node goes)."""

    def __init__(self, data, members: int, replacements: int):
        self.data = data
        self._members = [_Member(i) for i in range(members)]
        self.replacements = replacements
        self.joining_members: list = []
        self.sent: list[tuple[int, int]] = []  # (member, unit)
        self.held_at_loss: list[int] = []  # units sent to a member and not delivered when it was lost
        self.lost_names: list[int] = []
        self.outstanding: list[_Handle] = []
        self._next = members

    def members(self):
        return self._members

    def submit(self, member, unit):
        handle = _Handle(member, unit)
        self.sent.append((member.name, unit))
        self.outstanding.append(handle)
        return handle

    def wait(self, handles, timeout):
        live = [h for h in handles if isinstance(h, _Handle)]
        joining = [h for h in handles if not isinstance(h, _Handle)]
        if joining and self.data.draw(st.booleans(), label="a replacement joins"):
            return [joining[0]]
        if not live:
            return joining[:1]
        victims = [m for m in self._members if not m.dead]
        if len(victims) > 1 or (victims and (self.replacements or self.joining_members)):
            if self.data.draw(st.integers(0, 4), label="a member dies") == 0:
                victim = self.data.draw(st.sampled_from(victims), label="which member")
                victim.dead = True
        return [self.data.draw(st.sampled_from(live), label="finished")]

    def take(self, handle):
        if handle.member.dead:
            raise MemberLost(f"member {handle.member.name} died")
        handle.delivered = True
        return (handle.member.name, handle.unit)

    def lose(self, member, why):
        self.held_at_loss.append(sum(_weight(h.unit) for h in self.outstanding if h.member is member and not h.delivered))
        self._members.remove(member)
        self.lost_names.append(member.name)
        if self.replacements:
            self.replacements -= 1
            joining = _Member(self._next)
            self._next += 1
            self.joining_members.append(joining)

    def joining(self):
        return [("join", m.name) for m in self.joining_members]

    def joined(self, handle):
        member = next(m for m in self.joining_members if m.name == handle[1])
        self.joining_members.remove(member)
        self._members.append(member)

    def gone(self, why):
        return RuntimeError(why)


@settings(max_examples=200, deadline=None)
@given(data=st.data(), count=st.integers(0, 40), members=st.integers(1, 4), replacements=st.integers(0, 3))
def test_every_unit_is_delivered_once_from_a_live_member_and_reruns_are_the_units_lost_members_held(
        data, count, members, replacements):
    transport = ScriptedTransport(data, members, replacements)
    dispatcher = Dispatcher(transport, max_reruns=10**6)  # nothing given up: every unit must arrive
    delivered: list[tuple[int, tuple]] = []
    try:
        dispatcher.run(count, lambda unit, value: delivered.append((unit, value)), weight=_weight)
    except RuntimeError as exc:  # every member died and no replacement was left
        assert "no member is left" in str(exc)
        assert not transport.members() and not transport.joining_members
        return
    units = [unit for unit, _ in delivered]
    assert sorted(units) == list(range(count))  # each exactly once
    assert all(value[1] == unit for unit, value in delivered)  # its own result
    assert dispatcher.rerun == sum(transport.held_at_loss)
    assert dispatcher.members_lost == len(transport.lost_names)
    # sent once, plus once per loss it suffered (re-runs are counted by weight)
    sends: dict = {}
    for _name, unit in transport.sent:
        sends[unit] = sends.get(unit, 0) + 1
    assert sum(_weight(unit) * (n - 1) for unit, n in sends.items()) == dispatcher.rerun


@settings(max_examples=100, deadline=None)
@given(data=st.data(), count=st.integers(1, 30))
def test_a_unit_that_takes_down_every_member_is_given_up_not_run_forever(data, count):
    transport = ScriptedTransport(data, 2, replacements=50)
    dispatcher = Dispatcher(transport, max_reruns=2)
    delivered: dict = {}
    try:
        dispatcher.run(count, delivered.__setitem__, weight=_weight)
    except RuntimeError:
        return
    assert sum(map(_weight, delivered)) + dispatcher.given_up == sum(map(_weight, range(count)))
    assert dispatcher.rerun + dispatcher.given_up == sum(transport.held_at_loss)


class _Instant:
    """Members that finish every unit at once, in order, and never die."""

    def __init__(self, members: int = 2):
        self._members = [_Member(i) for i in range(members)]
        self.sent: list = []
        self.events: list = []

    def members(self):
        return self._members

    def submit(self, member, unit):
        self.sent.append((member.name, unit))
        self.events.append(("sent", unit))
        return _Handle(member, unit)

    def wait(self, handles, timeout):
        return list(handles)

    def take(self, handle):
        return handle.unit

    def joining(self):
        return []


def test_two_units_in_flight_per_member_then_the_rest_as_results_arrive_and_on_arrived_after_sending():
    transport = _Instant(members=2)
    arrived: list = []

    def on_arrived():
        transport.events.append(("arrived", len(arrived)))

    Dispatcher(transport).run(7, lambda unit, value: arrived.append(unit), on_arrived=on_arrived)
    assert [unit for _, unit in transport.sent[:4]] == [0, 1, 2, 3]
    assert [name for name, _ in transport.sent[:4]] == [0, 1, 0, 1]  # one each, then a second each
    assert sorted(arrived) == list(range(7))
    # the members get their next units before the caller judges what arrived
    first_notice = transport.events.index(("arrived", 4))
    assert ("sent", 6) in transport.events[:first_notice]


def test_width_one_sends_everything_to_the_first_member_in_order():
    transport = _Instant(members=3)
    Dispatcher(transport).run(5, lambda unit, value: None, width=1)
    assert {name for name, _ in transport.sent} == {0}
    assert [unit for _, unit in transport.sent] == [0, 1, 2, 3, 4]


def test_stop_when_sends_nothing_more_but_what_is_in_flight_arrives():
    transport = _Instant(members=2)
    got: list = []
    Dispatcher(transport).run(10, lambda unit, value: got.append(unit), stop_when=lambda: len(transport.sent) >= 4)
    assert sorted(got) == [0, 1, 2, 3]


def test_a_deadline_already_passed_sends_nothing_and_on_sent_is_called_once_otherwise():
    transport = _Instant()
    got: list = []
    Dispatcher(transport).run(3, lambda unit, value: got.append(unit), deadline=0.0)
    assert got == [] and transport.sent == []
    calls: list = []
    Dispatcher(transport).run(5, lambda unit, value: got.append(unit), on_sent=lambda: calls.append(1))
    assert calls == [1] and sorted(got) == list(range(5))


# --------------------------------------------------------------------------- what travels

def _resolve(texts: list) -> list[str]:
    """Texts with their prefix references (``(index, end)``) resolved, as a worker reads them."""
    return [t if t.__class__ is str else texts[t[0]][:t[1]] for t in texts]


@st.composite
def _texts_with_prefixes(draw):
    texts: list = []
    for _ in range(draw(st.integers(0, 12))):
        bases = [i for i, t in enumerate(texts) if t.__class__ is str]
        if bases and draw(st.booleans()):
            base = draw(st.sampled_from(bases))
            texts.append((base, draw(st.integers(0, len(texts[base])))))
        else:
            texts.append(draw(st.text(max_size=8)))
    return texts


@given(texts=_texts_with_prefixes(), size=st.integers(1, 5))
def test_chunks_stand_alone_and_read_as_the_whole_list_does(texts, size):
    whole = _resolve(texts)
    rebuilt: list[str] = []
    for start, stop in chunk_bounds(len(texts), size):
        chunk = chunk_of(texts, start, stop)
        assert all(t.__class__ is str or 0 <= t[0] < len(chunk) for t in chunk)  # refs point inside
        rebuilt += _resolve(chunk)
    assert rebuilt == whole


@given(count=st.integers(1, 2000), members=st.integers(1, 300), depth=st.integers(1, 3), most=st.integers(1, 16))
def test_a_round_costs_one_call_per_member_when_it_is_short_and_keeps_every_member_fed_when_it_is_long(
        count, members, depth, most):
    size = orders_per_call(count, members, depth, most)
    calls = len(chunk_bounds(count, size))
    assert 1 <= size <= most
    if count <= depth * members:  # (a large cluster's every round: two orders per worker)
        assert calls <= members or size == most
        # no member runs more orders than the fairest split gives one (the round lasts no longer)
        assert size == -(-count // members) or size == most
    else:  # every member has its next group while it runs one
        assert calls >= depth * members


def test_on_a_large_cluster_a_round_of_two_orders_per_actor_is_one_call_each():
    assert orders_per_call(512, 256, 2, 8) == 2  # (it was 1: 512 calls a round, ~0.5 ms of CPU each)
    assert orders_per_call(16, 2, 2, 8) == 4  # two actors: two groups in flight each, as before


def test_a_deadline_travels_as_the_seconds_left():
    assert seconds_left(None) is None and deadline_in(None) is None
    assert seconds_left(105.0, now=100.0) == 5.0 and seconds_left(99.0, now=100.0) == 0.0
    assert deadline_in(5.0, now=7000.0) == 7005.0


class _Order:
    """An order as the protocol knows it: size, run, resume (keeping what it lost)."""

    def __init__(self, n: int):
        self.n, self.lost, self.skip = n, [], frozenset()

    @property
    def size(self) -> int:
        return self.n

    def run(self, runner):
        return ("ran", self.n, sorted(self.skip))

    def resume(self, lost) -> bool:
        self.lost.append(lost)
        self.skip = self.skip | {lost.index}
        return len(self.lost) < 2


def test_a_recording_order_pickles_as_the_order_and_its_resumes_replay_on_the_callers_order():
    caller = _Order(5)
    copy = pickle.loads(pickle.dumps(caller))  # what the member receives
    recording = RecordingOrder(copy)
    in_worker = pickle.loads(pickle.dumps(recording))  # what the member's worker receives
    assert type(in_worker) is _Order and in_worker.n == 5 and recording.size == 5
    lost = [Lost(Outcome("died", detail="killed by SIGKILL"), "json", "{", True, 3),
            Lost(Outcome("hung"), "json", "[", True, 4)]
    assert [recording.resume(x) for x in lost] == [True, False]  # the copy's answers, for the member's pool
    returned = pickle.loads(pickle.dumps((None, recording.resumed)))[1]  # (result, resumed) comes back
    replay_resumes(caller, returned)
    assert [x.index for x in caller.lost] == [3, 4] and caller.skip == frozenset({3, 4})
    assert caller.lost[0].outcome.detail == "killed by SIGKILL"


def test_an_order_without_resume_travels_and_its_lost_input_is_its_result():
    class Plain:
        size = 1

        def run(self, runner):
            return "done"

    recording = RecordingOrder(Plain())
    assert recording.resume(Lost(Outcome("died"), "", "", False, 0)) is False
    replay_resumes(Plain(), recording.resumed)  # nothing to replay on: no error


# --------------------------------------------------------------------------- the registry and the CLI

SPEC = TargetSpec(target="fuzzer.targets.naive:parse")


def test_backends_are_registered_by_name_and_local_is_the_worker_pool():
    from fuzzer.isolation import WorkerPool

    assert BACKENDS.names() == ["local", "ray"]
    pool = make_pool("local", SPEC, 3)
    assert isinstance(pool, WorkerPool) and pool.workers == 3 and not pool.started
    assert describe(pool) == {"name": "local", "workers": 3}
    with pytest.raises(Exception, match="unknown backend 'rya'; did you mean ray"):
        make_pool("rya", SPEC, 1)


def test_ray_address_without_the_ray_backend_is_a_usage_error():
    with pytest.raises(BackendError, match=r"--ray-address 10\.0\.0\.1:6379: only with --backend ray"):
        check_backend("local", "10.0.0.1:6379")


@pytest.fixture
def no_ray(monkeypatch):
    """Ray not installed (an import of it fails as it does without the extra)."""
    monkeypatch.setitem(sys.modules, "ray", None)
    monkeypatch.delitem(sys.modules, "fuzzer.backends.ray", raising=False)


def test_without_ray_the_ray_backend_says_how_to_install_it(no_ray):
    with pytest.raises(BackendError) as info:
        make_pool("ray", SPEC, 2)
    assert str(info.value) == "--backend ray: Ray is not installed; install it with pip install 'toolfuzz[ray]'"


@pytest.mark.parametrize("command", [
    ["campaign", "--tool", "get_weather", "--target", "fuzzer.targets.naive:parse", "--backend", "ray"],
    ["gate", "--corpus", "c", "--target", "fuzzer.targets.naive:parse", "--backend", "ray"],
])
def test_cli_without_ray_is_one_line_and_exit_2(runner, no_ray, tmp_path, command):
    (tmp_path / "c").mkdir()
    result = runner(*command)
    assert result.code == 2, result
    assert result.output.strip() == ("Error: --backend ray: Ray is not installed; install it with "
                                     "pip install 'toolfuzz[ray]'"), result


def test_cli_ray_address_without_ray_backend_is_one_line_and_exit_2(runner):
    result = runner("campaign", "--tool", "get_weather", "--target", "fuzzer.targets.naive:parse",
                    "--ray-address", "10.0.0.1:6379")
    assert result.code == 2, result
    assert result.output.strip().startswith("Error: --ray-address 10.0.0.1:6379: only with --backend ray"), result


def test_workers_auto_is_one_per_cpu_of_wherever_the_back_end_runs():
    from fuzzer.cli.options import AutoCount, Workers, backend_pool

    auto = Workers().convert("auto", None, None)
    assert isinstance(auto, AutoCount) and auto >= 1
    assert backend_pool(SPEC, auto, "local").workers == int(auto)  # this machine's cores
    ray_pool = backend_pool(SPEC, auto, "ray")
    assert ray_pool.requested is None  # the cluster's CPUs, counted when it starts
    assert backend_pool(SPEC, Workers().convert("3", None, None), "ray").requested == 3


def test_the_gates_campaign_runs_on_the_back_end_it_was_given():
    from fuzzer.backends.ray import RayPool
    from fuzzer.engine.harness import ReplayContext, load_harnesses
    from strategies._internal.tools import builtin_registry

    _campaign_job = load_harnesses()["parser"].campaign_job
    context = ReplayContext(registry=builtin_registry(), workers=2, max_examples=100,
                            extra={"tools": ["get_weather"], "backend": "ray", "ray_address": "10.0.0.1:6379"})
    job = _campaign_job("fuzzer.targets.naive:parse", context)
    assert isinstance(job.pool, RayPool) and job.pool.address == "10.0.0.1:6379" and job.pool.requested == 2
    assert not job.pool.started  # nothing joined before the job runs


# --------------------------------------------------------------------------- every harness on the back end

EXECUTOR, AGENT = "fuzzer.targets.executor_naive:make_executor", "fuzzer.targets.agent_naive:run"
STREAM = "fuzzer.targets.stream_naive:make_parser"


@pytest.mark.parametrize("command", [
    ["executor", "--executor", EXECUTOR, "--backend", "ray"],
    ["agent", "--agent", AGENT, "--backend", "ray"],
    ["stream", "--parser", STREAM, "--backend", "ray"],
], ids=["executor", "agent", "stream"])
def test_executor_and_agent_without_ray_are_one_line_and_exit_2(runner, no_ray, command):
    result = runner(*command)
    assert result.code == 2, result
    assert result.output.strip() == ("Error: --backend ray: Ray is not installed; install it with "
                                     "pip install 'toolfuzz[ray]'"), result


@pytest.mark.parametrize("command", [["executor", "--executor", EXECUTOR], ["agent", "--agent", AGENT],
                                     ["stream", "--parser", STREAM]], ids=["executor", "agent", "stream"])
def test_executor_and_agent_ray_address_without_ray_backend_is_one_line_and_exit_2(runner, command):
    result = runner(*command, "--ray-address", "10.0.0.1:6379")
    assert result.code == 2, result
    assert result.output.strip() == ("Error: --ray-address 10.0.0.1:6379: only with --backend ray (the local back "
                                     "end runs on this machine)"), result


class _NotStarted(Exception):
    pass


@pytest.fixture
def ray_pools_not_started(monkeypatch):
    """Every RayPool started is recorded instead (no Ray joined, no process)."""
    from fuzzer.backends.ray import RayPool

    started: list = []

    def start(self):
        started.append(self)
        raise _NotStarted

    monkeypatch.setattr(RayPool, "start", start)
    return started


def test_the_gates_executor_and_agent_campaigns_run_on_the_back_end_it_was_given(ray_pools_not_started):
    from fuzzer.backends.ray import RayPool
    from fuzzer.cli.options import Workers
    from fuzzer.engine.harness import ReplayContext
    from fuzzer.harnesses.agent.harness import campaign_job
    from fuzzer.harnesses.executor.harness import gate_campaign
    from fuzzer.isolation.spec import load_timeout
    from strategies._internal.tools import builtin_registry

    context = ReplayContext(registry=builtin_registry(), workers=Workers().convert("auto", None, None),
                            max_examples=100, extra={"backend": "ray", "ray_address": "10.0.0.1:6379"})
    executor = gate_campaign(EXECUTOR, context)
    with pytest.raises(_NotStarted):
        executor.subject.start(executor)  # where the executor's pool is opened (and its policy checked)
    (pool,) = ray_pools_not_started
    assert (pool.address, pool.requested) == ("10.0.0.1:6379", None)  # auto: one actor per CPU of the cluster
    assert pool.spec.config.executor == EXECUTOR
    # the executor's zygote imports it within the load timeout, then warms up within its own limit
    assert pool.load_timeout == load_timeout(None)

    agent = campaign_job(AGENT, context)
    assert isinstance(agent.pool, RayPool) and not agent.pool.started
    assert (agent.pool.address, agent.pool.requested) == ("10.0.0.1:6379", None)
    assert agent.pool.spec.settings.agent == AGENT


def test_without_a_back_end_the_gates_executor_and_agent_campaigns_stay_local(monkeypatch):
    from fuzzer.engine.harness import ReplayContext
    from fuzzer.harnesses.agent.harness import campaign_job
    from fuzzer.harnesses.executor.harness import gate_campaign
    from fuzzer.isolation import WorkerPool
    from strategies._internal.tools import builtin_registry

    opened: list = []

    def start(self):
        opened.append(self)
        raise _NotStarted

    monkeypatch.setattr(WorkerPool, "start", start)
    context = ReplayContext(registry=builtin_registry(), workers=2, max_examples=100)
    executor = gate_campaign(EXECUTOR, context)
    with pytest.raises(_NotStarted):
        executor.subject.start(executor)
    assert [type(p) for p in opened] == [WorkerPool] and opened[0].workers == 2
    agent = campaign_job(AGENT, context)
    assert type(agent.pool) is WorkerPool and agent.pool.workers == 2


def test_findings_are_confirmed_and_shrunk_in_a_local_pool_whatever_back_end_runs_the_rounds(monkeypatch):
    """Under a time budget the engine settles findings in a pool of one worker beside the rounds.
    It made that pool of the rounds' own class: a second Ray pool, whose actor waits for a CPU the
    run's actors hold (a full cluster: the run failed at its start-up limit)."""
    from fuzzer.backends.ray import RayPool
    from fuzzer.harnesses.agent.job import AgentCampaign, AgentSettings
    from fuzzer.isolation import WorkerPool

    started: list = []
    monkeypatch.setattr(RayPool, "start", lambda self: started.append(self))
    monkeypatch.setattr(WorkerPool, "start", lambda self: started.append(self))
    job = AgentCampaign(AgentSettings(agent=AGENT, budget_s=30.0, workers=2, backend="ray"))
    assert isinstance(job.pool, RayPool)
    settle = job._settle_pool()
    assert type(settle) is WorkerPool and started == [settle]
    assert settle.spec is job.pool.spec and settle.workers == 1 and settle.load_timeout == job.pool.load_timeout


# --------------------------------------------------------------------------- the stream harness on the back end

def test_a_stream_run_and_the_gates_stream_campaign_run_on_the_back_end_they_were_given(monkeypatch):
    """`fuzz stream --backend ray` and `fuzz gate --stream-parser ... --backend ray`: the rounds on
    Ray actors; findings confirmed and shrunk in a local pool of one worker of the same spec."""
    from fuzzer.backends.ray import RayPool
    from fuzzer.cli.options import Workers
    from fuzzer.engine.harness import ReplayContext
    from fuzzer.harnesses.stream.harness import gate_campaign
    from fuzzer.harnesses.stream.job import StreamCampaign, StreamSettings
    from fuzzer.harnesses.stream.worker import Settings
    from fuzzer.isolation import WorkerPool
    from strategies._internal.tools import builtin_registry

    started: list = []
    monkeypatch.setattr(RayPool, "start", lambda self: started.append(self))
    monkeypatch.setattr(WorkerPool, "start", lambda self: started.append(self))
    settings = StreamSettings(target=Settings(parser=STREAM), budget_s=30.0, workers=2, backend="ray",
                              ray_address="10.0.0.1:6379")
    job = StreamCampaign(settings, registry=builtin_registry())
    assert isinstance(job.pool, RayPool) and not job.pool.started
    assert (job.pool.address, job.pool.requested) == ("10.0.0.1:6379", 2)
    assert job.pool.spec.settings.parser == STREAM and job.pool.load_timeout == settings.spec().load_timeout
    settle = job._settle_pool()
    assert type(settle) is WorkerPool and started == [settle]
    assert settle.spec is job.pool.spec and settle.workers == 1 and settle.load_timeout == job.pool.load_timeout

    context = ReplayContext(registry=builtin_registry(), workers=Workers().convert("auto", None, None),
                            max_examples=100, extra={"stream_parser": STREAM, "backend": "ray",
                                                     "ray_address": "10.0.0.1:6379"})
    gate = gate_campaign(None, context)
    assert isinstance(gate.pool, RayPool) and not gate.pool.started
    assert (gate.pool.address, gate.pool.requested) == ("10.0.0.1:6379", None)  # auto: the cluster's CPUs
    assert gate.pool.spec.settings.parser == STREAM
    local = gate_campaign(None, ReplayContext(registry=builtin_registry(), workers=2, max_examples=100,
                                              extra={"stream_parser": STREAM}))
    assert type(local.pool) is WorkerPool and local.pool.workers == 2


def test_stream_diff_on_another_back_end_is_one_line_and_exit_2(runner):
    result = runner("stream", "--parser", STREAM, "--diff", "fuzzer.targets.stream_reference:make_parser",
                    "--backend", "ray")
    assert result.code == 2, result
    (line,) = result.output.strip().splitlines()
    assert line.startswith("Error: Invalid value for '--backend': ray is not used with --diff (the diff streams into "
                           "both versions on this machine's workers); drop --backend"), result
