"""Minimal means 1-minimal (issue 30): every input a naive-parser finding shows is checked here,
independently of the shrinker, by removing each character and each JSON element in turn.

A finding whose verdict depends on the truth (false_reject, a wrong call) is edited as its calls —
each character of each string value, each item, each member, each call of several removed — and
rebuilt from its recipe (the same format, layout, prose, operator; the truth recomputed), since
an edited text has no known truth. A crash, and a return that is no call at all, is edited as
text: each character, each JSON item and member. Every edit must change the signature (or fail no more). One deliberate exception is said
so by the finding itself: a RecursionError kept 50 levels above the least nesting that fails."""

from __future__ import annotations

import functools

from corpus.text_shrinker import _json_documents
from fuzzer.harnesses.parser.oracle import Oracle
from fuzzer.harnesses.parser.shrink_values import call_edits
from strategies._internal.build import replay_recipe
from strategies._internal.tools import load_registry
from tests.conftest import ROOT
from tests.integration.corpus_targets.harness import NAIVE, load, raw_sample, run_inprocess

REGISTRY = load_registry(None)
ORACLE = Oracle(REGISTRY)


@functools.lru_cache(maxsize=1)
def findings() -> list:
    from fuzzer.harnesses.parser.campaign import CampaignJob, CampaignSettings
    from fuzzer.harnesses.parser.outcome import TargetSpec
    from fuzzer.isolation import WorkerPool
    from fuzzer.engine.pipeline import run_job

    settings = CampaignSettings(tools=["get_weather"], target=NAIVE, seed=1, budget_s=None, max_examples=6000,
                                explore=False, slow=False)
    with WorkerPool(TargetSpec(NAIVE, cwd=str(ROOT), coverage=True), workers=2) as pool:
        return run_job(CampaignJob(REGISTRY, settings, pool)).result.findings


def signature(sample, text=None) -> str | None:
    text = sample.text if text is None else text
    outcome = run_inprocess(load(NAIVE), text)
    judgment = ORACLE.judge(sample, outcome)
    return ORACLE.signature(sample, judgment, outcome).id if judgment.failed else None


def element_removals(text: str) -> list[str]:
    """``text`` without one item of a JSON array or one member of a JSON object, for each."""
    out = []
    stack = list(_json_documents(text))
    while stack:
        node = stack.pop()
        parts = node.parts
        for i, (start, end, _value) in enumerate(parts):
            if len(parts) == 1:
                out.append(text[:node.start + 1] + text[node.end - 1:])
            elif i + 1 < len(parts):
                out.append(text[:start] + text[parts[i + 1][0]:])
            else:
                out.append(text[:parts[i - 1][1]] + text[end:])
        stack.extend(v for _a, _b, v in parts)
    return out


def test_the_naive_campaign_shows_what_this_test_checks():
    verdicts = {f.verdict.value for f in findings()}
    assert {"false_reject", "corruption", "crash"} <= verdicts, verdicts
    assert all(f.is_minimized for f in findings()), [(f.title, f.shrink_note) for f in findings()]


def test_every_shown_input_of_the_naive_parser_is_1_minimal():
    checked = {finding.title: check_1_minimal(finding) for finding in findings()}
    assert len(checked) >= 8 and sum(checked.values()) > 20, checked


def check_1_minimal(finding) -> int:
    """Removes each character and element of what ``finding`` shows; returns how many removals
    were judged (or refused as no longer valid calls)."""
    best = finding.best
    if finding.best_outcome is not None and finding.best_outcome.exception == "RecursionError":
        assert finding.one_minimal is False and "repetitions above the least that fails" in finding.shrink_note
        return 1
    assert finding.one_minimal is True, (finding.title, finding.shrink_note)
    wanted = finding.oracle_id
    assert signature(best) == wanted, finding.title  # the shown input fails as the finding says
    checked = invalid = 0
    robustness = finding.verdict.value == "crash" or finding.signature.key.startswith("corruption|not-a-call")
    if not robustness and best.truth_known and best.recipe is not None:
        drawn: list = []
        replay_recipe(best.recipe, REGISTRY, drawn=drawn)
        for removal, calls in call_edits(drawn[-1]):
            if not removal:
                continue
            if not all(ORACLE.promise.call_ok(c) for c in calls):
                invalid += 1  # no longer valid calls of their tools: not a sample of this meaning
                continue
            edited = replay_recipe(best.recipe, REGISTRY, calls=calls)
            if edited.text == best.text:
                continue  # the operator wrote none of it (arguments replaced by null): no edit of what is shown
            assert signature(edited) != wanted, (finding.title, best.text, edited.text)
            checked += 1
    else:
        edits = [best.text[:i] + best.text[i + 1:] for i in range(len(best.text))] + element_removals(best.text)
        for text in edits:
            assert signature(raw_sample(text)) != wanted, (finding.title, best.text, text)
            checked += 1
    assert checked + invalid > 0, (finding.title, best.text)  # something was removed and judged, or refused
    return checked + invalid
