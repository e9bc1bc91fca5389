"""`fuzz records replay` tells a fix from a regression, says what changed, and says it once.

Four hand-made records of a parser ``myparser_v1`` in production, replayed on ``myparser_v2``
(which repairs trailing commas and single quotes, and drops the ``unit`` argument: a bug) and on
``myparser_v3`` (the same without the bug):

* FIX — production raised ParseError on a trailing comma; the record states the call the output
  holds; v2 returns exactly it: fixed (it was reported "now parses ... [regressed]", exit 1);
* BUG — production returned get_weather(city, unit) and v2 returns it without unit: regressed,
  and the line says ``arguments.unit`` (it said "1 call(s): get_weather -> 1 call(s): get_weather");
* SAME — YAML both versions refuse with their own ``ParseError``: the same class in two modules,
  not a "different error";
* UNSURE — production raised on single quotes and the record vouches for no call; v2 parses it:
  changed — nobody can say it is right, nor that it is a regression.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

PARSER = '''
import json
import re


class ParseError(ValueError):
    pass


def parse(text):
    if REPAIR:
        text = re.sub(r",\\s*([}\\]])", r"\\1", text).replace("'", '"')
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ParseError(f"not JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        raise ParseError("not a tool call")
    arguments = dict(data.get("arguments") or {})
    if DROP_UNIT:
        arguments.pop("unit", None)
    return [{"name": data["name"], "arguments": arguments}]
'''

PARIS = {"name": "get_weather", "arguments": {"city": "Paris"}}
LYON = {"name": "get_weather", "arguments": {"city": "Lyon", "unit": "celsius"}}


@pytest.fixture
def db(tmp_path: Path, cli) -> dict[str, str]:
    """The parsers beside a records database of the four records; returns their record ids."""
    for name, repair, drop in (("myparser_v1", False, False), ("myparser_v2", True, True),
                               ("myparser_v3", True, False)):
        (tmp_path / f"{name}.py").write_text(f"REPAIR = {repair}\nDROP_UNIT = {drop}\n" + PARSER)
    records = {
        "FIX": ['{"name": "get_weather", "arguments": {"city": "Paris",}}', "--calls", json.dumps([PARIS]),
                "--parse-status", "error", "--parse-error", "myparser_v1.ParseError: not JSON", "--session", "fix"],
        "BUG": [json.dumps(LYON), "--calls", json.dumps([LYON])],
        "SAME": ["name: get_weather", "--parse-status", "error", "--parse-error", "myparser_v1.ParseError: not JSON"],
        "UNSURE": ["{'name': 'get_weather', 'arguments': {'city': 'Oslo'}}", "--parse-status", "error",
                   "--parse-error", "myparser_v1.ParseError: not JSON"],
    }
    ids = {}
    for key, (text, *options) in records.items():
        added = cli("records", "add", "calls.db", "--text", text, "--parser-version", "v1", *options)
        assert added.code == 0, added
        ids[key] = re.search(r"added record (\w+)", added.stdout).group(1)
    return ids


def _lines(stdout: str, record_id: str) -> list[str]:
    return [line for line in stdout.splitlines() if record_id in line]


def test_against_a_baseline_a_fix_is_fixed_a_bug_regressed_and_each_said_once(cli, db):
    saved = cli("records", "replay", "calls.db", "--target", "myparser_v1:parse", "--baseline", "base.json", "-q")
    assert saved.code == 0 and "recorded with v1, replayed with" in saved.stdout, saved
    assert "0 changed" in saved.stdout  # v1 is production: even its ParseError is the recorded one

    run = cli("records", "replay", "calls.db", "--target", "myparser_v2:parse", "--baseline", "base.json",
              "--report", "r.json", "-q")
    assert run.code == 1, run  # the dropped argument
    [fix] = _lines(run.stdout, db["FIX"])
    assert "now parses" in fix and fix.endswith("[fixed]"), fix
    [bug] = _lines(run.stdout, db["BUG"])
    assert bug.endswith("[regressed]") and 'arguments.unit dropped (was "celsius")' in bug, bug
    [unsure] = _lines(run.stdout, db["UNSURE"])
    assert "now parses" in unsure and unsure.endswith("[changed]"), unsure
    assert _lines(run.stdout, db["SAME"]) == []
    baseline = run.report("r.json")["baseline"]
    assert baseline["counts"] == {"fixed": 1, "regressed": 1, "changed": 1, "same": 1}
    assert baseline["regressed"] == [db["BUG"]]

    fixed_only = cli("records", "replay", "calls.db", "--target", "myparser_v3:parse", "--baseline", "base.json",
                     "-q")
    assert fixed_only.code == 0, fixed_only  # a fix and an unverifiable change: nothing regressed
    assert _lines(fixed_only.stdout, db["FIX"])[0].endswith("[fixed]")


def test_against_production_a_fix_does_not_fail_the_replay(cli, db):
    fix = cli("records", "replay", "calls.db", "--target", "myparser_v3:parse", "--session", "fix",
              "--report", "r.json", "--junit", "r.xml", "-q")
    assert fix.code == 0, fix
    [line] = _lines(fix.stdout, db["FIX"])
    assert line.endswith("[fixed]"), line
    [row] = fix.report("r.json")["changed"]
    assert (row["verdict"], row["truth_known"]) == ("fixed", True)
    assert "<failure" not in (Path(fix.cwd) / "r.xml").read_text()

    everything = cli("records", "replay", "calls.db", "--target", "myparser_v2:parse", "-q")
    assert everything.code == 1, everything
    for key, kind in (("FIX", "fixed"), ("BUG", "regressed"), ("UNSURE", "changed")):
        [line] = _lines(everything.stdout, db[key])
        assert line.endswith(f"[{kind}]"), (key, line)
    assert _lines(everything.stdout, db["SAME"]) == []  # myparser_v2.ParseError is v1's ParseError


def test_a_baseline_of_the_earlier_format_is_refused_in_one_line(cli, db, tmp_path):
    (tmp_path / "old.json").write_text(json.dumps({"format": "toolfuzz-records-baseline", "version": 1,
                                                   "records": {}}))
    run = cli("records", "replay", "calls.db", "--target", "myparser_v2:parse", "--baseline", "old.json")
    assert run.code == 2 and "Traceback" not in run.stderr, run
    [line] = run.stderr.strip().splitlines()
    assert "old.json" in line and "--update-baseline" in line
