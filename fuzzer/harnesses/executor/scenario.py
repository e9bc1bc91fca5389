"""Scenarios: a sequence of calls, each with the fault schedule its tool meets.

A :class:`Scenario` is what one fresh executor is put through: steps run in order against the
same executor object, so its breaker and any other state carry over from call to call, and a
``gap`` of virtual seconds before a step lets a breaker's reset window pass. Each step is a call
(``{name, arguments}``) drawn from the strategies — a valid call of a registry tool, or a semantic
anomaly made by the mutation operators (unknown tool, wrong type, missing or unexpected argument,
constraint violation) — plus its :class:`~fuzzer.harnesses.executor.schedule.Schedule`.

Every scenario is a pure function of a :class:`Genome`: a header choice sequence (the executor's
random seed, the tool most calls go to) and, per step, two choice sequences (the gap and schedule,
then the call). The generator records them with a
:class:`~strategies._internal.source.RandomSource` and :meth:`ScenarioGenerator.realize` replays
them with a :class:`~strategies._internal.source.ReplaySource`, so a shrinker edits choices (zero,
delete, lower) and gets back a well-formed scenario whose anomalies and schedules are recomputed by
construction (DESIGN.md, "Shrinking keeps the meaning"). Choices shrink toward the simplest
option: the focus tool, a valid call, no gap, a healthy schedule.

Whether a step's call is valid is known by construction for generated valid calls; anomalous and
stored calls are checked with the real jsonschema validator of the tool.
"""

from __future__ import annotations

import functools
import json
import zlib
from dataclasses import dataclass, field
from collections.abc import Mapping
from typing import Any, Optional

from fuzzer.harnesses.executor.faults import FaultError
from fuzzer.harnesses.executor.schedule import FaultMenu, Schedule, draw_schedule
from strategies._internal.mutations import OPERATORS, MutationContext, NotApplicable
from strategies._internal.formats import Unrepresentable
from strategies._internal.schema import compile_tool, tool_validator
from strategies._internal.source import RandomSource, ReplaySource

SCENARIO_FORMAT = 1
#: Semantic anomaly classes a call may carry (the executor must not run such a call).
ANOMALY_CLASSES = ("unknown_function", "invalid_argument_type", "missing_argument", "unexpected_argument",
                   "constraint_violation")
ANOMALY_PROBABILITY = 0.25
OTHER_TOOL_PROBABILITY = 0.3
MAX_STEPS = 12


@dataclass(frozen=True, init=False)
class Step:
    name: str
    arguments: Any
    schedule: Schedule = field(default_factory=Schedule)
    gap: float = 0.0  # virtual seconds before the call
    anomaly: Optional[str] = None
    operator: Optional[str] = None
    #: the call names a registry tool and its arguments satisfy that tool's schema
    valid: bool = True

    def __init__(self, name: str, arguments: Any, schedule: Optional[Schedule] = None, gap: float = 0.0,
                 anomaly: Optional[str] = None, operator: Optional[str] = None, valid: bool = True):
        # one update instead of a frozen dataclass's object.__setattr__ per field: a campaign
        # draws every step of every scenario twice (the worker runs it, the engine files it)
        self.__dict__.update(name=name, arguments=arguments, schedule=Schedule() if schedule is None else schedule,
                             gap=gap, anomaly=anomaly, operator=operator, valid=valid)

    def call_text(self) -> str:
        return f"{self.name}({json.dumps(self.arguments, sort_keys=True, ensure_ascii=False)})"

    def to_json(self) -> dict:
        data = {"name": self.name, "arguments": self.arguments, "gap": self.gap,
                "schedule": self.schedule.to_json()}
        if self.anomaly:
            data["anomaly"], data["operator"] = self.anomaly, self.operator
        return data


@dataclass(frozen=True)
class Genome:
    header: tuple
    steps: tuple  # ((schedule choices), (call choices)) per step

    @property
    def size(self) -> int:
        return len(self.header) + sum(len(a) + len(b) for a, b in self.steps)


