"""Hangs with margin: when a stored hang still hangs, and when it is fixed.

A hang is a time measurement, and one run that ends a little under the timeout says little: a
hang shrunk to the least input that still hangs sits at the timeout, and a faster or less loaded
machine finishes it in time. A stored hang ran in 1.55 s against a 2 s timeout on replay, and
``replay --update`` marked the unfixed bug fixed; every gate after that blocked on a false
regression. So the two decisions keep a margin on either side of the timeout:

* a hang is **stored** with margin: the input kept must still hang at :data:`HANG_MARGIN` times
  the timeout (:meth:`fuzzer.harnesses.parser.shrink.FindingShrinker.shrink` checks it, and pads the input's
  repeated run when it does not);
* a hang entry **passes** on replay only when it finishes within :data:`FIXED_SHARE` of the
  timeout, on two runs (:func:`still_hangs`); in between it still counts as hanging.
"""

from __future__ import annotations

from typing import Any, Optional

#: A stored hang must still hang given this many times its timeout.
HANG_MARGIN = 2.0
#: A hang entry passes only when it finishes within this share of the timeout (on two runs).
FIXED_SHARE = 0.5


def still_hangs(outcome: Any, timeout: float) -> Optional[str]:
    """Why a hang entry's input still counts as hanging although the target answered (it took
    more than :data:`FIXED_SHARE` of ``timeout``), or None when it finished well inside it."""
    elapsed = getattr(outcome, "elapsed", 0.0) or 0.0
    if elapsed <= FIXED_SHARE * timeout:
        return None
    return (f"still hanging: it finished in {elapsed:.2f} s, not well inside the {timeout:g} s timeout (a hang "
            f"counts as fixed only within {FIXED_SHARE * timeout:g} s, twice)")


__all__ = ["FIXED_SHARE", "HANG_MARGIN", "still_hangs"]
