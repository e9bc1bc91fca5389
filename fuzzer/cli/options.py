"""Options shared by several commands, defined once (STYLE.md: pip-tools' options module).

Every option's name is also its config-file key (``[tool.toolfuzz]``), so defaults can come from
a file through click's ``default_map``.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Optional

import click



class Seconds(click.FloatRange):
    """A number of seconds >= ``min``, and finite: ``inf`` or ``nan`` (which float() accepts) is
    no budget or timeout a run can keep to."""

    name = "seconds"

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        import math

        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number of seconds.", param, ctx)
        return number


class TargetRef(click.ParamType):
    """``M:A`` (or ``path.py:A``): checked for shape here; imported only in the worker process,
    where a failure becomes one line naming the part that failed (with close matches)."""

    name = "M:A"

    def convert(self, value: Any, param: Any, ctx: Any) -> str:
        from fuzzer.gitref import split_git_target
        from strategies.errors import TargetError

        text = str(value).strip()
        try:
            git = split_git_target(text)
        except TargetError as exc:
            self.fail(str(exc), param, ctx)
        body = git[1] if git else text
        module, colon, attr = body.rpartition(":")
        if not colon or not module or not attr:
            self.fail(f"{value!r} is not of the form module:callable (e.g. mypkg.parsing:parse)", param, ctx)
        return text


class AnomalyChoice(click.ParamType):
    """An anomaly class, an operator name or ``valid``; unknown names get close matches."""

    name = "CLASS"

    def convert(self, value: Any, param: Any, ctx: Any) -> str:
        from fuzzer.harnesses.parser.tool import resolve_operators
        from strategies.errors import UnknownName

        try:
            resolve_operators([value])
        except UnknownName as exc:
            self.fail(str(exc), param, ctx)
        return value


class AutoCount(int):
    """``--workers auto`` resolved for this machine (one per CPU core), remembering it was ``auto``:
    a back end on a cluster counts the CPUs the cluster offers instead (:func:`backend_pool`)."""

    auto = True


class Workers(click.ParamType):
    """A number of worker processes, or ``auto`` (one per CPU core; with ``--backend ray``, one
    actor per CPU the cluster offers)."""

    name = "N|auto"

    def convert(self, value: Any, param: Any, ctx: Any) -> int:
        if isinstance(value, int):
            return value
        if str(value).strip().lower() == "auto":
            return AutoCount(max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                                 else (os.cpu_count() or 1)))
        try:
            number = int(value)
        except ValueError:
            self.fail(f"{value!r} is neither a number nor 'auto'", param, ctx)
        if number < 1:
            self.fail(f"{number} is not at least 1", param, ctx)
        return number


TARGET_HELP = ("The parser under test: a callable taking the model output text and returning its calls (a list of "
               "{name, arguments}, one call, or None); raising ValueError is a clean rejection (see --reject-on). "
               "The current directory is on sys.path.")

tools_file = click.option("--tools", "tools_file", metavar="FILE",
                          help="Tools to fuzz: an OpenAI/Anthropic tools list, an MCP tools/list result, a "
                               "{name: schema} mapping (JSON or YAML), or M:A naming pydantic models. "
                               "Default: the built-in registry (see `fuzz tools`).")
target = click.option("--target", "target", metavar="M:A", type=TargetRef(), required=True, help=TARGET_HELP)
target_for_corpus = click.option("--target", "target", metavar="M:A", type=TargetRef(), default=None,
                                 help=TARGET_HELP + " Replays the corpus's parser entries (required unless only "
                                      "--executor / --agent entries are replayed).")
reject_on = click.option("--reject-on", "reject_on", metavar="M:NAME", multiple=True,
                         help="Exception type that counts as a clean rejection (repeatable). Default: ValueError.")
level = click.option("--level", type=click.Choice(["parse", "validate"]), default="parse", show_default=True,
                     help="parse: the target only extracts calls. validate: it also promises every returned "
                          "call names a known tool, satisfies its schema, and is not a duplicate.")
entry_level = click.option("--level", type=click.Choice(["parse", "validate"]), default="parse", show_default=True,
                           help="Oracle level for entries and inputs that do not record one.")
seed = click.option("--seed", type=int, default=0, show_default=True,
                    help="Random seed: the same seed and target give the same samples and findings.")
timeout = click.option("--timeout", type=Seconds(min=0.01), default=2.0, show_default=True,
                       help="Seconds one input may run before it counts as a hang.")
workers = click.option("--workers", type=Workers(), default="1", show_default=True,
                       help="Worker processes running the target, or 'auto' for one per CPU core (with --backend "
                            "ray: actors, 'auto' for one per CPU the cluster offers).")


def _backend_names() -> list[str]:
    from fuzzer.backends import BACKENDS

    return BACKENDS.names()


backend = click.option("--backend", type=click.Choice(_backend_names()), default="local", show_default=True,
                       help="Where the work runs: local worker processes, or ray: Ray actors, each with its own "
                            "isolated worker (pip install 'toolfuzz[ray]'). Findings are confirmed, shrunk and "
                            "stored here either way.")
ray_address = click.option("--ray-address", "ray_address", metavar="ADDRESS|auto", default=None,
                           help="With --backend ray: the cluster to join (HOST:PORT as `ray start --head` prints it, "
                                "or auto for the one started on this machine). Default: a Ray instance started for "
                                "the run and stopped after it.")
memory = click.option("--memory-limit", "memory_limit_mb", type=click.IntRange(min=64), default=4096,
                      show_default=True, help="Address-space limit of each worker, in MiB.")
class FormatSelector(click.ParamType):
    """A format (``hermes``, ``mistral:v11``), a whole family (``mistral``: every version), either
    followed by the variants the target does not support (``hermes:single``, ``:no_prose``,
    ``:no_reasoning``); unknown names get close matches."""

    name = "FORMAT"

    def convert(self, value: Any, param: Any, ctx: Any) -> str:
        from strategies._internal.formats.versions import resolve
        from strategies.errors import UnknownName

        try:
            resolve(str(value))
        except UnknownName as exc:
            self.fail(str(exc), param, ctx)
        return str(value)


def load_user_formats(modules: tuple) -> None:
    """Import the modules of ``--formats-from`` (and the ``formats_from`` config key): their
    ``@output_format`` decorators register the user's own formats. One line naming the module when
    it cannot be imported."""
    import importlib
    import sys

    from fuzzer.cli.errors import ConfigError

    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError as exc:
            raise ConfigError(f"--formats-from: cannot import {name!r} ({exc})") from None
        except Exception as exc:  # noqa: BLE001 - a user's module: whatever it raises is one line
            raise ConfigError(f"--formats-from: importing {name!r} raised {type(exc).__name__}: {exc}") from None


formats_from = click.option("--formats-from", "formats_from", multiple=True, metavar="MODULE", is_eager=True,
                            callback=lambda ctx, param, value: (load_user_formats(value), value)[1],
                            help="A module of your own formats (repeatable): importing it registers them with "
                                 "toolfuzz's public @output_format decorator, e.g. mypkg.formats.")


def chat_template_formats(paths: tuple) -> list[str]:
    """Register the chat templates of ``--chat-template`` as formats (``template:<stem>``); their
    names. One line naming the file when one cannot be used (unreadable, no ``chat_template`` field,
    not Jinja, raising on a plain conversation, writing no tool calls)."""
    from fuzzer.cli.errors import ConfigError
    from strategies._internal.formats.chat_template import register_template
    from strategies.errors import ToolfuzzError

    names = []
    for path in paths:
        try:
            name = register_template(path)
        except ToolfuzzError as exc:
            raise ConfigError(f"--chat-template: {exc}") from None
        if name not in names:
            names.append(name)
    return names


def corpus_chat_templates(store: Any) -> list[str]:
    """Register the chat templates the corpus's entries were generated with (their recipes keep
    the template's absolute path and hash) that no ``--chat-template`` registered: a gate on a
    corpus written by a ``--chat-template`` campaign fuzzes that format again, and a replay's check
    that the target reads some valid output tries it. One line naming the entry and the file when
    the template is gone; a warning when it changed since."""
    from fuzzer.cli.errors import ConfigError
    from strategies._internal.formats import FORMATS
    from strategies._internal.formats.chat_template import SOURCES, ensure, read_source
    from strategies.errors import ToolfuzzError

    names: list[str] = []
    for path, entry in store.entries():
        recipe = entry.recipe or {}
        origin = recipe.get("format_origin")
        name = recipe.get("format")
        if not isinstance(origin, dict) or not isinstance(name, str) or name in FORMATS \
                or any(source.sha256 == origin.get("sha256") for source in SOURCES.values()):
            continue  # registered already, or given with --chat-template (perhaps moved and renamed)
        where = origin.get("chat_template")
        if not isinstance(where, str) or not os.path.isfile(where):
            raise ConfigError(f"--corpus: {path}: its format {name} is the chat template {where}, which is gone; "
                              "give the template with --chat-template FILE")
        try:
            source = read_source(where)
            if source.sha256 != origin.get("sha256"):
                click.echo(f"warning: the chat template {where} changed since {path} was written; "
                           f"{source.name} is fuzzed as it is now", err=True)
            names.append(ensure(source))
        except ToolfuzzError as exc:
            raise ConfigError(f"--corpus: {path}: {exc}") from None
    return names


chat_template = click.option(
    "--chat-template", "chat_templates", multiple=True, metavar="FILE", is_eager=True,
    callback=lambda ctx, param, value: (chat_template_formats(value), value)[1],
    help="A model's chat template (its tokenizer_config.json, or a .jinja file; repeatable): valid outputs are "
         "rendered by the template itself, as the format template:<file stem> (a tokenizer_config.json: "
         "template:<its directory>), fuzzed beside any --format.")

formats = click.option("--format", "formats", multiple=True, type=FormatSelector(),
                       help="Formats the target supports (repeatable): a format (hermes, mistral:v11), a family "
                            "(mistral: every version), optionally with the variants it does not support "
                            "(hermes:single, hermes:no_prose, hermes:no_reasoning); every other variant of a "
                            "declared format is tested. Default: probe each format with valid samples and skip "
                            "those whose single calls the target cleanly rejects (`fuzz formats` lists them).")
anomalies = click.option("--anomaly", "anomalies", multiple=True, type=AnomalyChoice(),
                         help="Restrict to these anomaly classes or operators (repeatable; 'valid' keeps valid "
                              "samples; `fuzz anomalies` lists them).")
max_examples = click.option("--max-examples", type=click.IntRange(min=1), default=None,
                            help="Stop after this many executions (with --seed: a deterministic run).")
corpus_dir = click.option("--corpus", "corpus_dir", required=True, metavar="DIR", type=click.Path(file_okay=False),
                          help="The corpus directory (kept in git).")
quiet = click.option("-q", "--quiet", is_flag=True, help="No progress lines; only the summary.")
max_failures = click.option("--max-failures", "max_failures", type=click.IntRange(min=1), default=None,
                            help="Stop after this many distinct failures.")
exitfirst = click.option("-x", "--exitfirst", is_flag=True, help="Stop at the first distinct failure (--max-failures 1).")
ignore = click.option("--ignore", "ignore", multiple=True, metavar="SIGNATURE|FILE",
                      help="A signature to ignore (repeatable), or a file of them (one per line, # comments): "
                           "ignored failures are not reported and do not block the gate.")


def group(*decorators: Callable) -> Callable:
    """One decorator applying ``decorators`` to a command, listed in ``--help`` in the order given:
    an option set that several commands share is defined once, here."""

    def apply(command: Callable) -> Callable:
        for decorator in reversed(decorators):
            command = decorator(command)
        return command

    return apply


def budget(default: Any, what: str) -> Callable:
    return click.option("--budget", "budget_s", type=Seconds(min=0.1), default=default,
                        show_default=default is not None, help=what)


def shrink(what: str) -> Callable:
    """``--shrink/--no-shrink``, on by default; ``what`` says what shrinking means for the command."""
    return click.option("--shrink/--no-shrink", default=True, show_default=True, help=what)


def optional_corpus(what: str) -> Callable:
    """An optional ``--corpus DIR`` (``corpus_dir``, None when not given); ``what`` says what the
    command does with it (replays it, adds its findings to it)."""
    return click.option("--corpus", "corpus_dir", default=None, metavar="DIR", type=click.Path(file_okay=False),
                        help=what)


def records_db(flag: str, dest: str, what: str) -> Callable:
    """An option naming a records database (``fuzz records``): a file, never a directory."""
    return click.option(flag, dest, metavar="DB", type=click.Path(dir_okay=False), help=what)





#: Where a run's work goes: the back end, and the cluster it joins.
backend_options = group(backend, ray_address)


def backend_pool(spec: Any, workers: int, backend_name: str = "local", address: Any = None,
                 environ: Any = None) -> Any:
    """The pool of the chosen back end (not started); ``workers`` from :class:`Workers` (``auto``
    means one per CPU of wherever the back end runs)."""
    from fuzzer.backends import make_pool

    count = None if getattr(workers, "auto", False) else int(workers)
    return make_pool(backend_name, spec, count, address=address or None, environ=environ)


#: How each input runs: the worker processes, the per-input timeout, each worker's memory.
worker_limits = group(workers, timeout, memory)


def run_limits(budget_default: Any, budget_help: str) -> Callable:
    """What bounds a run that generates inputs (campaign, gate, agent): ``--budget`` (its default
    and help per command), ``--max-examples``, ``--seed`` and the :data:`worker_limits`."""
    return group(budget(budget_default, budget_help), max_examples, seed, worker_limits)


def _report_options() -> list:
    from fuzzer.reports import WRITERS

    helps = {
        "report": ("FILE.json", "Write the JSON report here."),
        "junit": ("FILE.xml", "Write JUnit XML: one test case per corpus entry and per failure."),
        "sarif": ("FILE.sarif", "Write a SARIF 2.1.0 report (GitHub code scanning)."),
        "html": ("FILE.html", "Write a self-contained HTML report."),
        "markdown": ("FILE.md", "Write a Markdown summary (also appended to $GITHUB_STEP_SUMMARY in GitHub Actions)."),
    }
    made = []
    for name in WRITERS:
        metavar, text = helps.get(name, ("FILE", f"Write the {name} report here."))
        made.append(click.option(f"--{name}", f"{name}_path", metavar=metavar, type=click.Path(dir_okay=False),
                                 default=None, help=text))
    return made


def reports(command: Callable) -> Callable:
    """``--report``, ``--junit`` and every other registered report writer's option."""
    return group(*_report_options())(command)


