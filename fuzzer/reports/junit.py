"""``--junit FILE.xml``: one JUnit test case per line of :meth:`JobResult.test_cases`.

Known open failures are ``skipped`` (with their signature), so a CI dashboard shows them without
failing the build; regressions and new failures are ``failure`` elements.
"""

from __future__ import annotations

from typing import Any
from xml.sax.saxutils import escape, quoteattr

from fuzzer.reports.writers import FileWriter, writer
from fuzzer.engine.results import FAILED, SKIPPED


def xml_safe(text: str) -> str:
    """XML 1.0 forbids most control characters and lone surrogates: show them escaped."""
    return "".join(ch if (ch in "\t\n\r" or " " <= ch) and not "\ud800" <= ch <= "\udfff"
                   else f"\\x{ord(ch):02x}" if ord(ch) < 256 else f"\\u{ord(ch):04x}" for ch in text)


def junit_xml(result: Any, suite: str) -> str:
    cases = result.test_cases()
    counts = result.counts()
    lines = ['<?xml version="1.0" encoding="utf-8"?>',
             f'<testsuite name={quoteattr(xml_safe(suite))} tests="{len(cases)}" failures="{counts[FAILED]}" '
             f'skipped="{counts[SKIPPED]}" time="{result.elapsed_s:.3f}">']
    for case in cases:
        lines.append(f"  <testcase classname={quoteattr(xml_safe(case.classname))} name={quoteattr(xml_safe(case.name))}>")
        message = xml_safe(case.message.splitlines()[0][:200] if case.message else "")
        if case.status == FAILED:
            lines.append(f"    <failure message={quoteattr(message)}>{escape(xml_safe(case.detail))}</failure>")
        elif case.status == SKIPPED:
            lines.append(f"    <skipped message={quoteattr(message)}/>")
        lines.append("  </testcase>")
    lines.append("</testsuite>")
    return "\n".join(lines) + "\n"


@writer("junit")
class JUnitHandler(FileWriter):
    """``--junit FILE.xml``: one test case per finding or corpus entry (:meth:`JobResult.test_cases`)."""

    def render(self, result: Any) -> str:
        return junit_xml(result, f"toolfuzz {result.job}")
