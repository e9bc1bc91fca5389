"""Options shared by several commands, defined once (STYLE.md: pip-tools' options module)."""

from __future__ import annotations

import click

from strategies._internal.formats import FORMATS

tools_file = click.option("--tools", "tools_file", metavar="FILE",
                          help="Tools to fuzz: an OpenAI/Anthropic tools list, an MCP tools/list result, a "
                               "{name: schema} mapping (JSON or YAML), or M:A naming pydantic models. "
                               "Default: the built-in registry (see `fuzz tools`).")
target = click.option("--target", "target", metavar="M:A", default="fuzzer.targets.reference:parse",
                      show_default=True,
                      help="The parser under test: a callable taking the model output text and returning its "
                           "calls (a list of {name, arguments}, one call, or None); raising ValueError is a "
                           "clean rejection. The current directory is on sys.path. The default, the bundled "
                           "reference parser, becomes reference:parse_validated at --level validate.")
reject_on = click.option("--reject-on", "reject_on", metavar="M:NAME", multiple=True,
                         help="Exception type that counts as a clean rejection (repeatable). Default: ValueError.")
level = click.option("--level", type=click.Choice(["parse", "validate"]), default="parse", show_default=True,
                     help="parse: the target only extracts calls. validate: it also promises every returned "
                          "call names a known tool, satisfies its schema, and is not a duplicate.")
seed = click.option("--seed", type=int, default=0, show_default=True,
                    help="Random seed: the same seed and target give the same samples and findings.")
timeout = click.option("--timeout", type=click.FloatRange(min=0.01), default=2.0, show_default=True,
                       help="Seconds one input may run before it counts as a hang.")
workers = click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
                       help="Worker processes running the target.")
report = click.option("--report", "report_path", metavar="FILE.json", type=click.Path(dir_okay=False),
                      help="Write the JSON report here.")
formats = click.option("--format", "formats", multiple=True, type=click.Choice(list(FORMATS)),
                       help="Formats the target supports (repeatable). Default: probe each format with "
                            "valid samples and skip those the target cleanly rejects.")
memory = click.option("--memory-limit", "memory_limit_mb", type=click.IntRange(min=64), default=4096,
                      show_default=True, help="Address-space limit of each worker, in MiB.")
entry_level = click.option("--level", type=click.Choice(["parse", "validate"]), default="parse", show_default=True,
                           help="Oracle level for entries and inputs that do not record one.")
corpus_dir = click.option("--corpus", "corpus_dir", required=True, metavar="DIR", help="The corpus directory.")


def replay_options(command):
    """The options of every command that re-runs corpus entries or captured inputs on a target."""
    for option in reversed((corpus_dir, target, reject_on, tools_file, entry_level, timeout, memory)):
        command = option(command)
    return command