@dataclass(frozen=True)
class Scenario:
    steps: tuple
    seed: int = 0
    genome: Optional[Genome] = field(default=None, compare=False, repr=False)

    def size_key(self) -> tuple:
        """Smaller is simpler: fewer steps, fewer failing faults, fewer anomalies, shorter gaps."""
        return (len(self.steps), sum(s.schedule.size for s in self.steps), sum(1 for s in self.steps if s.anomaly),
                sum(s.gap for s in self.steps), len(self.describe()))

    def to_json(self) -> dict:
        return {"format": SCENARIO_FORMAT, "seed": self.seed, "steps": [s.to_json() for s in self.steps]}

    def wire(self) -> str:
        """The text a worker receives (each schedule as its own JSON text, which the worker caches;
        a call that is not valid says so)."""
        text = self.__dict__.get("_wire")
        if text is None:
            steps = ",".join(f'{{"name":{_scalar_json(s.name)},"arguments":{_arguments_json(s.arguments)},'
                             f'"gap":{_scalar_json(s.gap)},"schedule":{_scalar_json(s.schedule.wire)}'
                             f'{"" if s.valid else _INVALID}}}'
                             for s in self.steps)
            text = f'{{"seed":{self.seed},"steps":[{steps}]}}'
            object.__setattr__(self, "_wire", text)
        return text

    def describe(self) -> str:
        """A readable rendering (the corpus entry's ``text``): one line per step."""
        lines = []
        for i, s in enumerate(self.steps, 1):
            gap = f"after {s.gap:g} s: " if s.gap else ""
            label = f" [{s.anomaly}/{s.operator}]" if s.anomaly else ""
            lines.append(f"{i}. {gap}{s.call_text()}{label} -- {s.schedule.describe()}")
        return "\n".join(lines)


_INVALID = ',"valid":false'


@functools.lru_cache(maxsize=8192, typed=True)
def _scalar_json(value: Any) -> str:
    """``json.dumps`` of a tool name, a gap or a schedule's wire text: the same few hundred values
    in every scenario (typed: ``0`` and ``0.0`` are different texts)."""
    return json.dumps(value)


_ARGUMENTS_JSON: dict = {}


def _arguments_json(arguments: Any) -> str:
    """JSON text of a call's arguments, cached by object: generated steps share their arguments
    with the generator's pool, so each is encoded once per campaign, not once per scenario."""
    hit = _ARGUMENTS_JSON.get(id(arguments))
    if hit is not None and hit[0] is arguments:
        return hit[1]
    text = json.dumps(arguments, ensure_ascii=False)
    if len(_ARGUMENTS_JSON) > 65536:
        _ARGUMENTS_JSON.clear()
    _ARGUMENTS_JSON[id(arguments)] = (arguments, text)
    return text


def scenario_from_json(data: Any, registry: Any, where: str = "scenario") -> Scenario:
    """A stored scenario; the validity of each call is recomputed with jsonschema."""
    if not isinstance(data, Mapping):
        raise FaultError(f"{where}: expected an object, got {type(data).__name__}")
    if data.get("format", SCENARIO_FORMAT) != SCENARIO_FORMAT:
        raise FaultError(f"{where}.format: unsupported version {data.get('format')!r}")
    raw_steps = data.get("steps")
    if not isinstance(raw_steps, list) or not raw_steps:
        raise FaultError(f"{where}.steps: expected a non-empty list")
    steps = []
    for i, raw in enumerate(raw_steps):
        at = f"{where}.steps[{i}]"
        if not isinstance(raw, Mapping) or not isinstance(raw.get("name"), str):
            raise FaultError(f"{at}: expected an object with a string 'name'")
        gap = raw.get("gap", 0)
        if isinstance(gap, bool) or not isinstance(gap, (int, float)) or gap < 0:
            raise FaultError(f"{at}.gap: expected a number of seconds >= 0, got {gap!r}")
        arguments = raw.get("arguments", {})
        steps.append(Step(name=raw["name"], arguments=arguments, gap=float(gap),
                          schedule=Schedule.from_json(raw.get("schedule", {}), f"{at}.schedule"),
                          anomaly=raw.get("anomaly"), operator=raw.get("operator"),
                          valid=call_is_valid(registry, raw["name"], arguments)))
    seed = data.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise FaultError(f"{where}.seed: expected an integer, got {seed!r}")
    return Scenario(steps=tuple(steps), seed=seed)


