"""The Ray back end on a real two-node Ray cluster started on this machine (ray.cluster_utils), no
mock of Ray: a campaign, an executor run, an agent run and a stream run each find what the local
back end finds with the same seed, a node removed
mid-campaign costs nothing but re-run orders, a target that kills its worker leaves the actor
alone, Ctrl-C stops the Ray instance the run started (and the actors of a cluster it joined), and
a bad address is one line.

One cluster per module (two nodes, one CPU each, so the two actors of a run land on two nodes);
the campaigns are short (--max-examples): each run costs seconds beyond joining the cluster, and
each harness has one comparison with the local back end, not one per variant."""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import time
from typing import Any, Callable

import pytest

from tests.conftest import ROOT, cli_command, cli_env, default_sigint, run_cli
from tests.integration.test_campaign_cli import _descendants, check_report

NAIVE = "fuzzer.targets.naive:parse"


@pytest.fixture(scope="module")
def two_nodes():
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    from ray.cluster_utils import Cluster

    made = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    try:
        made.add_node(num_cpus=1)
        made.wait_for_nodes()
        yield made
    finally:
        made.shutdown()


@pytest.fixture
def cluster(two_nodes):
    """The two-node cluster with each node's CPU free again: the actors an earlier test stopped are
    released by Ray in the background, and on a loaded machine a test starting meanwhile had both
    its actors placed on one node, or one placed late."""
    import logging

    import ray

    ray.init(address=two_nodes.address, logging_level=logging.ERROR, log_to_driver=False)
    try:
        deadline = time.monotonic() + 60
        while ray.available_resources().get("CPU", 0) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)  # (polling Ray's own account of its free CPUs, not waiting for luck)
    finally:
        ray.shutdown()
    return two_nodes


@pytest.fixture
def connected(cluster):
    """This process joined to the cluster (for the tests that drive a pool in-process)."""
    import logging

    import ray

    ray.init(address=cluster.address, logging_level=logging.ERROR, log_to_driver=False)
    try:
        yield cluster
    finally:
        ray.shutdown()


def _findings(report: dict) -> list:
    return sorted((f["signature"], f["count"], f["minimized_input"] or f["input"]) for f in report["failures"])


# -- must show 1 and 3: what the local back end finds, with the same seed -----------------------

def test_same_seed_finds_exactly_what_the_local_back_end_finds(cluster, tmp_path):
    args = ["campaign", "--tool", "get_weather", "--target", NAIVE, "--seed", "5", "--max-examples", "2500",
            "--no-coverage", "--workers", "2", "-q", "--timeout", "20"]  # (no load-made hang or untraced path on either side)
    local = run_cli(tmp_path, *args, "--report", "local.json")
    remote = run_cli(tmp_path, *args, "--backend", "ray", "--ray-address", cluster.address, "--report", "ray.json")
    assert local.code == 1, local
    assert remote.code == 1, remote
    mine, theirs = remote.report("ray.json"), local.report("local.json")
    check_report(mine, tool="get_weather", target=NAIVE)
    backend = mine["backend"]
    assert (backend["name"], backend["workers"], backend["nodes"], backend["actors_lost"]) == ("ray", 2, 2, 0)
    assert theirs["backend"] == {"name": "local", "workers": 2}
    assert len(theirs["failures"]) >= 5
    assert _findings(mine) == _findings(theirs)  # signatures, counts, inputs shown: the same
    assert mine["by_class"] == theirs["by_class"] and mine["executions"] == theirs["executions"] == 2500
    assert "back end: ray" in remote.stdout


