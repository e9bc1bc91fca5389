"""Options of the long-running fuzzing jobs (agent, and any harness that wants them), defined once.

The parser campaign defines the same options inline in ``fuzzer/cli/campaign.py``; they can move
here so every job's ``--budget`` reads and behaves the same.
"""

from __future__ import annotations

import click

budget = click.option("--budget", "budget_s", type=click.FloatRange(min=0.1), default=None,
                      help="Seconds to run, shrinking included (a hard limit). Default: 60, or no time limit "
                           "with --max-examples.")
max_examples = click.option("--max-examples", type=click.IntRange(min=1), default=None,
                            help="Stop after this many examples (with --seed: a deterministic run).")
junit = click.option("--junit", "junit_path", metavar="FILE.xml", type=click.Path(dir_okay=False),
                     help="Write a JUnit XML report here (one test case per finding).")
shrink = click.option("--shrink/--no-shrink", default=True, show_default=True,
                      help="Shrink each failure to the smallest input that shows it.")
quiet = click.option("-q", "--quiet", is_flag=True, help="No progress lines; only the findings and the summary.")