def call_is_valid(registry: Any, name: str, arguments: Any) -> bool:
    """The call names a registry tool and the real jsonschema validator accepts its arguments."""
    if name not in registry:
        return False
    return bool(tool_validator(registry[name]).is_valid(arguments))


class _Blank:
    """What semantic operators get from ``ctx.render``: they only read ``.text``, which the
    executor harness never uses (it executes the calls, not a model output)."""

    text = ""


def _blank(calls: Any, style: Any = None) -> _Blank:
    return _Blank()


class ScenarioGenerator:
    """Draws scenarios for ``tools`` (names in ``registry``) under ``policy``."""

    def __init__(self, registry: Any, policy: Any, *, tools: Optional[list] = None, flavors: tuple = ("builtin",),
                 max_steps: int = MAX_STEPS, seed: int = 0):
        self.registry = registry
        self.policy = policy
        self.tools = list(tools) if tools is not None else registry.names()
        if not self.tools:
            raise ValueError("no tool to call")
        failing = tuple(k for k in policy.faults if k != "ok")
        self.menu = FaultMenu(kinds=failing, transient=tuple(k for k in failing if policy.transient(k)),
                              flavors=tuple(flavors) or ("builtin",))
        reset = policy.breaker.reset_timeout
        #: gaps before a call, simplest first; they straddle the breaker's reset window
        self.gaps = tuple(sorted({0.0, 1.0, 10.0, round(reset / 2, 3), round(reset + 1.0, 3), round(reset * 3 + 1, 3)}))
        self.max_steps = max(1, max_steps)
        self._source = RandomSource(seed)
        self._seed = seed
        self._pools: dict = {}

    # -- drawing ---------------------------------------------------------------------------------
    def restart(self, seed: int) -> None:
        """Draw the next scenarios from ``seed`` (the same pools): an order of scenarios is a pure
        function of its seed, whichever process draws it (:mod:`fuzzer.harnesses.executor.orders`)."""
        self._source = RandomSource(seed)

    def with_every_pool(self) -> "ScenarioGenerator":
        """This generator with the call pools of all its tools drawn (before it is sent to workers,
        which then draw from exactly the pools this process replays genomes against)."""
        for name in self.tools:
            self._pool(name)
        return self

    def __getstate__(self) -> dict:
        """Picklable: the pools' operators travel by name, the source is not sent (see restart)."""
        state = dict(self.__dict__)
        state["_pools"] = {name: (valid, [(n, a, op.name, ok) for n, a, op, ok in anomalous])
                           for name, (valid, anomalous) in self._pools.items()}
        state["_source"] = None
        return state

    def __setstate__(self, state: dict) -> None:
        pools = state.pop("_pools")
        self.__dict__.update(state)
        self._pools = {name: (valid, [(n, a, OPERATORS[op], ok) for n, a, op, ok in anomalous])
                       for name, (valid, anomalous) in pools.items()}
        self._source = RandomSource(self._seed)

    def generate(self) -> Scenario:
        """A new random scenario, built while its genome is recorded."""
        source = self._source
        source.reset()
        count = (source.integer(1, 3) if source.boolean(0.5) else source.integer(4, self.max_steps))
        source.reset()  # the step count is structure (the genome's length), not a replayed choice
        seed, focus = self._draw_header(source)
        header = tuple(source.reset())
        genes, steps = [], []
        for _ in range(count):
            gap, schedule = self._draw_schedule(source)
            schedule_choices = tuple(source.reset())
            steps.append(self._step(gap, schedule, *self._draw_call(source, focus)))
            genes.append((schedule_choices, tuple(source.reset())))
        return Scenario(steps=tuple(steps), seed=seed, genome=Genome(header=header, steps=tuple(genes)))

    def realize(self, genome: Genome) -> Scenario:
        """The scenario a genome stands for (a pure function of it)."""
        seed, focus = self._draw_header(ReplaySource(genome.header))
        steps = []
        for schedule_choices, call_choices in genome.steps:
            gap, schedule = self._draw_schedule(ReplaySource(schedule_choices))
            steps.append(self._step(gap, schedule, *self._draw_call(ReplaySource(call_choices), focus)))
        return Scenario(steps=tuple(steps), seed=seed, genome=genome)

    def _draw_header(self, source: Any) -> tuple:
        return source.integer(0, 2 ** 31 - 1), source.integer(0, len(self.tools) - 1)

    def _step(self, gap: float, schedule: Schedule, name: str, arguments: Any, op: Any, valid: bool) -> Step:
        # ``arguments`` is shared with the pool: scenarios are values, nothing edits them in place
        return Step(name=name, arguments=arguments, schedule=schedule, gap=gap,
                    anomaly=op.anomaly_class if op else None, operator=op.name if op else None, valid=valid)

    def _draw_schedule(self, source: Any) -> tuple:
        gap = self.gaps[source.weighted([6.0] + [1.0] * (len(self.gaps) - 1))]
        return gap, draw_schedule(source, self.menu)

    def _draw_call(self, source: Any, focus: int) -> tuple:
        name = self.tools[focus]
        if source.boolean(OTHER_TOOL_PROBABILITY):
            name = source.choice(self.tools)
        valid, anomalous = self._pool(name)
        if anomalous and source.boolean(ANOMALY_PROBABILITY):
            return anomalous[source.integer(0, len(anomalous) - 1)]
        return valid[source.integer(0, len(valid) - 1)]

    def _pool(self, name: str) -> tuple:
        """The calls of one tool a step picks from: valid ones and semantic anomalies, each list
        ordered simplest first (choices shrink toward index 0), each anomaly's validity checked once.

        Drawing arguments from a JSON Schema costs tens of microseconds per call, which would
        dominate a scenario that runs in microseconds; a pool drawn once per campaign (from the same
        strategies and operators, seeded by the campaign's seed) keeps the generator cheap while a
        step is still a pure function of its choices."""
        hit = self._pools.get(name)
        if hit is not None:
            return hit
        tool = self.registry[name]
        source = RandomSource(zlib.crc32(f"{self._seed}:{name}".encode()))
        node = compile_tool(tool)
        # a generated valid call is valid by construction; an anomaly is checked, not assumed
        valid = [(n, a, op, True) for n, a, op in
                 _simplest_first((name, node.generate(source), None) for _ in range(POOL_SIZE))]
        operators = [op for op in OPERATORS.values()
                     if op.anomaly_class in ANOMALY_CLASSES and op.applies(tool, "json")]
        anomalous = []
        for op in operators:
            for _ in range(ANOMALIES_PER_OPERATOR):
                ctx = MutationContext(registry=self.registry, tool=tool, format="json",
                                      calls=[{"name": name, "arguments": node.generate(source)}], chatter=False,
                                      render=_blank)
                try:
                    mutation = op(source, ctx)
                except (NotApplicable, Unrepresentable):
                    continue
                calls = mutation.calls or []
                if len(calls) == 1 and isinstance(calls[0], dict) and isinstance(calls[0].get("name"), str):
                    anomalous.append((calls[0]["name"], calls[0].get("arguments", {}), op))
        anomalous = [(n, a, op, call_is_valid(self.registry, n, a)) for n, a, op in _simplest_first(anomalous)]
        hit = self._pools[name] = (valid, anomalous)
        return hit


#: Valid calls drawn per tool, and anomalies per applicable operator (see ScenarioGenerator._pool).
POOL_SIZE = 96
ANOMALIES_PER_OPERATOR = 4


def _simplest_first(calls: Any) -> list:
    unique: dict = {}
    for name, arguments, op in calls:
        key = (name, json.dumps(arguments, sort_keys=True), op.name if op else None)
        unique.setdefault(key, (name, arguments, op))
    return [unique[k] for k in sorted(unique, key=lambda k: (len(k[1]) + len(k[0]), k))]


__all__ = ["ANOMALY_CLASSES", "Genome", "Scenario", "ScenarioGenerator", "Step", "call_is_valid",
           "scenario_from_json"]
