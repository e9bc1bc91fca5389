"""Fuzz from what models really sent: recorded outputs as seeds, production frequencies as weights.

Engine-level functions (no printing, no exiting), for ``fuzz campaign --seeds-from DB`` and
``--weights-from DB`` and for ``fuzz corpus import --records``:

* :func:`seed_samples` — one :class:`~strategies._internal.sample.Sample` per distinct recorded
  output. Where the record says the parse was right (:func:`parse_was_right`) the recorded parsed
  calls are the truth (format ``recorded``), so a parser that now rejects a clean output is a
  false_reject and one that returns other calls a corruption; otherwise the sample is
  robustness-only (format ``raw``, ``truth_known=False``): crash, hang and non-call returns.
* :func:`mutated_seeds` — the truth-known seeds re-rendered and mutated by the operators (the
  recorded calls, not generated ones, so the fuzzing stays close to production), and
  :func:`text_mutations` — cheap robustness-only edits of the raw texts.
* :func:`fuzz_seeds` — a small loop: run samples through ``run`` (a ``WorkerPool.run``), judge
  with the :class:`fuzzer.harnesses.parser.oracle.Oracle`, one :class:`fuzzer.harnesses.parser.findings.Finding` per signature.
* :func:`class_weights` — ``{anomaly class: weight}`` in proportion to how often production
  showed each class (mean 1 over the classes, never below ``floor`` so a class production has not
  shown yet is still tried) (``fuzz campaign --weights-from DB`` passes them to the campaign
  scheduler (:data:`fuzzer.harnesses.parser.schedule.CLASS_WEIGHTS`) for the duration of a ``with`` block.
"""

from __future__ import annotations

import contextlib
import random
from typing import Any, Callable, Iterable, Iterator, Optional, Union

from fuzzer.harnesses.parser.oracle import RAW_FORMAT, Oracle
from fuzzer.records.detect import Classifier, record_classes
from fuzzer.records.record import Record, RecordFilter
from fuzzer.records.store import RecordStore
from strategies._internal.sample import ANOMALY_CLASSES, Sample

#: Format of a seed whose truth is known but whose envelope is whatever the model wrote.
RECORDED_FORMAT = "recorded"
#: Operator name of a seed taken from a record as it is.
RECORDED_OPERATOR = "recorded"
#: Classes whose presence means the model wrote a bad call that the parser read faithfully.
SEMANTIC = {name for name, cls in ANOMALY_CLASSES.items() if cls.semantic}

Source = Union[str, RecordStore]


@contextlib.contextmanager
def _opened(db: Source) -> Iterator[RecordStore]:
    if isinstance(db, RecordStore):
        yield db
        return
    store = RecordStore(db, must_exist=True)
    try:
        yield store
    finally:
        store.close()


def parse_was_right(record: Record) -> bool:
    """The record vouches for its parsed calls: the parser returned calls, and their execution
    did not fail — or failed only because the model wrote a bad call (a semantic class was
    detected or labeled), which the parser was right to pass on as written."""
    if record.parse_status not in ("ok", "repaired") or not record.parsed_calls:
        return False
    if not _plain(record.parsed_calls):
        return False  # a value stored as a marker ({"$float": "nan"}, {"$repr": ...}): no exact truth
    if record.labels and record.labels[-1]["label"] == "valid":
        return True
    if record.execution_status == "error":
        return bool(set(record_classes(record)) & SEMANTIC)
    return True


_MARKERS = ("$float", "$repr", "$bytes")


