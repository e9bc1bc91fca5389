"""``--sarif FILE``: SARIF 2.1.0, so GitHub code scanning shows findings on the pull request.

One rule per verdict (``ruleId`` = the verdict: ``crash``, ``corruption``, ...), one result per
finding. A result's message says what failed, the minimized input and the command that reproduces
it; its location is the innermost frame in the user's code (``finding.location()``), or else the
definition of the target callable itself (every finding is a bug of the target). Lines come from
the source file's syntax tree (the ``def`` of the function; traceback frames deliberately carry
no line numbers, so signatures survive edits). ``partialFingerprints`` holds the signature, so an
alert keeps its identity across runs however the code around it moves.

Paths under the current directory are written relative to ``%SRCROOT%`` (the checkout, for
``github/codeql-action/upload-sarif``); others as absolute ``file://`` URIs.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Optional

from fuzzer.reports.writers import FileWriter, writer
from fuzzer.reports.common import (Facts, bounded, defined_names, describe_verdict, facts_of, failed_cases, summary_of, target_source, toolfuzz_version)

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "SRCROOT"
#: Rule of a failed test case that is not a finding (a fixed corpus entry failing again).
TEST_FAILURE_RULE = "regression"
#: Characters of an input shown in a message (the full input is in the result's properties).
MESSAGE_INPUT_LIMIT = 500
INFORMATION_URI = "https://pypi.org/project/toolfuzz/"


@writer("sarif")
class SarifHandler(FileWriter):
    """Writes the SARIF log when the job finishes."""

    def render(self, result: Any) -> str:
        return json.dumps(sarif_log(result), indent=2, ensure_ascii=True) + "\n"


def sarif_log(result: Any, *, root: Optional[str] = None) -> dict[str, Any]:
    """The SARIF log of ``result``. ``root``: the source root paths are made relative to (cwd)."""
    root = os.path.abspath(root or os.getcwd())
    summary = summary_of(result)
    facts = [facts_of(f) for f in result.findings]
    cases = failed_cases(result)
    rule_ids: list[str] = []
    rules: list[dict[str, Any]] = []
    for rule, name, harness in [(f.rule, f.verdict, f.harness) for f in facts] + \
            [(TEST_FAILURE_RULE, TEST_FAILURE_RULE, "")] * bool(cases):
        if rule not in rule_ids:
            rule_ids.append(rule)
            rules.append(_rule(rule, name, harness))
    fallback = target_location(summary.label, root)
    results = [_result(f, rule_ids, root, fallback) for f in facts]
    decision = getattr(result, "decision", None)  # a gate's: which findings the corpus already holds
    if decision is not None:
        blocking = {id(x) for x in tuple(decision.new) + tuple(decision.regressions)}
        for finding, out in zip(result.findings, results):
            if id(finding) in blocking:
                out["baselineState"] = "new"
            else:  # a known open failure: reported, not blocking
                out["baselineState"], out["level"] = "unchanged", "note"
    results += [_case_result(c, rule_ids, fallback, root) for c in cases]
    run: dict[str, Any] = {
        "tool": {"driver": {"name": "toolfuzz", "version": toolfuzz_version(), "informationUri": INFORMATION_URI,
                            "rules": rules}},
        "originalUriBaseIds": {SRCROOT: {"uri": Path(root).as_uri() + "/"}},
        "invocations": [{
            # a run cut short by Ctrl-C is no complete analysis: SARIF readers must not take its few results for all
            "executionSuccessful": summary.problem is None and summary.stop_reason != "interrupted",
            "properties": {"job": summary.job, "target": summary.label, "executions": summary.executions,
                           "elapsed_s": round(summary.elapsed_s, 3), "stop_reason": summary.stop_reason,
                           "counts": summary.counts, **({"problem": summary.problem} if summary.problem else {})},
        }],
        "results": results,
    }
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


def _rule(rule: str, name: str, harness: str) -> dict[str, Any]:
    text = (describe_verdict(name, harness or None) if name != TEST_FAILURE_RULE
            else "A corpus entry marked fixed fails again, or another check of the job failed.")
    words = name.replace("_", " ") if harness in ("", "parser") else f"{harness} {name.replace('_', ' ')}"
    return {"id": rule, "name": "".join(part.capitalize() for part in rule.replace(".", "_").split("_")),
            "shortDescription": {"text": f"toolfuzz: {words}"},
            "fullDescription": {"text": text},
            "help": {"text": f"{text} Each result carries the minimized input and the command that reproduces it."},
            "defaultConfiguration": {"level": "error"},
            "properties": {"tags": ["toolfuzz", "fuzzing", "llm-tool-calls"]}}


def _message(f: Facts) -> str:
    lines = [f"{f.headline} (signature {f.signature}, seen {f.count}x)"]
    if f.reason:
        lines.append(f"Why: {f.reason}")
    if f.exception and f.exception != f.reason:
        lines.append(f"Exception: {f.exception}")
    lines.append(f"{'Minimized input' if f.minimized else 'Input (not minimized)'}: "
                 f"{bounded(json.dumps(f.shown_input, ensure_ascii=False), MESSAGE_INPUT_LIMIT)}")
    if f.reproduce:
        lines.append(f"Reproduce: {f.reproduce}")
    return "\n".join(lines)


def _result(f: Facts, rule_ids: list[str], root: str, fallback: Optional[dict]) -> dict[str, Any]:
    location = _physical(f.location[0], f.location[1], root) if f.location else fallback
    properties = {"signature": f.signature, "title": f.title, "count": f.count, "minimized": f.minimized,
                  "input": f.input, "minimized_input": f.minimized_input, "reproduce": f.reproduce,
                  "anomaly_class": f.anomaly_class, "operator": f.operator, "format": f.format, "tool": f.tool}
    out: dict[str, Any] = {"ruleId": f.rule, "ruleIndex": rule_ids.index(f.rule), "level": "error",
                           "message": {"text": _message(f)},
                           "partialFingerprints": {"toolfuzzSignature/v1": f.signature},
                           "properties": {k: v for k, v in properties.items() if v is not None}}
    if location is not None:
        out["locations"] = [location]
    return out


def _case_result(case: Any, rule_ids: list[str], fallback: Optional[dict], root: str) -> dict[str, Any]:
    out: dict[str, Any] = {"ruleId": TEST_FAILURE_RULE, "ruleIndex": rule_ids.index(TEST_FAILURE_RULE),
                           "level": "error",
                           "message": {"text": "\n".join(x for x in (f"{case.name}: {case.message}", case.detail) if x)},
                           "partialFingerprints": {"toolfuzzSignature/v1": case.name},
                           "properties": {"classname": case.classname, "name": case.name}}
    if fallback is not None:
        out["locations"] = [fallback]
    return out


def _physical(path: str, function: str, root: str) -> dict[str, Any]:
    absolute = os.path.abspath(os.path.join(root, path))
    relative = os.path.relpath(absolute, root)
    if relative.startswith(".."):
        artifact: dict[str, Any] = {"uri": Path(absolute).as_uri()}
    else:
        artifact = {"uri": Path(relative).as_posix(), "uriBaseId": SRCROOT}
    location: dict[str, Any] = {"physicalLocation": {"artifactLocation": artifact,
                                                     "region": {"startLine": definition_line(absolute, function)}}}
    if function and not function.startswith("<"):
        location["logicalLocations"] = [{"name": function, "kind": "function"}]
    return location


def definition_line(path: str, function: str) -> int:
    """The line of ``def function`` in ``path`` (the first one; methods included), else 1."""
    return defined_names(path).get(function, 1)


def target_location(target: str, root: str) -> Optional[dict[str, Any]]:
    """Where the target ``M:A`` is defined (its module file, found without importing it)."""
    if ":" not in target:
        return None
    path = target_source(target, root)
    if path is None:
        return None
    return _physical(path, target.partition(":")[2].split(".")[-1], root)


__all__ = ["SARIF_VERSION", "SarifHandler", "definition_line", "sarif_log", "target_location"]
