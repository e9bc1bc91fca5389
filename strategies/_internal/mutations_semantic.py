"""Compatibility: the names other packages import from here. The semantic operators now live in
:mod:`strategies._internal.operators` (one module per anomaly class), the word derivations in
:mod:`strategies._internal.operators.words`."""

from strategies._internal.operators.constraint_violation import is_multiple  # noqa: F401
from strategies._internal.operators.injection_payload import PAYLOADS, fake_calls, payload_texts  # noqa: F401
from strategies._internal.operators.words import (  # noqa: F401
    case_changed_names, hallucinated_names, join_words, number_words, split_words, synonyms, typo_names,
)
