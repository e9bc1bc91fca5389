"""What importing a public module pulls in, checked in a fresh interpreter (the test process has
imported everything already).

The kernels and the error types are imported by users' code without Hypothesis; the recorder runs
inside users' applications without Hypothesis or click; the corpus knows nothing of Hypothesis or
the fuzzer (DESIGN.md: data flows one way).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT, cli_env


@pytest.mark.parametrize("modules, forbidden", [
    (["strategies.errors", "strategies.registry", "strategies.json_values", "strategies.json_schemas"],
     ["hypothesis"]),
    (["strategies.json_values", "strategies.json_schemas"], ["hypothesis", "jsonschema"]),
    (["fuzzer.records.recorder"], ["hypothesis", "click"]),
    (["corpus.store", "corpus.minimize"], ["hypothesis", "fuzzer"]),
], ids=lambda v: ",".join(v))
def test_importing_a_module_pulls_in_none_of_what_it_must_not(modules, forbidden):
    code = (f"import sys, {', '.join(modules)}\n"
            f"print(sorted(m for m in sys.modules if m.split('.')[0] in {forbidden!r}))\n")
    out = subprocess.run([sys.executable, "-c", code], env=cli_env(), cwd=ROOT, capture_output=True, text=True,
                         check=True, timeout=60).stdout
    assert out.strip() == "[]"
