"""Targets for the CI-promise tests (issue 8): each breaks one promise a CI relies on, or is the
reference parser with exactly one planted behaviour."""

from __future__ import annotations

import zlib

from fuzzer.targets.reference import parse as _reference


def rejects_everything(text):
    """A parser that accepts nothing: every output is a clean rejection."""
    raise ValueError("this parser accepts nothing")


def no_call_ever(text):
    """A parser that never finds a call (returns None for everything)."""
    return None


def returns_text(text):
    """Breaks the target contract: returns the text itself instead of calls."""
    return text


class ParseError(Exception):
    """This package's own rejection type (not a ValueError)."""


def own_error(text):
    """Rejects with its own exception type, which the campaign takes for a crash unless declared."""
    try:
        return _reference(text)
    except ValueError as exc:
        raise ParseError(str(exc)) from None


# -- ten distinct crashes: the first digit of the text picks the function that raises --------------

def _d0(text): raise KeyError(text[:3])
def _d1(text): raise IndexError("index out of range")
def _d2(text): raise TypeError("unsupported operand")
def _d3(text): raise AttributeError("no such attribute")
def _d4(text): raise ZeroDivisionError("division by zero")
def _d5(text): raise LookupError("lookup failed")
def _d6(text): raise UnicodeError("bad unicode")
def _d7(text): raise OverflowError("overflow")
def _d8(text): raise AssertionError("assertion")
def _d9(text): raise NotImplementedError("not implemented")


_BY_DIGIT = [_d0, _d1, _d2, _d3, _d4, _d5, _d6, _d7, _d8, _d9]


def digits(text):
    """Ten crash bugs (one per digit), each shrinking to an input holding one digit."""
    for ch in text:
        if "0" <= ch <= "9":
            _BY_DIGIT[ord(ch) - 48](text)
    return _reference(text)


# -- state between inputs ---------------------------------------------------------------------------

_CACHE: dict = {}


def checksum_cache(text):
    """Caches results in a small table keyed by a checksum of the output: a later output whose
    checksum collides with an earlier one gets the earlier one's calls."""
    key = zlib.crc32(text.encode("utf-8", "surrogatepass")) % 256
    if key in _CACHE:
        hit = _CACHE[key]
        if isinstance(hit, Exception):
            raise hit
        return hit
    try:
        result = _reference(text)
    except ValueError as exc:
        _CACHE[key] = exc
        raise
    _CACHE[key] = result
    return result


def crashes_on_long(text):
    """Crashes only on long inputs of many distinct characters (a reproducer too long for one line)."""
    if len(text) > 1500 and len(set(text)) > 40:
        raise MemoryError("buffer too small")
    return _reference(text)