def _plain(value: Any) -> bool:
    if isinstance(value, dict):
        if len(value) == 1 and next(iter(value)) in _MARKERS:
            return False
        return all(not (isinstance(k, str) and k.startswith("$repr:")) and _plain(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    return True


def seed_class(record: Record) -> Optional[str]:
    """The anomaly class a seed carries (None: a valid output)."""
    for cls in record_classes(record):
        if cls in ANOMALY_CLASSES:
            return cls
    return None


def seed_from_record(record: Record) -> Optional[Sample]:
    text = record.raw_model_output
    if text is None:
        return None
    if parse_was_right(record):
        cls = seed_class(record)
        calls = [dict(c) for c in record.parsed_calls]
        return Sample(text=text, format=RECORDED_FORMAT, anomaly_class=cls, operator=RECORDED_OPERATOR if cls else None,
                      calls=calls, tool=str(calls[0].get("name", "")), truth_known=True,
                      description=f"record {record.record_id}")
    return Sample(text=text, format=RAW_FORMAT, anomaly_class=seed_class(record), operator=RECORDED_OPERATOR,
                  calls=None, truth_known=False, description=f"record {record.record_id}")


def seed_samples(db: Source, registry: Any = None, *, filters: Optional[RecordFilter] = None,
                 tool: Optional[str] = None, include_raw: bool = True, limit: Optional[int] = None,
                 with_ids: bool = False) -> list:
    """Seeds from the records of ``db`` (a path or an open store), one per distinct raw output
    (the first truth-known record wins). ``tool``: keep only truth-known seeds calling it (and
    the robustness-only ones when ``include_raw``); ``registry`` is checked to hold ``tool``.
    ``with_ids``: return ``(sample, [record ids])`` pairs instead. Detectors are run first."""
    if tool is not None and registry is not None:
        registry[tool]  # unknown tool: UnknownName, a one-line usage error
    by_text: dict[str, list] = {}
    with _opened(db) as store:
        Classifier(store).run()
        for record in store.iter_records(filters):
            sample = seed_from_record(record)
            if sample is None:
                continue
            if tool is not None and sample.truth_known and not any(c.get("name") == tool for c in sample.calls):
                continue
            if not sample.truth_known and not include_raw:
                continue
            known = by_text.get(sample.text)
            if known is None:
                by_text[sample.text] = [sample, [record.record_id]]
            else:
                known[1].append(record.record_id)
                if sample.truth_known and not known[0].truth_known:
                    known[0] = sample
            if limit is not None and len(by_text) >= limit:
                break
    pairs = [(s, ids) for s, ids in by_text.values()]
    return pairs if with_ids else [s for s, _ in pairs]


# --------------------------------------------------------------------------------------------
# Mutations of seeds


def guess_format(text: str) -> str:
    """The envelope a recorded output most likely uses (for re-rendering its calls)."""
    if "<tool_call>" in text:
        return "hermes"
    if "[TOOL_CALLS]" in text:
        return "mistral"
    if "<|python_tag|>" in text:
        return "llama3"
    if "```" in text:
        return "fenced"
    if "Action:" in text and "Action Input:" in text:
        return "react"
    if '"tool_calls"' in text:
        return "openai"
    stripped = text.lstrip()
    if stripped.startswith("[") and "(" in stripped[:80] and '"name"' not in stripped[:80]:
        return "pythonic"
    return "json"


def mutated_seeds(seeds: Iterable[Sample], registry: Any, *, seed: int = 0, per_seed: int = 4,
                  operators: Optional[list] = None) -> list[Sample]:
    """Up to ``per_seed`` operator mutations of each valid truth-known seed whose calls name tools
    of ``registry``: the recorded calls rendered in the seed's (guessed) format, then mutated, with
    the truth the operator states."""
    from strategies._internal.formats import Unrepresentable, render
    from strategies._internal.mutations import OPERATORS, MutationContext, NotApplicable
    from strategies._internal.source import RandomSource

    rng = random.Random(seed)
    names = sorted(operators) if operators else sorted(OPERATORS)
    out: list[Sample] = []
    for base in seeds:
        if not base.truth_known or base.anomaly_class is not None or not base.calls:
            continue
        if not all(isinstance(c, dict) and c.get("name") in registry for c in base.calls):
            continue
        tool = registry[base.calls[0]["name"]]
        fmt = guess_format(base.text)
        applicable = [n for n in names if OPERATORS[n].applies(tool, fmt)]
        rng.shuffle(applicable)
        made = 0
        for name in applicable:
            if made >= per_seed:
                break
            source = RandomSource(rng.randrange(1 << 30))
            ctx = MutationContext(registry=registry, tool=tool, format=fmt, calls=[dict(c) for c in base.calls],
                                  chatter=False,
                                  render=lambda calls, style=None, _s=source: render(fmt, calls, _s, chatter=False,
                                                                                      style=style))
            try:
                mutation = OPERATORS[name](source, ctx)
            except (NotApplicable, Unrepresentable):
                continue
            except Exception:  # noqa: BLE001 - an operator that cannot handle recorded calls: skip it
                continue
            out.append(Sample(text=mutation.text, format=fmt, anomaly_class=OPERATORS[name].anomaly_class,
                              operator=name, calls=mutation.calls, tool=tool.name, truth_known=True,
                              description=f"{mutation.description} ({base.description})"))
            made += 1
    return out


_NOISE = '{}[]",:\'\\<>`\n'


def text_mutations(seeds: Iterable[Sample], *, seed: int = 0, per_seed: int = 4) -> list[Sample]:
    """Robustness-only edits of each seed's raw text: a cut at a random point, a slice repeated, a
    character dropped or a structural character inserted."""
    rng = random.Random(seed)
    out: list[Sample] = []
    for base in seeds:
        text = base.text
        if len(text) < 2:
            continue
        for _ in range(per_seed):
            i = rng.randrange(1, len(text))
            how = rng.randrange(4)
            if how == 0:
                new = text[:i]
            elif how == 1:
                j = min(len(text), i + rng.randrange(1, 16))
                new = text[:j] + text[i:j] * rng.randrange(2, 50) + text[j:]
            elif how == 2:
                new = text[:i - 1] + text[i:]
            else:
                new = text[:i] + rng.choice(_NOISE) + text[i:]
            out.append(Sample(text=new, format=RAW_FORMAT, anomaly_class=None, operator="text_mutation", calls=None,
                              truth_known=False, description=f"edited ({base.description})"))
    return out


def fuzz_seeds(samples: list[Sample], run: Callable[[list], list], oracle: Oracle, *,
               registry: Any = None, shrink_budget_s: float = 0.0, members: Optional[dict] = None) -> list:
    """Judge ``samples`` on the target behind ``run``; one Finding per signature, in order of
    discovery (``count`` = how many samples showed it; its ``sample`` the smallest). Crashes and
    hangs are shrunk as text when ``shrink_budget_s`` > 0 (seeds have no recipe to shrink
    structurally). ``members``: a dict that receives {signature id: [every failing sample]}."""
    from fuzzer.harnesses.parser.findings import Finding

    findings: dict[str, Finding] = {}
    outcomes = run([s.text for s in samples]) if samples else []
    for sample, outcome in zip(samples, outcomes):
        judgment = oracle.judge(sample, outcome)
        if not judgment.failed:
            continue
        signature = oracle.signature(sample, judgment, outcome)
        if members is not None:
            members.setdefault(signature.id, []).append(sample)
        found = findings.get(signature.id)
        if found is not None:
            found.count += 1
            if len(sample.text) < len(found.sample.text):
                found.sample, found.outcome = sample, outcome
            continue
        findings[signature.id] = Finding(signature=signature, verdict=judgment.verdict, reason=judgment.reason,
                                         sample=sample, outcome=outcome)
    if shrink_budget_s > 0 and registry is not None:
        from fuzzer.harnesses.parser.shrink import FindingShrinker

        shrinker = FindingShrinker(lambda texts, **kw: run(texts), oracle, registry)
        for finding in findings.values():
            shrunk = shrinker.shrink(finding.sample, finding.outcome, finding.verdict, finding.signature.id,
                                     budget_s=shrink_budget_s)
            finding.adopt_minimized(shrunk.sample, shrunk.observation, oracle, complete=shrunk.complete,
                                    note=shrunk.note, one_minimal=shrunk.one_minimal)
    return list(findings.values())


# --------------------------------------------------------------------------------------------
# Class weights


def class_weights(db: Source, *, floor: float = 0.1, filters: Optional[RecordFilter] = None) -> dict[str, float]:
    """{anomaly class: weight} for every class of ANOMALY_CLASSES: the class's share of the
    anomalous records times the number of classes (so the mean weight is about 1), never below
    ``floor``. A database with no anomalous record gives every class weight 1."""
    counts = {name: 0 for name in ANOMALY_CLASSES}
    with _opened(db) as store:
        Classifier(store).run()
        for record in store.iter_records(filters):
            for cls in set(record_classes(record)):
                if cls in counts:
                    counts[cls] += 1
    total = sum(counts.values())
    if not total:
        return {name: 1.0 for name in ANOMALY_CLASSES}
    n = len(counts)
    return {name: max(floor, count / total * n) for name, count in counts.items()}


__all__ = ["RECORDED_FORMAT", "class_weights", "fuzz_seeds", "guess_format", "mutated_seeds", "parse_was_right",
           "seed_from_record", "seed_samples", "text_mutations"]