def report_paths(kwargs: dict) -> dict:
    """The report writers asked for, by name: ``{"report": "r.json", "junit": None, ...}`` from the
    ``<name>_path`` keyword arguments :func:`reports` adds."""
    return {key[:-len("_path")]: value for key, value in kwargs.items() if key.endswith("_path")}


executor = click.option("--executor", "executor", metavar="M:A", type=TargetRef(), default=None,
                        help="The tool executor under test (replays the corpus's executor entries).")
agent = click.option("--agent", "agent", metavar="M:A", type=TargetRef(), default=None,
                     help="The agent loop under test (replays the corpus's agent entries).")


def references(target: Any, executor_ref: Any, agent_ref: Any, extra: Optional[dict] = None) -> dict:
    """Entry kind -> reference; a usage error when none is given. A stream entry's reference is
    ``--stream-parser`` or ``--stream-consumer`` (which one an entry needs is the harness's to say)."""
    extra = extra or {}
    refs = {"parser": target, "executor": executor_ref, "agent": agent_ref,
            "stream": extra.get("stream_parser") or extra.get("stream_consumer")}
    if not any(refs.values()):
        raise click.UsageError("Missing option '--target' (the parser under test; or --executor / --agent / "
                               "--stream-parser / --stream-consumer for those corpus entries)")
    return refs