def test_orders_the_actors_plan_find_what_orders_the_engine_plans_find_locally(connected):
    """Past the scheduler's first pass, a large pool's workers plan their orders themselves from the
    scheduler's snapshot (fuzzer/harnesses/parser/drawn.py): on the cluster, with the actors
    planning, the same seed finds exactly what the local back end finds with the engine planning
    from the same snapshots."""
    from fuzzer.backends.ray import RayPool
    from fuzzer.engine.pipeline import run_job
    from fuzzer.harnesses.parser.campaign import CampaignSettings
    from fuzzer.harnesses.parser.outcome import TargetSpec
    from fuzzer.isolation import WorkerPool
    from strategies._internal.tools import builtin_registry
    from tests.integration.test_orders import CountingJob, CountingTool, summary

    def campaign(pool: object, planning: str) -> object:
        settings = CampaignSettings(tools=["get_weather"], target=NAIVE, seed=5, max_examples=4000, budget_s=120.0,
                                    shrink_cap_s=30.0, slow=False, explore=False, planning=planning)
        with pool:
            return run_job(CountingJob(builtin_registry(), settings, pool)).result

    spec = TargetSpec(target=NAIVE, cwd=str(ROOT), timeout=20.0)  # (no load-made hang on either side)
    CountingTool.planned_by.clear()
    local = campaign(WorkerPool(spec, workers=2), planning="snapshots")
    assert CountingTool.planned_by["DrawOrder"] == 0
    CountingTool.planned_by.clear()
    remote = campaign(RayPool(spec, 2), planning="workers")
    assert CountingTool.planned_by["DrawOrder"] >= 8, CountingTool.planned_by
    assert len(local.findings) >= 3 and local.executions == 4000
    assert summary(remote) == summary(local)  # executions, counts by class, signatures, counts, inputs


@pytest.mark.parametrize("command, reference", [
    ("executor", "fuzzer.targets.executor_naive:make_executor"),
    ("agent", "fuzzer.targets.agent_naive:run"),
], ids=["executor", "agent"])
def test_the_executor_and_agent_harnesses_find_on_the_cluster_what_they_find_locally(cluster, tmp_path, command,
                                                                                      reference):
    """The same orders (a seed and a count each), run by actors on two nodes instead of two local
    workers: the same findings, each first shown with the same input and counted as often."""
    # (a timeout load cannot reach: a scenario the watchdog stops on a loaded machine is a hang on one
    # side only, and every finding after it is counted and first shown differently)
    args = [command, f"--{command}", reference, "--seed", "3", "--max-examples", "300", "--workers", "2",
            "--timeout", "20", "-q"]
    local = run_cli(tmp_path, *args, "--report", "local.json")
    remote = run_cli(tmp_path, *args, "--backend", "ray", "--ray-address", cluster.address, "--report", "ray.json")
    assert local.code == 1, local
    assert remote.code == 1, remote
    mine, theirs = remote.report("ray.json"), local.report("local.json")
    backend = mine["backend"]
    assert (backend["name"], backend["workers"], backend["nodes"], backend["actors_lost"]) == ("ray", 2, 2, 0)
    assert theirs["backend"] == {"name": "local", "workers": 2}
    assert len(theirs["failures"]) >= 5

    def found(report: dict) -> list:
        return sorted((f["signature"], f["count"], json.dumps(f["input"], sort_keys=True)) for f in report["failures"])

    assert found(mine) == found(theirs)
    assert mine["by_class"] == theirs["by_class"] and mine["executions"] == theirs["executions"] == 300
    assert "back end: ray" in remote.stdout, remote


STREAM_NAIVE = {"parser": "fuzzer.targets.stream_naive:make_parser",
                "consumer": "fuzzer.targets.accumulator_naive:accumulate"}


@pytest.mark.parametrize("mode, least", [("parser", 6), ("consumer", 3)])
def test_the_stream_harness_finds_on_the_cluster_what_it_finds_locally(cluster, tmp_path, mode, least):
    """The stream orders (a seed, a count of streams and what to draw them from), run by actors on
    two nodes: the same findings as two local workers, each first shown with the same stream and
    counted as often; confirmed and shrunk on the driver's machine, and every one in the corpus."""
    args = ["stream", f"--{mode}", STREAM_NAIVE[mode], "--tool", "get_weather", "--seed", "4", "--max-examples",
            "400", "--workers", "2", "--timeout", "20", "-q"]  # (a timeout load cannot reach)
    local = run_cli(tmp_path, *args, "--report", "local.json")
    remote = run_cli(tmp_path, *args, "--backend", "ray", "--ray-address", cluster.address, "--report", "ray.json",
                     "--corpus", "corp")
    assert local.code == 1, local
    assert remote.code == 1, remote
    mine, theirs = remote.report("ray.json"), local.report("local.json")
    backend = mine["backend"]
    assert (backend["name"], backend["workers"], backend["nodes"], backend["actors_lost"]) == ("ray", 2, 2, 0)
    assert theirs["backend"] == {"name": "local", "workers": 2}
    assert len(theirs["failures"]) >= least

    def found(report: dict) -> list:
        return sorted((f["signature"], f["count"], f["input"]) for f in report["failures"])

    assert found(mine) == found(theirs)
    assert mine["by_class"] == theirs["by_class"] and mine["executions"] == theirs["executions"] == 400
    assert mine["formats"] == theirs["formats"]
    assert any(f["minimized"] for f in mine["failures"]), mine["failures"]  # (shrunk, on the driver's worker)
    assert "back end: ray" in remote.stdout, remote
    stored = {json.loads(path.read_text(encoding="utf-8"))["signature"] for path in (tmp_path / "corp").glob("*.json")}
    assert stored == {f["signature"] for f in mine["failures"]}


