"""`--chat-template` end to end: a parser of a syntax toolfuzz knows only through a chat template is
fuzzed by the real CLI (its planted bug found, the careful version passing), the template's samples
are built and judged in the worker processes, and a gate on the corpus such a campaign wrote finds
the template again (one clear line when it is gone)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "chat_templates"
PARSERS = "tests.integration.template_parsers.made_up"
FORMAT = "template:made_up_calls"


def _campaign(cli, template: str, target: str, *more: str):
    return cli("campaign", "--tool", "get_weather", "--chat-template", template, "--target", f"{PARSERS}:{target}",
               "--max-examples", "3000", "--report", "r.json", "-q", *more)


def test_a_parser_of_a_template_only_syntax_is_fuzzed_and_its_planted_bug_found(cli, tmp_path):
    shutil.copy(FIXTURES / "made_up_calls.jinja", tmp_path)
    good = _campaign(cli, "made_up_calls.jinja", "parse")
    assert good.code == 0, good
    report = good.report()
    assert set(report["formats"]["supported"]) == {FORMAT}
    assert report["by_class"]["valid"]["executions"] > 0 and report["failures"] == []
    for cls in ("malformed_json", "truncated_output", "degenerate_output", "envelope_error"):
        assert report["by_class"][cls]["executions"] > 0, cls  # JSON edits, cuts, reasoning operators
    bad = _campaign(cli, "made_up_calls.jinja", "parse_buggy")
    assert bad.code == 1, bad
    found = [f for f in bad.report()["failures"] if f["format"] == FORMAT and f["verdict"] == "corruption"]
    assert found and all(f["truth"] == [] for f in found)  # the calls were only thought of, never made


def test_the_templates_samples_are_built_and_judged_in_the_workers(cli, tmp_path):
    """--anomaly malformed_json: those samples come only from the workers' orders (probes are valid)."""
    shutil.copy(FIXTURES / "made_up_calls.jinja", tmp_path)
    result = _campaign(cli, "made_up_calls.jinja", "parse_buggy", "--anomaly", "malformed_json", "--workers", "2")
    assert result.code == 0, result
    by_class = result.report()["by_class"]
    assert by_class["malformed_json"]["executions"] > 1000, by_class


def test_a_gate_on_the_corpus_of_a_template_campaign_finds_the_template_again(cli, tmp_path):
    (tmp_path / "templates").mkdir()
    template = tmp_path / "templates" / "made_up_calls.jinja"
    shutil.copy(FIXTURES / "made_up_calls.jinja", template)
    found = _campaign(cli, str(template), "parse_buggy", "--corpus", "corpus")
    assert found.code == 1, found
    origins = [json.loads(p.read_text(encoding="utf-8"))["recipe"]["format_origin"]
               for p in (tmp_path / "corpus").glob("*.json")
               if (json.loads(p.read_text(encoding="utf-8")).get("recipe") or {}).get("format") == FORMAT]
    assert origins and {o["chat_template"] for o in origins} == {str(template)}

    gate = cli("gate", "--corpus", "corpus", "--target", f"{PARSERS}:parse_buggy", "--tool", "get_weather",
               "--max-examples", "1500", "--report", "g.json")
    assert gate.code == 0, gate  # the bug is known (open in the corpus): nothing new
    campaign = gate.report("g.json")["campaigns"][0]
    assert FORMAT in campaign["formats"]["supported"], campaign["formats"]  # fuzzed again, found by the corpus
    assert [f["format"] for f in campaign["failures"]] == [FORMAT]  # and the known bug found in it again

    # the careful parser passes the entry, and the replay's check that it reads some valid output
    # tries the template's format (no built-in format is one it reads)
    fixed = cli("replay", "--corpus", "corpus", "--target", f"{PARSERS}:parse")
    assert fixed.code == 0, fixed

    moved = tmp_path / "renamed.jinja"
    template.rename(moved)
    gone = cli("gate", "--corpus", "corpus", "--target", f"{PARSERS}:parse_buggy", "--max-examples", "100")
    assert gone.code == 2, gone
    line = gone.stderr.strip().splitlines()[-1]
    assert line.startswith("Error: --corpus: ") and f"{FORMAT} is the chat template {template}, which is gone" in line
    assert "--chat-template FILE" in line and "Traceback" not in gone.stderr
    # given again, moved and renamed: found by its hash
    again = cli("gate", "--corpus", "corpus", "--target", f"{PARSERS}:parse", "--chat-template", str(moved),
                "--max-examples", "500")
    assert again.code == 0, again