def corpus_references(command: Callable, *, corpus_required: bool = True) -> Callable:
    """``--corpus`` and the reference of every entry kind (``--target``, ``--executor``, ``--agent``),
    plus ``--reject-on`` and ``--tools``: what replay and gate share."""
    corpus = corpus_dir if corpus_required else optional_corpus("The corpus directory to replay (or --records DB).")
    return group(corpus, target_for_corpus, executor, agent, reject_on, tools_file)(command)


executor_policy = click.option("--executor-policy", "executor_policy", metavar="FILE", type=click.Path(dir_okay=False),
                               help="The executor's declared policy (TOML) for its corpus entries. Default: "
                                    "[tool.toolfuzz.executor] in pyproject.toml, else the defaults.")
agent_policy = click.option("--agent-policy", "agent_policy", metavar="FILE", type=click.Path(dir_okay=False),
                            help="The agent loop's declared policy (TOML) for its corpus entries. Default: "
                                 "[tool.toolfuzz.agent] in pyproject.toml, else the defaults.")
http = click.option("--http", is_flag=True, help="Executor entries: run the tools' real requests / httpx code "
                                                  "against injected HTTP faults (no network).")
model_shape = click.option("--model-shape", "model_shape", type=click.Choice(["openai", "anthropic", "text"]),
                           default="openai", show_default=True,
                           help="Agent entries: the model client shape the loop is given.")