# -- faults stay where they were: a dying worker is the actor's pool's business -----------------------

def test_a_target_that_kills_its_worker_never_takes_the_actor_down_and_two_callers_share_the_actors(connected):
    from fuzzer.backends.ray import RayPool
    from fuzzer.harnesses.parser.outcome import TargetSpec

    pool = RayPool(TargetSpec(target="tests.integration.torture_targets:exit3", cwd=str(ROOT), timeout=10.0), 2)
    try:
        pool.start()
        before = sorted(actor["pid"] for actor in pool.actors())
        texts = ['{"name": "a", "arguments": {}}', "BOOM", '{"name": "b", "arguments": {}}'] * 40  # (actors' work)
        outcomes = pool.run(texts)
        assert [o.kind for o in outcomes] == ["returned", "died", "returned"] * 40
        assert outcomes[1].detail == "exit status 3"
        # no actor taken down (one the busy cluster placed late may have joined meanwhile)
        assert set(before) <= {actor["pid"] for actor in pool.actors()}
        assert pool.describe()["actors_lost"] == 0
        # a run the caller waits on, too small to be worth a call (a confirmation, a shrink step),
        # and a fresh one, run on the driver's own worker: isolated there the same way
        assert pool.near.restarts == 0
        assert [o.kind for o in pool.run(texts[:3], fresh=True)] == ["returned", "died", "returned"]
        assert [o.kind for o in pool.run(texts[:6])] == ["returned", "died", "returned"] * 2
        assert pool.near.restarts == 3 and set(before) <= {actor["pid"] for actor in pool.actors()}
        # two callers at once (two tools' rounds could be): each gets its own outcomes, in order
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(2) as both:
            runs = [both.submit(pool.run, [f'{{"name": "t{i}", "arguments": {{}}}}', "BOOM"] * 80,
                                on_result=lambda results: None) for i in (1, 2)]
            for i, run in zip((1, 2), runs):
                assert [(o.kind, o.calls) for o in run.result()] == \
                    [("returned", [{"name": f"t{i}", "arguments": {}}]), ("died", None)] * 80
        assert pool.near.restarts == 3  # (those ran on the actors)
    finally:
        pool.close()


def test_a_local_pool_started_beside_ray_spawns_its_zygote(connected):
    """The driver of a Ray run confirms and shrinks in a local pool. Forked from a process running
    Ray's native threads, its workers ran ~100 texts/s instead of ~100,000 (findings of a budgeted
    Ray campaign were left unconfirmed and unshrunk): such a process spawns its zygote instead."""
    from fuzzer.backends.ray import RayPool
    from fuzzer.harnesses.parser.outcome import TargetSpec
    from fuzzer.isolation import WorkerPool

    with RayPool(TargetSpec(target=NAIVE), 1):  # (joined through this process's connection)
        with WorkerPool(TargetSpec(target=NAIVE)) as pool:
            assert pool.start_method == "spawn"
            outcomes = pool.run(['{"name": "get_weather", "arguments": {"city": "P"}}', "{"])
    assert [o.kind for o in outcomes] == ["returned", "rejected"]


# -- must show 2: a node removed mid-campaign ------------------------------------------------------

