"""The ``fuzz`` command line (click). Only this package imports click or prints for users.

The group and what commands share are :mod:`fuzzer.cli.app`; importing this package registers every
command on it (each command module imports ``app``, never this package, so nothing imports in a loop).
"""

from fuzzer.cli.app import FuzzCommand, FuzzGroup, load_registry, main, naming_the_file, translate_errors
from fuzzer.cli import inspect as _inspect  # noqa: F401  (registers commands)
from fuzzer.cli import campaign as _campaign  # noqa: F401
from fuzzer.cli import replay_cmd as _replay_cmd  # noqa: F401
from fuzzer.cli import gate_cmd as _gate_cmd  # noqa: F401
from fuzzer.cli import diff_cmd as _diff_cmd  # noqa: F401
from fuzzer.cli import corpus_cmds as _corpus_cmds  # noqa: F401
from fuzzer.cli import minimize_cmd as _minimize_cmd  # noqa: F401
from fuzzer.cli import config_cmd as _config_cmd  # noqa: F401
from fuzzer.cli import executor_cmd as _executor_cmd  # noqa: F401
from fuzzer.cli import formats_cmd as _formats_cmd  # noqa: F401
from fuzzer.cli import agent_cmd as _agent_cmd  # noqa: F401
from fuzzer.cli import stream_cmd as _stream_cmd  # noqa: F401
from fuzzer.cli import records_cmds as _records_cmds  # noqa: F401

__all__ = ["FuzzCommand", "FuzzGroup", "load_registry", "main", "naming_the_file", "translate_errors"]
