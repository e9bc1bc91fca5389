"""The config file: search, validation (one line naming file, key, expected type), relative paths,
precedence (command line > per-tool table > file > defaults) through click's default_map, and
`fuzz config show`."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click
import pytest

from strategies._internal.formats import FORMATS  # noqa: F401
from strategies._internal.formats.versions import known_selectors
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzer.cli import FuzzGroup, main, options
from fuzzer.cli.config_file import apply_config, config_note, tool_overrides
from fuzzer.config import SETTINGS, ConfigFileError, find_config, ignored_signatures, load_config


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TOOLFUZZ_CONFIG", raising=False)
    (tmp_path / ".git").mkdir()  # the repository root: the search stops here
    return tmp_path


def fuzz(*args: str):
    return CliRunner().invoke(main, list(args))


BAD_CONFIGS = [
    ("budgte = 3", "toolfuzz.toml: unknown key 'budgte' (did you mean budget?); known keys: target, tools, level, "
                   "formats, formats_from, reject_on, corpus, budget, seed, timeout, workers, backend, ray_address, "
                   "max_examples, ignore"),
    ('seed = "1"', "toolfuzz.toml: seed: expected an integer, got string '1'"),
    ("seed = true", "toolfuzz.toml: seed: expected an integer, got boolean True"),
    ("budget = 0", "toolfuzz.toml: budget: expected a number of seconds > 0, got integer 0"),
    ("budget = 1e400", "toolfuzz.toml: budget: expected a number of seconds > 0, got number inf"),
    ("timeout = nan", "toolfuzz.toml: timeout: expected a number of seconds > 0, got number nan"),
    ("max_examples = 2.5", "toolfuzz.toml: max_examples: expected an integer >= 1, got number 2.5"),
    ('workers = "many"', "toolfuzz.toml: workers: expected an integer >= 1 or \"auto\", got string 'many'"),
    ('backend = "spark"', "toolfuzz.toml: backend: expected one of \"local\", \"ray\", got string 'spark'"),
    ('target = "mypkg.parse"', "toolfuzz.toml: target: expected a module:callable reference (string), got string "
                               "'mypkg.parse'"),
    ('level = "strict"', "toolfuzz.toml: level: expected one of \"parse\", \"validate\", got string 'strict'"),
    ('formats = ["json", "jsn"]', "toolfuzz.toml: formats: expected a list of format names (or families, e.g. "
                                  f"\"hermes:single\") ({', '.join(known_selectors())}; a family or format may end in "
                                  ":single, :no_prose or :no_reasoning), got array ['json', 'jsn']"),
    ('formats_from = ["no_such_module_here"]', "toolfuzz.toml: formats_from: expected a list of importable module "
                                               "names, got array ['no_such_module_here']"),
    ("reject_on = [1]", "toolfuzz.toml: reject_on: expected a string or a list of strings (M:NAME), got array [1]"),
    ("[tools.get_weather]\ntarget = \"a:b\"", "toolfuzz.toml [tools.get_weather]: 'target' cannot be set per tool; "
                                             "per-tool keys: level, formats, budget, seed, max_examples, ignore"),
    ("[tools]\nget_weather = 3", "toolfuzz.toml: tools.get_weather: expected a table of per-tool settings (or "
                                 "tools.source = the tools file)"),
    ("[tools]\nsource = 3", "toolfuzz.toml: tools.source: expected a string (a tools file or M:A), got integer 3"),
    ("seed = ", "toolfuzz.toml: not valid TOML (Invalid value (at line 1, column 8))"),
]


@pytest.mark.parametrize("text,error", BAD_CONFIGS, ids=[b[0].split("\n")[-1] for b in BAD_CONFIGS])
def test_a_bad_config_is_one_line_naming_file_key_and_type(in_tmp, text, error):
    (in_tmp / "toolfuzz.toml").write_text(text + "\n", encoding="utf-8")
    result = fuzz("tools")
    assert result.exit_code == 2, result.output
    assert result.output == f"Error: {error}\n"


def test_pyproject_errors_name_its_table(in_tmp):
    (in_tmp / "pyproject.toml").write_text("[tool.toolfuzz]\ntimeout = -1\n", encoding="utf-8")
    result = fuzz("tools")
    assert (result.exit_code, result.output) == (2, "Error: pyproject.toml [tool.toolfuzz]: timeout: expected a "
                                                    "number of seconds > 0, got integer -1\n")
    (in_tmp / "pyproject.toml").write_text("[tool.toolfuzz.tools.get_weather]\nseed = 'x'\n", encoding="utf-8")
    assert fuzz("tools").output == ("Error: pyproject.toml [tool.toolfuzz.tools.get_weather]: seed: expected an "
                                    "integer, got string 'x'\n")


def test_an_explicit_config_file_must_exist(in_tmp):
    result = fuzz("--config", "nope.toml", "tools")
    assert (result.exit_code, result.output) == (2, "Error: nope.toml: no such config file\n")


def test_search_goes_up_to_the_repository_root_and_prefers_toolfuzz_toml(in_tmp):
    sub = in_tmp / "a" / "b"
    sub.mkdir(parents=True)
    assert find_config(sub) is None
    (in_tmp / "a" / "pyproject.toml").write_text("[project]\nname = 'x'\n", encoding="utf-8")  # no [tool.toolfuzz]
    assert find_config(sub) is None
    (in_tmp / "pyproject.toml").write_text("[tool.toolfuzz]\nseed = 2\n", encoding="utf-8")
    assert find_config(sub) == in_tmp / "pyproject.toml"
    (in_tmp / "toolfuzz.toml").write_text("seed = 3\n", encoding="utf-8")
    assert find_config(sub) == in_tmp / "toolfuzz.toml"
    assert load_config(start=sub).get("seed") == 3
    (in_tmp / ".git").rmdir()
    (in_tmp / "a" / ".git").mkdir()  # now a/ is the repository: nothing above it is read
    assert find_config(sub) is None


def test_relative_paths_are_relative_to_the_file(in_tmp, monkeypatch):
    # (TOML cannot hold both tools = "tools.json" and [tools.NAME]: the source goes in the table)
    (in_tmp / "toolfuzz.toml").write_text('corpus = "fuzz-corpus"\nignore = ["known.txt"]\n[tools]\n'
                                          'source = "tools.json"\n[tools.get_weather]\n'
                                          "ignore = ['crash-0123456789ab']\n", encoding="utf-8")
    (in_tmp / "tools.json").write_text("{}", encoding="utf-8")
    sub = in_tmp / "src"
    sub.mkdir()
    monkeypatch.chdir(sub)
    config = load_config()
    assert config.get("corpus") == str(in_tmp / "fuzz-corpus")
    assert config.get("tools") == str(in_tmp / "tools.json")
    assert config.get("ignore") == [str(in_tmp / "known.txt")]
    assert config.get("ignore", tool="get_weather") == ["crash-0123456789ab"]  # signatures stay as they are


def test_ignore_entries_are_signatures_or_files_of_them(tmp_path):
    listing = tmp_path / "known.txt"
    listing.write_text("# known bugs\ncrash-aaaaaaaaaaaa\n\nfalse_reject-bbbbbbbbbbbb  # in the vendor's parser\n")
    assert ignored_signatures(["hang-cccccccccccc", str(listing)]) == {
        "hang-cccccccccccc", "crash-aaaaaaaaaaaa", "false_reject-bbbbbbbbbbbb"}
    listing.write_text("crash-aaaaaaaaaaaa\nnot a signature\n")
    with pytest.raises(ConfigFileError, match=r"known.txt:2: 'not a signature' is not a signature"):
        ignored_signatures([str(listing)])
    with pytest.raises(ConfigFileError, match=r"ignore: missing.txt: not a signature .* and not a readable file"):
        ignored_signatures(["missing.txt"])


# -- precedence, through a real click command that gets its defaults like every fuzz command ----

@click.group()
@click.option("--config", "config_path", default=None)
@click.pass_context
def group(ctx, config_path):
    apply_config(ctx, config_path)


@group.command()
@click.option("--corpus", "corpus_dir", required=True)
@options.seed
@options.level
@options.formats
@click.option("--budget", "budget_s", type=float, default=60.0)
@click.pass_context
def probe(ctx, corpus_dir, seed, level, formats, budget_s):
    tool = tool_overrides(ctx, "get_weather")
    click.echo(json.dumps({"corpus": corpus_dir, "seed": seed, "level": level, "formats": list(formats),
                           "budget": budget_s, "get_weather": tool}))


def probe_run(*args):
    result = CliRunner().invoke(group, ["probe", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_precedence_is_command_line_then_tool_table_then_file_then_defaults(in_tmp):
    (in_tmp / "toolfuzz.toml").write_text('corpus = "c"\nseed = 7\nformats = ["json"]\n'
                                          '[tools.get_weather]\nseed = 9\nlevel = "validate"\nbudget = 5\n')
    got = probe_run()
    assert got == {"corpus": "c", "seed": 7, "level": "parse", "formats": ["json"], "budget": 60.0,
                   "get_weather": {"seed": 9, "level": "validate", "budget_s": 5.0}}
    got = probe_run("--seed", "1", "--budget", "2", "--format", "hermes")
    assert (got["seed"], got["budget"], got["formats"]) == (1, 2.0, ["hermes"])
    assert got["get_weather"] == {"level": "validate"}  # the command line beats the tool table


def test_a_required_option_is_satisfied_by_the_file_and_still_required_without_it(in_tmp):
    (in_tmp / "toolfuzz.toml").write_text('corpus = "from-file"\n')
    assert probe_run()["corpus"] == "from-file"
    (in_tmp / "toolfuzz.toml").unlink()
    result = CliRunner().invoke(group, ["probe"])
    assert result.exit_code == 2 and "Missing option '--corpus'" in result.output


def test_fuzz_config_show_says_where_each_value_came_from(in_tmp):
    (in_tmp / "toolfuzz.toml").write_text('target = "fuzzer.targets.naive:parse"\nseed = 4\n'
                                          "[tools.get_weather]\nbudget = 5\n")
    shown = json.loads(fuzz("config", "show", "--command", "gate", "--tool", "get_weather", "--json").output)
    settings_ = shown["settings"]
    assert settings_["target"] == {"value": "fuzzer.targets.naive:parse", "source": "toolfuzz.toml"}
    assert settings_["seed"] == {"value": 4, "source": "toolfuzz.toml"}
    assert settings_["budget"] == {"value": 5.0, "source": "toolfuzz.toml [tools.get_weather]"}
    assert settings_["timeout"] == {"value": 2.0, "source": "default"}
    text = fuzz("config", "show").output.splitlines()
    assert text[0] == "config file: toolfuzz.toml"
    assert any(line.split() == ["seed", "4", "toolfuzz.toml"] for line in text)
    assert any(line.split()[:2] == ["budget", "(none)"] for line in text)  # campaign's default: none
    result = fuzz("config", "show", "--command", "gat")
    assert (result.exit_code, result.output) == (2, "Error: --command: no command 'gat'; did you mean gate?\n")
    # a tool without a table of its own: the file's settings, as a campaign on it uses them
    other = json.loads(fuzz("config", "show", "--tool", "search_flights", "--json").output)["settings"]
    assert other["seed"] == {"value": 4, "source": "toolfuzz.toml"} and other["budget"]["source"] == "default"


def test_every_setting_feeds_an_option_of_some_command():
    flags = {opt for cmd in _commands(main) for p in cmd.params for opt in getattr(p, "opts", [])}
    missing = [s.name for s in SETTINGS.values() if s.option not in flags and s.name != "ignore"]
    assert missing == []  # (--ignore is the lead's next option)


def _commands(command):
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            yield from _commands(sub)
    else:
        yield command


# -- a property: what a valid file says is what load_config reads -------------------------------

NON_PATH_VALUES = {
    "target": st.from_regex(r"[a-z_][a-z0-9_.]{0,12}:[a-z_]{1,8}", fullmatch=True),
    "level": st.sampled_from(["parse", "validate"]),
    "formats": st.lists(st.sampled_from(["json", "openai", "hermes", "pythonic"]), min_size=1, max_size=3),
    "reject_on": st.lists(st.from_regex(r"[a-z]{1,6}:[A-Z][a-z]{0,6}", fullmatch=True), max_size=2),
    "budget": st.floats(min_value=0.001, max_value=1e6),
    "seed": st.integers(-2**40, 2**40),
    "timeout": st.floats(min_value=0.01, max_value=600),
    "workers": st.one_of(st.just("auto"), st.integers(1, 64)),
    "max_examples": st.integers(1, 10**9),
}


def _toml(value) -> str:
    return json.dumps(value) if not isinstance(value, float) else repr(value)


@settings(max_examples=60, deadline=None)
@given(st.fixed_dictionaries({}, optional=NON_PATH_VALUES),
       st.dictionaries(st.sampled_from(["get_weather", "search_flights"]),
                       st.fixed_dictionaries({}, optional={k: NON_PATH_VALUES[k] for k in ("level", "seed", "budget")}),
                       max_size=2))
def test_a_valid_file_reads_back_as_written(tmp_path_factory, values, tools):
    directory = tmp_path_factory.mktemp("cfg")
    lines = [f"{key} = {_toml(value)}" for key, value in values.items()]
    for tool, table in tools.items():
        lines += [f"[tools.{tool}]"] + [f"{key} = {_toml(value)}" for key, value in table.items()]
    (directory / "toolfuzz.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    config = load_config(directory / "toolfuzz.toml")
    expected = {k: (float(v) if k in ("budget", "timeout") else v) for k, v in values.items()}
    assert config.values == expected
    assert config.tools == {t: {k: (float(v) if k == "budget" else v) for k, v in table.items()}
                            for t, table in tools.items()}
    for tool, table in tools.items():
        assert config.for_tool(tool) == {**config.values, **config.tools[tool]}


@settings(max_examples=40, deadline=None)
@given(st.from_regex(r"[a-z][a-z_]{0,15}", fullmatch=True).filter(lambda k: k not in SETTINGS and k != "tools"))
def test_any_unknown_key_is_named(tmp_path_factory, key):
    path = Path(tmp_path_factory.mktemp("cfg")) / "toolfuzz.toml"
    path.write_text(f"{key} = 1\n", encoding="utf-8")
    with pytest.raises(ConfigFileError) as error:
        load_config(path)
    assert f"unknown key {key!r}" in str(error.value) and os.path.basename(str(path)) in str(error.value)


def test_a_bad_ignore_in_the_config_file_names_the_file_not_the_option(in_tmp):
    (in_tmp / "toolfuzz.toml").write_text('ignore = ["nosuchfile.txt"]\n', encoding="utf-8")
    result = fuzz("campaign", "--target", "fuzzer.targets.naive:parse", "--tool", "get_weather", "--max-examples", "5")
    assert result.exit_code == 2
    assert result.output.startswith("Error: toolfuzz.toml: ignore: 'nosuchfile.txt' is neither a signature"), \
        result.output


# -- what the run takes from the file: said first, and an explicit bound is never overridden ------

@click.group(cls=FuzzGroup)
@click.option("--config", "config_path", default=None)
@click.pass_context
def fuzz_like(ctx, config_path):
    apply_config(ctx, config_path)


@fuzz_like.command()
@options.target
@click.option("--corpus", "corpus_dir", default=None)
@options.seed
@options.max_examples
@click.option("--budget", "budget_s", type=float, default=None)
@click.option("--tool", "tool_names", multiple=True)
@click.pass_context
def bounded(ctx, target, corpus_dir, seed, max_examples, budget_s, tool_names):
    click.echo(json.dumps({"corpus": corpus_dir, "max_examples": max_examples, "budget": budget_s,
                           "get_weather": tool_overrides(ctx, "get_weather"), "note": config_note(ctx)}))


def bounded_run(*args):
    result = CliRunner().invoke(fuzz_like, ["bounded", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_an_explicit_bound_replaces_the_files_other_bound_and_the_run_says_what_came_from_the_file(in_tmp):
    # --budget 12 beside the file's max_examples = 2000 ran 2,000 executions and ignored the budget
    (in_tmp / "toolfuzz.toml").write_text('target = "mypkg:parse"\ncorpus = "fuzz-corpus"\nseed = 1\n'
                                          'max_examples = 2000\n[tools.get_weather]\nmax_examples = 50\nseed = 3\n')
    got = bounded_run("--budget", "12")
    assert (got["budget"], got["max_examples"]) == (12.0, None)
    assert got["get_weather"] == {"seed": 3}  # its max_examples is replaced by --budget too
    assert got["note"] == ["config toolfuzz.toml: target = mypkg:parse, corpus = fuzz-corpus, seed = 1; "
                           "per tool: get_weather (seed); not used: max_examples (--budget given)"]
    got = bounded_run("--max-examples", "7")  # the other way round: the file sets no budget here
    assert (got["budget"], got["max_examples"]) == (None, 7)
    assert got["note"][0].startswith("config toolfuzz.toml: target = mypkg:parse, corpus = fuzz-corpus, seed = 1")
    got = bounded_run()  # nothing given: the file's bounds apply, as before
    assert (got["budget"], got["max_examples"], got["get_weather"]) == (None, 2000, {"max_examples": 50, "seed": 3})


def test_a_corpus_from_the_file_on_another_target_is_said_loudly(in_tmp):
    (in_tmp / "toolfuzz.toml").write_text('target = "mypkg:parse"\ncorpus = "fuzz-corpus"\n')
    note = bounded_run("--target", "otherpkg:parse")["note"]
    assert note[0] == "config toolfuzz.toml: corpus = fuzz-corpus"
    assert note[1] == ("warning: the corpus fuzz-corpus is the one toolfuzz.toml keeps for mypkg:parse; this run's "
                       "target is otherpkg:parse (--corpus names another)")
    assert bounded_run("--target", "otherpkg:parse", "--corpus", "mine")["note"] == []  # nothing from the file
    assert bounded_run("--target", "mypkg:parse")["note"] == ["config toolfuzz.toml: corpus = fuzz-corpus"]


def test_without_a_config_file_nothing_is_said(in_tmp):
    assert bounded_run("--target", "a:b", "--budget", "3")["note"] == []


def test_the_note_names_only_the_tables_of_the_tools_a_run_selects(in_tmp):
    (in_tmp / "toolfuzz.toml").write_text('target = "mypkg:parse"\n[tools.get_weather]\nseed = 3\n'
                                          '[tools.search_flights]\nseed = 4\n')
    assert bounded_run("--tool", "search_flights")["note"] == [
        "config toolfuzz.toml: target = mypkg:parse; per tool: search_flights (seed)"]
    assert "get_weather (seed); search_flights (seed)" in bounded_run()["note"][0]