def test_a_node_removed_mid_campaign_costs_only_re_run_orders(connected, tmp_path):
    from corpus.store import CorpusStore
    from fuzzer.backends.ray import RayPool
    from fuzzer.engine.corpus_writer import CorpusWriter
    from fuzzer.engine.pipeline import run_job
    from fuzzer.harnesses.parser.campaign import CampaignJob, CampaignSettings
    from fuzzer.harnesses.parser.outcome import TargetSpec
    from strategies._internal.tools import builtin_registry

    cluster = connected
    node = next(iter(cluster.worker_nodes))  # (not the head, which this process is joined through)
    removed: list = []

    class RemovesANode(RayPool):
        """The real pool; when a whole round has been sent (two orders in flight per actor), the
        node that is not the head is killed, with the actor on it and the orders it holds."""

        def run_orders(self, orders, **kwargs):
            on_sent = kwargs.get("on_sent")
            if not removed and len(orders) >= 2 * self.workers:
                def sent():
                    cluster.remove_node(node, allow_graceful=False)
                    removed.append(node)
                    if on_sent is not None:
                        on_sent()
                kwargs["on_sent"] = sent
            return super().run_orders(orders, **kwargs)

    target = "tests.integration.targets.slow:naive"
    settings = CampaignSettings(tools=["get_weather"], target=target, seed=2, budget_s=None, max_examples=2000,
                                shrink=False, explore=False, slow=False)
    pool = RemovesANode(TargetSpec(target=target, cwd=str(ROOT), timeout=10.0), 2)
    store = CorpusStore(tmp_path / "corpus")
    try:
        final = run_job(CampaignJob(builtin_registry(), settings, pool, owns_pool=True),
                        [CorpusWriter(store, target=target)])
    finally:
        pool.close()
        if removed:  # two nodes again, whichever test of the module this worker runs next
            cluster.add_node(num_cpus=1)
            cluster.wait_for_nodes()
    result = final.result
    report = result.to_report()
    assert removed and final.exit_code == 1
    backend = report["backend"]
    assert backend["actors_lost"] == 1 and backend["orders_rerun"] >= 1 and backend["orders_given_up"] == 0, backend
    assert f"their {backend['orders_rerun']} order(s) in flight were run again on other actors" in \
        " ".join(result.notes), result.notes
    by_class = report["by_class"].values()  # (check_report's arithmetic; this report has no CLI fields)
    assert sum(c["executions"] for c in by_class) <= report["executions"] == 2000  # a re-run order counted once
    assert sum(c["failures"] for c in by_class) == sum(
        f["count"] for f in report["failures"] if f["verdict"] not in ("nondeterminism", "slow"))
    assert report["failures"]
    stored = {entry.signature for _path, entry in store.entries()}
    assert stored == {f["signature"] for f in report["failures"]}


# -- must show 5: Ctrl-C, and an address where no cluster answers --------------------------------------

