"""The bug-finding benchmark's slow and unsafe triggers, each in a process of its own: a planted
super-linear regex must still be running a trigger sized to take minutes, and an unsafe parser
must run code under an audit hook (installed for good, so not in the test process), while the
fixes do neither. The rest of the benchmark parsers' checks are tests/unit/test_bug_parsers.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time

import pytest

from tests.conftest import ROOT
from tests.unit.test_bug_parsers import MODULES, named, outcome


def test_slow_triggers_take_minutes_and_the_fixes_do_not():
    """Each trigger is sized so the planted regex needs minutes (its polynomial backtracking) while
    the fix needs microseconds; the buggy run must still be going after 3 s."""
    slow = named("slow")
    assert slow
    procs = {}
    for name in slow:
        code = f"from benchmarks.parsers import {name} as m\ntry:\n    m.parse(m.TRIGGER)\nexcept ValueError:\n    pass"
        procs[name] = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT)
    deadline = time.monotonic() + 3
    try:
        for name in slow:
            module = MODULES[name]
            assert outcome(module.parse_fixed, module.TRIGGER)[0] in ("returned", "rejected")
        for name, proc in procs.items():
            with pytest.raises(subprocess.TimeoutExpired):
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
    finally:
        for proc in procs.values():
            proc.kill()
            proc.wait()


AUDIT_PROBE = textwrap.dedent("""
    import json, sys
    from benchmarks import parsers
    names = sys.argv[1:]
    modules = [parsers.load(n) for n in names]
    for m in modules:  # warm up: lazy imports are not the parser's doing
        for f in (m.parse, m.parse_fixed):
            try:
                f(m.TRIGGER)
            except Exception:
                pass
    seen = []
    sys.addaudithook(lambda event, args: seen.append(event) if event in (
        "exec", "compile", "os.system", "subprocess.Popen", "socket.connect", "pickle.find_class") else None)
    result = {}
    for name, m in zip(names, modules):
        for label in ("parse", "parse_fixed"):
            del seen[:]
            try:
                getattr(m, label)(m.TRIGGER)
            except Exception:
                pass
            result[f"{name}:{label}"] = sorted(set(seen))
    print(json.dumps(result))
""")


def test_unsafe_triggers_execute_code_and_the_fixes_do_not():
    unsafe = named("unsafe")
    assert unsafe
    out = subprocess.run([sys.executable, "-c", AUDIT_PROBE, *unsafe], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    events = json.loads(out)
    for name in unsafe:
        assert "exec" in events[f"{name}:parse"], (name, events[f"{name}:parse"])
        # ast.parse raises the "compile" event too; only running code ("exec") or the system is unsafe.
        assert not set(events[f"{name}:parse_fixed"]) - {"compile"}, (name, events[f"{name}:parse_fixed"])
