"""The config file: search, validation (one line naming file, key, expected type), relative paths,
precedence (command line > per-tool table > file > defaults) through click's default_map, and
`fuzz config show`."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click
import pytest

from strategies._internal.formats import FORMATS
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzer.cli import main, options
from fuzzer.cli.config_cmd import apply_config, tool_overrides
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
                   "formats, reject_on, corpus, budget, seed, timeout, workers, backend, ray_address, max_examples, "
                   "ignore"),
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
    ('formats = ["json", "jsn"]', f"toolfuzz.toml: formats: expected a list of format names ({', '.join(FORMATS)}), "
                                  "got array ['json', 'jsn']"),
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


def test_a_value_from_the_file_that_cannot_be_used_names_the_file_and_key(in_tmp):
    """Well typed but unusable (a reject_on module that does not exist): the error names where the
    value came from — the file and key when it came from the file, the flag when it was typed."""
    (in_tmp / "toolfuzz.toml").write_text('target = "fuzzer.targets.naive:parse"\nreject_on = "nosuch:Err"\n')
    from_file = fuzz("campaign", "--tool", "get_weather", "--budget", "1")
    assert from_file.exit_code == 2 and from_file.output.startswith("Error: toolfuzz.toml: reject_on 'nosuch:Err': ")
    typed = fuzz("campaign", "--tool", "get_weather", "--budget", "1", "--reject-on", "nosuch:Other")
    assert typed.exit_code == 2 and typed.output.startswith("Error: --reject-on 'nosuch:Other': ")


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
