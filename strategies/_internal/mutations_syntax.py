"""Compatibility: the names other packages import from here. The syntactic operators now live in
:mod:`strategies._internal.operators` (one module per anomaly class)."""

from strategies._internal.formats import payload_spans  # noqa: F401  (fuzzer.harnesses.parser.schedule imports it here)
from strategies._internal.operators.textual import SENTINEL  # noqa: F401