def _wait_gone(pids: set, seconds: float) -> set:
    """The pids still running after waiting up to ``seconds`` for each to exit (pidfd: no polling)."""
    alive = set()
    for pid in pids:
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        try:
            if not select.select([fd], [], [], seconds)[0]:
                alive.add(pid)
        finally:
            os.close(fd)
    return alive


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _interrupted_after_a_finding(tmp_path, *args: str, look: Callable[[int], Any]) -> tuple:
    """Run ``fuzz ARGS`` until it files a finding, ``look(pid)`` at it still running, then Ctrl-C
    it: (its exit code, stdout, stderr, what ``look`` saw)."""
    proc = subprocess.Popen(cli_command(*args), cwd=tmp_path, env=cli_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    try:
        seen = []
        for line in proc.stderr:  # running: the actors at work, a finding filed
            seen.append(line)
            if "] found " in line:
                break
        assert proc.poll() is None, "".join(seen)
        looked = look(proc.pid)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return proc.returncode, stdout, stderr, looked


def test_ctrl_c_stops_the_run_and_the_ray_instance_it_started(tmp_path):
    def ray_instance(pid: int) -> set:
        children = _descendants(pid)
        ray_processes = {pid for pid in children if "raylet" in _cmdline(pid) or "gcs_server" in _cmdline(pid)}
        assert ray_processes, "the run started its own Ray instance"
        return children

    code, stdout, stderr, children = _interrupted_after_a_finding(
        tmp_path, "campaign", "--tool", "get_weather", "--target", NAIVE, "--backend", "ray", "--workers", "2",
        "--budget", "300", "--report", "r.json", look=ray_instance)
    assert code == 1, stderr
    assert "Traceback (most recent call last)" not in stdout + stderr, stderr
    assert "[stopped: interrupted]" in stdout, stdout
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    check_report(report, tool="get_weather", target=NAIVE)
    assert report["stop_reason"] == "interrupted" and report["backend"]["name"] == "ray" and report["failures"]
    assert not _wait_gone(children, 30.0), [_cmdline(pid) for pid in children]  # Ray's processes too


def _actor_processes(cluster) -> set:
    """The processes of the actors on ``cluster``'s nodes (each node's raylet starts them; Ray
    titles them ``ray::_Actor...``) and everything they started (their worker pools)."""
    actors = set()
    for node in [cluster.head_node, *cluster.worker_nodes]:
        for raylet in node.all_processes.get("raylet", []):
            actors |= {pid for pid in _descendants(raylet.process.pid) if "ray::_Actor" in _cmdline(pid)}
    return actors | {child for pid in actors for child in _descendants(pid)}


def test_ctrl_c_stops_a_stream_run_on_a_cluster_it_joined_and_its_actors(cluster, tmp_path):
    """Interrupted mid-run (rounds going on beside the settling of a finding): what was found is in
    the report and the corpus, and the run's actors on the cluster (left running) are gone."""
    def actors_and_children(pid: int) -> tuple:
        actors = _actor_processes(cluster)
        assert actors, "the run's actors run on the cluster"
        return actors, _descendants(pid)

    code, stdout, stderr, (actors, children) = _interrupted_after_a_finding(
        tmp_path, "stream", "--parser", STREAM_NAIVE["parser"], "--backend", "ray", "--ray-address", cluster.address,
        "--workers", "2", "--budget", "300", "--report", "r.json", "--corpus", "corp", look=actors_and_children)
    assert code == 1, stderr
    assert "Traceback (most recent call last)" not in stdout + stderr, stderr
    assert "[stopped: interrupted]" in stdout and "back end: ray" in stdout, stdout
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert report["stop_reason"] == "interrupted" and report["backend"]["name"] == "ray" and report["failures"]
    stored = {json.loads(path.read_text(encoding="utf-8"))["signature"] for path in (tmp_path / "corp").glob("*.json")}
    assert {f["signature"] for f in report["failures"]} <= stored
    assert not _wait_gone(children | actors, 30.0), [_cmdline(pid) for pid in children | actors]


def _port_nobody_listens_on() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("command", [
    ["campaign", "--tool", "get_weather", "--target", NAIVE],
    ["executor", "--executor", "fuzzer.targets.executor_naive:make_executor"],
    ["agent", "--agent", "fuzzer.targets.agent_naive:run"],
    ["stream", "--parser", STREAM_NAIVE["parser"]],
], ids=["campaign", "executor", "agent", "stream"])
def test_an_address_where_nothing_answers_is_one_line_and_exit_2(cli, command):
    port = _port_nobody_listens_on()
    result = cli(*command, "--backend", "ray", "--ray-address", f"127.0.0.1:{port}", timeout=60)
    assert result.code == 2, result
    assert result.stdout == ""
    assert result.stderr.strip() == (f"Error: --ray-address 127.0.0.1:{port}: nothing answers at 127.0.0.1:{port} "
                                     "(Connection refused); start a cluster with `ray start --head` and pass the "
                                     "address it prints"), result


def test_an_address_that_accepts_but_is_no_ray_cluster_is_one_line_not_rays_retries(cli):
    with socket.socket() as listener:  # accepts connections (the kernel's backlog), never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        port = listener.getsockname()[1]
        result = cli("campaign", "--tool", "get_weather", "--target", NAIVE, "--backend", "ray", "--ray-address",
                     f"127.0.0.1:{port}", timeout=60)
    assert result.code == 2, result
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(f"Error: --ray-address 127.0.0.1:{port}: "), result
    assert "did not answer as a Ray cluster" in result.stderr, result
