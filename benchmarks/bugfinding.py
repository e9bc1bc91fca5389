"""Bug finding: how many planted bugs a 30-second campaign catches, with exploration on and off.

Each module of ``benchmarks/parsers/`` is a realistic tool-call parser with exactly one planted bug
and declares it (``BUG``: verdict, level, formats, and a ``match`` rule that recognizes a finding of
it in a campaign report). For every parser and seed this script runs the installed ``fuzz``::

    fuzz campaign --target benchmarks.parsers.<name>:parse --budget 30 --seed S --level L \\
                  [--format F ...] --report R.json [--no-coverage]

once with coverage-guided exploration and once without (``--no-coverage``; when ``fuzz campaign``
has no such option, only the default mode runs and the output says so). A control campaign
against ``parse_fixed`` (the same parser with the bug removed) checks that the rule recognizes the
planted bug and nothing else: a matching finding there is a bad rule, reported as such.

Printed per bug and mode: caught/runs, median time to the first matching finding (the finding's
``found_at_s`` when reports carry it; otherwise the campaign's ``elapsed_s``, marked ``*``), the
most distinct matching signatures in one run, and the signatures per planted bug (the distinct
matching signatures of a run that caught it, averaged over those runs). Below the table, per mode:
the signatures per planted bug on average (goal at most 1.2) and at most (goal at most 2, with the
bugs above it named), and whether every bug was still caught (the bugs missed named). Run from
anywhere::

    .venv/bin/python benchmarks/bugfinding.py [--quick] [--jobs 2] [--only NAME] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Optional

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks import parsers  # noqa: E402

#: Modes: label -> extra campaign arguments.
EXPLORATION_ON, EXPLORATION_OFF, DEFAULT_MODE = "on", "off", "default"
MODE_ARGS = {EXPLORATION_ON: [], EXPLORATION_OFF: ["--no-coverage"], DEFAULT_MODE: []}
#: Seconds a campaign may run past its budget (probing, final shrinking) before it is interrupted,
#: and then to write its report before it is killed.
OVERRUN_S = 60.0
INTERRUPT_GRACE_S = 30.0


@dataclass
class Run:
    """One campaign: which parser, seed and mode, and what its report said."""

    bug: str
    seed: int
    mode: str
    target: str  # "parse" or "parse_fixed"
    exit_code: Optional[int] = None
    wall_s: float = 0.0
    error: str = ""
    matched: list = field(default_factory=list)  # the report's failures that match BUG["match"]
    others: int = 0  # failures that do not
    elapsed_s: Optional[float] = None
    executions: int = 0

    @property
    def caught(self) -> bool:
        return bool(self.matched)

    def first_catch(self) -> tuple:
        """(seconds to the first matching finding, True when read from found_at_s)."""
        times = [f["found_at_s"] for f in self.matched if isinstance(f.get("found_at_s"), (int, float))]
        if times and len(times) == len(self.matched):
            return min(times), True
        return self.elapsed_s, False

    @property
    def signatures(self) -> int:
        return len({f.get("signature") for f in self.matched})


def find_fuzz() -> list:
    """The installed ``fuzz`` command: next to this interpreter (a venv) or on PATH."""
    here = os.path.join(os.path.dirname(sys.executable), "fuzz")
    found = here if os.access(here, os.X_OK) else shutil.which("fuzz")
    if not found:
        raise SystemExit("bugfinding: no `fuzz` command next to this Python or on PATH "
                         "(install the project: pip install -e .)")
    return [found]


def exploration_modes(fuzz: list) -> list:
    """[on, off] when ``fuzz campaign`` has ``--no-coverage``, else [default]."""
    help_text = subprocess.run(fuzz + ["campaign", "--help"], capture_output=True, text=True, cwd=ROOT).stdout
    return [EXPLORATION_ON, EXPLORATION_OFF] if "--no-coverage" in help_text else [DEFAULT_MODE]


class Runner:
    """Runs campaigns as subprocesses (each in its own process group, so Ctrl-C can stop them)."""

    def __init__(self, fuzz: list, budget: float, workdir: str):
        self.fuzz, self.budget, self.workdir = fuzz, budget, workdir
        self._live: dict = {}
        self._lock = threading.Lock()
        self.stopping = False

    def command(self, run: Run, report: str) -> list:
        bug = parsers.load(run.bug).BUG
        cmd = self.fuzz + ["campaign", "--target", f"benchmarks.parsers.{run.bug}:{run.target}",
                           "--budget", str(self.budget), "--seed", str(run.seed), "--level", bug["level"],
                           "--report", report, "-q"]
        for fmt in bug["formats"] or ():
            cmd += ["--format", fmt]
        return cmd + MODE_ARGS[run.mode]

    def __call__(self, run: Run) -> Run:
        if self.stopping:
            run.error = "not run (interrupted)"
            return run
        report = os.path.join(self.workdir, f"{run.bug}-{run.target}-{run.mode}-{run.seed}.json")
        started = time.monotonic()
        proc = subprocess.Popen(self.command(run, report), cwd=ROOT, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        with self._lock:
            self._live[proc.pid] = proc
        try:
            _, stderr = proc.communicate(timeout=self.budget + OVERRUN_S)
        except subprocess.TimeoutExpired:  # over budget: interrupt it (it still writes its report)
            _kill_group(proc, signal.SIGINT)
            run.error = f"over budget: interrupted after {self.budget + OVERRUN_S:.0f} s"
            try:
                _, stderr = proc.communicate(timeout=INTERRUPT_GRACE_S)
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                _, stderr = proc.communicate()
                run.error = f"over budget: killed after {self.budget + OVERRUN_S + INTERRUPT_GRACE_S:.0f} s"
        finally:
            with self._lock:
                self._live.pop(proc.pid, None)
        run.wall_s = time.monotonic() - started
        run.exit_code = proc.returncode
        if not run.error and proc.returncode not in (0, 1, 130):
            last = (stderr or "").strip().splitlines()[-1:] or [f"exit status {proc.returncode}"]
            run.error = f"exit {proc.returncode}: {last[0][:120]}"
        if os.path.exists(report):
            read_report(run, report)
        elif not run.error:
            run.error = "no report written"
        return run

    def stop(self) -> None:
        """Interrupt the running campaigns (they write their reports), then kill what is left."""
        self.stopping = True
        with self._lock:
            live = list(self._live.values())
        for proc in live:
            _kill_group(proc, signal.SIGINT)
        deadline = time.monotonic() + 15
        for proc in live:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _kill_group(proc)


def _kill_group(proc: subprocess.Popen, sig: int = signal.SIGKILL) -> None:
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def read_report(run: Run, path: str) -> None:
    with open(path, encoding="utf-8") as f:
        report = json.load(f)
    rule = parsers.load(run.bug).BUG["match"]
    failures = report.get("failures") or []
    run.matched = [f for f in failures if parsers.matches(rule, f)]
    run.others = len(failures) - len(run.matched)
    run.elapsed_s = report.get("elapsed_s")
    run.executions = report.get("executions") or 0


# ----------------------------------------------------------------------------------------------------
# the table


def _median(values: list) -> str:
    return f"{statistics.median(values):.1f}" if values else "-"


def table(names: list, modes: list, runs: list, controls: dict, *, budget: float, seeds: list) -> str:
    by = {(r.bug, r.mode): [] for r in runs}
    for r in runs:
        by[(r.bug, r.mode)].append(r)
    fallback = False
    header = f"{'bug':<22} {'verdict':<14} {'level':<8}"
    for mode in modes:
        header += f" | {mode + ': caught':>10} {'t1st':>6} {'sigs':>4} {'other':>5}"
    header += " | control"
    per_bug = {mode: {} for mode in modes}  # mode -> bug -> signatures per caught run
    lines = [header, "-" * len(header)]
    totals = {mode: [0, 0, 0] for mode in modes}  # runs caught, runs, bugs caught at least once
    errors = []
    for name in names:
        bug = parsers.load(name).BUG
        row = f"{name:<22} {bug['verdict']:<14} {bug['level']:<8}"
        for mode in modes:
            group = by.get((name, mode), [])
            done = [r for r in group if r.elapsed_s is not None]  # those that wrote a report
            errors += [f"{name} seed {r.seed} {mode}: {r.error}" for r in group if r.error]
            caught = [r for r in done if r.caught]
            times = []
            for r in caught:
                t, exact = r.first_catch()
                fallback |= not exact
                if t is not None:
                    times.append(t)
            sigs = max((r.signatures for r in caught), default=0)
            if caught:
                per_bug[mode][name] = statistics.mean(r.signatures for r in caught)
            others = max((r.others for r in done), default=0)
            marker = "" if all(r.first_catch()[1] for r in caught) else "*"
            row += f" | {f'{len(caught)}/{len(group)}':>10} {_median(times) + marker:>6} {sigs:>4} {others:>5}"
            totals[mode][0] += len(caught)
            totals[mode][1] += len(group)
            totals[mode][2] += bool(caught)
        control = controls.get(name)
        if control is None:
            row += " | -"
        else:
            if control.error:
                errors.append(f"{name} control: {control.error}")
            if control.elapsed_s is None:
                row += " | error"
            elif control.matched:
                row += f" | {len(control.matched)} MATCH(ES) on parse_fixed"
            else:
                row += " | clean" + (f" ({control.others} other)" if control.others else "")
        lines.append(row)
    lines.append("-" * len(header))
    for mode in modes:
        caught, total, bugs = totals[mode]
        lines.append(f"exploration {mode:<8} caught {caught}/{total} runs; {bugs}/{len(names)} bugs caught at "
                     f"least once")
    for mode in modes:
        lines.append(signatures_line(mode, per_bug[mode], names))
    notes = [f"budget {budget:g} s per campaign, seeds {', '.join(map(str, seeds))}; "
             "caught = runs with a finding matching the bug's rule; t1st = median seconds to the first "
             "matching finding; sigs = most distinct matching signatures in one run (goal: <= 2; per "
             "planted bug, averaged over the runs that caught it: <= 1.2 on average); "
             "other = most non-matching findings in one run; control = a campaign against parse_fixed "
             "(seed 0): 'clean' when no finding matches the rule (other: findings that do not)."]
    if modes == [DEFAULT_MODE]:
        notes.append("`fuzz campaign` has no --no-coverage option yet: only the default mode was run, "
                     "exploration on/off could not be compared.")
    if fallback:
        notes.append("* reports carry no found_at_s: t1st is the campaign's elapsed_s (an upper bound).")
    return "\n".join(lines + [""] + notes + ([""] + ["errors:"] + errors if errors else []))


# ----------------------------------------------------------------------------------------------------


def signatures_line(mode: str, per_bug: dict, names: list) -> str:
    """Signatures per planted bug in one mode: the average over the bugs caught (goal <= 1.2), the
    most for any (goal <= 2, the bugs above named), and whether every bug was caught (the missed
    named): one bug should be one finding, and a change that merges findings must not lose one."""
    missed = [n for n in names if n not in per_bug]
    if not per_bug:
        return f"signatures per planted bug ({mode}): no bug caught"
    average = statistics.mean(per_bug.values())
    worst = max(per_bug.values())
    over = [f"{n} {v:.1f}" for n, v in sorted(per_bug.items()) if v > 2]
    return (f"signatures per planted bug ({mode}): average {average:.2f} (goal <= 1.2"
            f"{', met' if average <= 1.2 else ', NOT met'}), most {worst:.1f} (goal <= 2"
            f"{', met' if worst <= 2 else ': ' + ', '.join(over)}); "
            + ("every bug caught" if not missed else f"NOT caught: {', '.join(missed)}"))


def parse_seeds(value: str) -> list:
    """``3`` means seeds 0, 1, 2; ``4,7`` means those seeds."""
    try:
        if "," in value:
            return [int(s) for s in value.split(",") if s.strip()]
        count = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a count or a comma-separated list, got {value!r}")
    if count < 1:
        raise argparse.ArgumentTypeError("at least one seed")
    return list(range(count))


def main(argv: Optional[list] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--budget", type=float, default=30.0, help="seconds per campaign (default 30)")
    ap.add_argument("--seeds", type=parse_seeds, default=[0, 1, 2],
                    help="a seed count (3 = seeds 0,1,2; the default) or a comma-separated list")
    ap.add_argument("--only", action="append", metavar="NAME", help="run only this parser (repeatable)")
    ap.add_argument("--jobs", type=int, default=1, help="campaigns run in parallel (default 1)")
    ap.add_argument("--quick", action="store_true", help="budget 5 s and one seed (overrides both)")
    ap.add_argument("--no-control", action="store_true", help="skip the campaigns against parse_fixed")
    ap.add_argument("--keep-reports", metavar="DIR", help="keep the campaign reports in DIR")
    ap.add_argument("--out", metavar="FILE", help="also write the table to FILE")
    args = ap.parse_args(argv)
    if args.quick:
        args.budget, args.seeds = 5.0, [0]
    if args.budget <= 0 or args.jobs < 1:
        ap.error("--budget must be positive and --jobs at least 1")
    known = parsers.names()
    names = args.only or known
    unknown = [n for n in names if n not in known]
    if unknown:
        ap.error(f"unknown parser {unknown[0]!r}; known: {', '.join(known)}")
    if args.out:
        try:  # fail now, not after an hour of campaigns
            open(args.out, "a", encoding="utf-8").close()
        except OSError as exc:
            ap.error(f"--out {args.out}: {exc.strerror}")

    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        # Started in the background (`cmd &` ignores SIGINT): campaigns would inherit the ignored
        # SIGINT, and an over-budget one could then only be killed, losing its report.
        signal.signal(signal.SIGINT, signal.default_int_handler)
    fuzz = find_fuzz()
    modes = exploration_modes(fuzz)
    if modes == [DEFAULT_MODE]:
        print("note: `fuzz campaign` has no --no-coverage option; running the default mode only", file=sys.stderr)
    workdir = args.keep_reports or tempfile.mkdtemp(prefix="bugfinding-")
    try:
        os.makedirs(workdir, exist_ok=True)
    except OSError as exc:
        ap.error(f"--keep-reports {workdir}: {exc.strerror}")
    runner = Runner(fuzz, args.budget, workdir)
    runs = [Run(n, s, m, "parse") for n in names for m in modes for s in args.seeds]
    controls = {} if args.no_control else {n: Run(n, 0, modes[0], "parse_fixed") for n in names}
    todo = runs + list(controls.values())
    print(f"{len(todo)} campaigns of {args.budget:g} s, {args.jobs} at a time; reports in {workdir}",
          file=sys.stderr)
    interrupted = False
    pool = ThreadPoolExecutor(max_workers=args.jobs)
    try:
        for i, run in enumerate(pool.map(runner, todo), 1):
            state = run.error or ("caught" if run.caught else "missed")
            print(f"[{i}/{len(todo)}] {run.bug} {run.target} mode={run.mode} seed={run.seed}: {state} "
                  f"({run.wall_s:.0f} s)", file=sys.stderr)
    except KeyboardInterrupt:
        interrupted = True
        runner.stop()
        print("interrupted: stopping the running campaigns", file=sys.stderr)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    for run in todo:
        if run.exit_code is None and not run.error:
            run.error = "not run (interrupted)"
    text = table(names, modes, runs, controls, budget=args.budget, seeds=args.seeds)
    if interrupted:
        text += "\n\n(interrupted: campaigns that did not finish count as not caught)"
    print(text)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text + "\n")
    if not args.keep_reports:
        shutil.rmtree(workdir, ignore_errors=True)
    return 130 if interrupted else 0


if __name__ == "__main__":
    sys.exit(main())
