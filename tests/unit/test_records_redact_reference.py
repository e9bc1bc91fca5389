"""The faster redaction checks redact exactly what the previous implementation did.

fuzzer/records/redact.py decides cheaply whether a string or a record could hold anything to
redact (a digit run of nine digits, a rule's literal trigger, an escape) before running the
rules. Those checks only decide whether the rules run, so the output must be the same as the
reference (tests/unit/redact_reference.py, the module before the change) on any text: these
tests draw texts that mix what the rules look for (dates, digit runs with separators, phone and
card numbers, e-mail addresses, API keys, bearer tokens, AWS keys, JSON escapes, non-ASCII
digits) with ordinary text and JSON punctuation.
"""

from __future__ import annotations

import json

from hypothesis import example, given, settings, strategies as st

from fuzzer.records import redact
from fuzzer.records.record import FIELDS
from fuzzer.records.values import dumps_json
from tests.unit import redact_reference as reference

_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
_DIGITS = "0123456789"
_SEPARATORS = " ()+.-"


def _luhn_complete(digits: str) -> str:
    """``digits`` plus the check digit that makes it pass the Luhn test."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 0:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return digits + str((10 - total % 10) % 10)


def _grouped(draw, digits: str) -> str:
    """``digits`` with separators between some of them."""
    out = []
    for ch in digits:
        out.append(ch)
        if draw(st.integers(0, 3)) == 0:
            out.append(draw(st.sampled_from([" ", "-", ".", " - ", "(", ")", "+"])))
    return "".join(out)


_date = st.builds("{}-{:02d}-{:02d}".format, st.integers(1990, 2099), st.integers(1, 12), st.integers(1, 28))
_digit_run = st.text(_DIGITS + _SEPARATORS, min_size=1, max_size=24)
_number = st.integers(0, 10 ** 16).map(str)
_unicode_digits = st.text("٠١٢٣٤٥٦٧٨٩０１２３４５６７８９ -", min_size=1, max_size=14)
_word = st.text(_ALNUM + "_", min_size=1, max_size=12)
_email = st.builds("{}@{}.{}".format, _word, st.text(_ALNUM, min_size=1, max_size=8),
                   st.sampled_from(["com", "co.uk", "io", "x"]))
_token = st.text(_ALNUM + "_-", min_size=4, max_size=44)
_key = st.one_of(
    st.builds("sk-{}".format, _token), st.builds("gh{}_{}".format, st.sampled_from("pousrx"), _token),
    st.builds("xox{}-{}".format, st.sampled_from("abprsz"), _token), st.builds("AIza{}".format, _token),
    st.builds("{} {}".format, st.sampled_from(["Bearer", "bearer", "BEARER", "BeArEr", "Authorization: Bearer"]),
              _token),
    st.builds("{}{}".format, st.sampled_from(["AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "AKIa"]),
              st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", min_size=14, max_size=18)),
    st.builds("{}{}{}".format, st.sampled_from(["aws_secret_access_key = ", "AWS SECRET: ", "aws SeCrEt=", "secret "]),
              st.text(_ALNUM + "/+=", min_size=38, max_size=42), st.sampled_from(["", " ", "x", "\""])),
)


@st.composite
def _phone_or_card(draw) -> str:
    if draw(st.booleans()):
        digits = draw(st.text(_DIGITS, min_size=12, max_size=18))
        return _grouped(draw, _luhn_complete(digits))
    digits = draw(st.text(_DIGITS, min_size=7, max_size=16))
    return draw(st.sampled_from(["", "+", "+1 ", "(555) "])) + _grouped(draw, digits)


_escape = st.one_of(st.just("\\/"), st.builds("\\u{:04x}".format, st.integers(0, 0xFFFF)),
                    st.sampled_from(['"\\u0073k-abcdefXYZabcdefXYZ"', '"a\\/b"', '"\\u0040"', "\\n", "\\\""]))
_punctuation = st.sampled_from(['"', ":", ", ", "{", "}", "[", "]", "=", " ", "\n", "\x00", "é", "°C"])
_fragment = st.one_of(_date, _digit_run, _number, _unicode_digits, _word, _email, _key, _phone_or_card(), _escape,
                      _punctuation, st.text(max_size=8))
texts = st.lists(_fragment, max_size=12).map("".join)


def _redactors(**options) -> tuple:
    return redact.Redactor(**options), reference.Redactor(**options)


_DEFAULT = _redactors()
_CONFIGURED = _redactors(keys=["password", "city"], paths=["$.parsed_calls[*].arguments.token", "$..pin"],
                         patterns={"ticket": r"TCK-\d{4,}"})


@settings(max_examples=400, deadline=None)
@given(st.one_of(texts, _digit_run, _unicode_digits, st.text()))
@example("call +1 (555) 010-2030 on 2026-12-05")
@example("2026-12-05 12345678 1234 5678 9")
@example("٠١٢٣٤٥٦٧٨")
def test_the_digit_run_check_agrees_with_the_reference(text):
    assert redact._nine_digits(text) == reference._nine_digits(text)


@settings(max_examples=400, deadline=None)
@given(texts)
def test_strings_and_free_text_are_redacted_as_the_reference_does(text):
    for new, old in (_DEFAULT, _CONFIGURED):
        assert new.redact_string(text) == old.redact_string(text)
        assert new.redact_text(text) == old.redact_text(text)


def _row(raw: str, arguments: dict, reply: str) -> list:
    """A storage row as the writer thread redacts it (JSON fields encoded)."""
    values = dict.fromkeys(FIELDS)
    values.update(record_id="r1", timestamp="2026-12-01T10:00:00.000000Z", raw_model_output=raw, final_reply=reply,
                  parsed_calls=dumps_json([{"name": "f", "arguments": arguments}]),
                  metadata=None if reply is None else dumps_json({"note": reply}))
    return [values[name] for name in FIELDS]


_arguments = st.dictionaries(st.sampled_from(["q", "token", "pin", "city", "password"]),
                             st.one_of(texts, st.integers(0, 10 ** 12)), max_size=3)


@settings(max_examples=400, deadline=None)
@given(raw=st.one_of(st.none(), texts), arguments=_arguments, reply=st.one_of(st.none(), texts))
@example(raw='{"q": "\\u0073k-abcdefXYZabcdefXYZ"}', arguments={}, reply=None)
def test_records_are_redacted_as_the_reference_does(raw, arguments, reply):
    for new, old in (_DEFAULT, _CONFIGURED):
        mine, theirs = _row(raw, arguments, reply), _row(raw, arguments, reply)
        new.redact_row(mine)
        old.redact_row(theirs)
        assert mine == theirs
        assert new.redact_json(arguments, []) == old.redact_json(arguments, [])