stream_parser = click.option("--stream-parser", "stream_parser", metavar="M:A", type=TargetRef(), default=None,
                             help="Stream entries found with `fuzz stream --parser`: the incremental parser "
                                  "(factory) to replay them on; the gate's short stream campaign runs on it too.")
stream_consumer = click.option("--stream-consumer", "stream_consumer", metavar="M:A", type=TargetRef(), default=None,
                               help="Stream entries found with `fuzz stream --consumer`: the chunk accumulator to "
                                    "replay them on (the gate's stream campaign, when --stream-parser is not given).")

#: What the executor, agent and stream harnesses need to replay their entries (replay, gate).
harness_options = group(executor_policy, agent_policy, http, model_shape, stream_parser, stream_consumer)


def harness_extra(kwargs: dict) -> dict:
    """The ``ReplayContext.extra`` those options make."""
    return {key: kwargs.pop(key) for key in ("executor_policy", "agent_policy", "http", "model_shape",
                                             "stream_parser", "stream_consumer") if key in kwargs}


#: The options of every command that re-runs corpus entries or captured inputs on a target.
replay_options = group(corpus_dir, target, reject_on, tools_file, entry_level, timeout, memory)


__all__ = ["AnomalyChoice", "AutoCount", "TargetRef", "Workers", "backend_options", "backend_pool", "group",
           "optional_corpus", "records_db", "reports", "replay_options", "run_limits", "shrink", "worker_limits"]
