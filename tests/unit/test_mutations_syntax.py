"""The syntactic operators produce real anomalies of their class with the right ground truth.

Every later verdict depends on a sample's truth, so each operator is checked against the strict
reference parser (``fuzzer/targets/reference.py``), a real parser that never repairs:

* faithful-truth operators: the text is rejected as-is, or (when accepted) yields exactly the truth;
  and over many seeds it is rejected at least once (the mutation is real, not a no-op);
* truth-None operators: the text denotes no complete call (the reference rejects it or finds none)
  and, for truncation, the text is a strict prefix of a rendering, cut before that payload's
  ``args_end``;
* as-written operators (raw control character, lone surrogate, huge string): the truth is the
  original calls with exactly that text inserted into one string value.

Two layers: operators driven directly over calls of the built-in registry (so every rendering the
operator made is recorded and the valid text is known), and end to end through ``build_sample`` and
``replay_recipe`` (class, replay, zeroed and truncated choice sequences).
"""

from __future__ import annotations

import ast
import copy
import json

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from fuzzer.targets.reference import parse as reference_parse
from strategies._internal import jsontext
from strategies._internal.build import Unbuildable, build_sample, draw_calls, replay_recipe
from strategies._internal.formats import FORMATS, Unrepresentable, render
from strategies._internal.mutations import OPERATORS, MutationContext, NotApplicable
from strategies._internal.sample import Recipe
from strategies._internal.source import RandomSource
from strategies._internal.tools import Registry, Tool, builtin_registry

REGISTRY = builtin_registry()
TOOLS = list(REGISTRY)
CLASSES = ("malformed_json", "truncated_output", "envelope_error", "encoding_error", "oversized_input",
           "degenerate_output", "stacked_anomalies")
SYN_OPS = sorted(name for name, op in OPERATORS.items() if op.anomaly_class in CLASSES)

#: The truth rules, as each operator declares them (Operator.truth).
FAITHFUL = {name for name in SYN_OPS if OPERATORS[name].truth == "faithful"}
NONE_TRUTH = {name for name in SYN_OPS if OPERATORS[name].truth == "none"}
NO_CALL = {name for name in SYN_OPS if OPERATORS[name].truth == "no_call"}
COMPOSED = {name for name in SYN_OPS if OPERATORS[name].truth == "composed"}
AS_WRITTEN = {name for name in SYN_OPS if OPERATORS[name].truth == "as_written"}
#: Operators whose outputs are valid, with a trap a careless parser falls into (a call written inside
#: the reasoning): the reference reads them, exactly.
VALID_TRAPS = {"call_in_reasoning"}
#: As-written operators that insert text into one string value (the others rewrite the envelope).
INSERTING = {"raw_control_char", "lone_surrogate", "huge_string"}

PAIRS = [(name, fmt) for name in SYN_OPS for fmt in FORMATS
         if any(OPERATORS[name].applies(tool, fmt) for tool in TOOLS)]
#: The formats every operator was first written for get more draws than the later ones.
FIRST_FORMATS = {"json", "openai", "fenced", "hermes", "pythonic", "mistral", "llama3", "react"}


def strict(text: str):
    """The reference parser's calls, or None when it rejects the text."""
    try:
        return reference_parse(text)
    except ValueError:
        return None


def mutate(name: str, tool: Tool, fmt: str, seed: int, *, multi=None, registry=REGISTRY):
    """Run one operator the way ``build_sample`` does, recording every rendering it asked for.

    Returns ``(calls, mutation, renderings)`` or None when the operator found nothing to mutate.
    """
    source = RandomSource(seed)
    chatter = source.boolean(0.3)
    renderings = []

    def render_in_format(calls, style=None):
        rendered = render(fmt, calls, source, chatter=chatter, style=style)
        renderings.append((calls, style, rendered))
        return rendered

    calls = draw_calls(source, registry, tool, multi=multi)
    original = copy.deepcopy(calls)
    ctx = MutationContext(registry=registry, tool=tool, format=fmt, calls=calls, chatter=chatter,
                          render=render_in_format)
    try:
        mutation = OPERATORS[name](source, ctx)
    except (NotApplicable, Unrepresentable):  # what build_sample skips too
        return None
    assert calls == original, "an operator must not modify the context's calls"
    return original, mutation, renderings


def single_insertion(before, after):
    """The one string leaf where ``after`` differs from ``before`` by an insertion: (old, new)."""
    diffs = []

    def walk(a, b):
        if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
            for k in a:
                walk(a[k], b[k])
        elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            for x, y in zip(a, b):
                walk(x, y)
        elif a != b or type(a) is not type(b):
            diffs.append((a, b))

    walk(before, after)
    assert len(diffs) == 1, diffs
    old, new = diffs[0]
    assert isinstance(old, str) and isinstance(new, str) and len(new) > len(old)
    return old, new


def cut_point_ok(text: str, rendered) -> bool:
    """``text`` is a strict prefix of ``rendered`` ending inside a payload piece before its args_end,
    or inside an envelope token (a marker) before the last payload that holds arguments."""
    if not rendered.text.startswith(text) or len(text) >= len(rendered.text):
        return False
    last = max((i for i, p in enumerate(rendered.pieces) if p.role == "payload" and p.args_end), default=-1)
    offset = 0
    for i, piece in enumerate(rendered.pieces):
        if offset <= len(text) < offset + len(piece.text):
            if piece.role == "envelope":
                return i < last and offset < len(text)
            return piece.role == "payload" and piece.args_end is not None and len(text) - offset < piece.args_end
        offset += len(piece.text)
    return False


# --------------------------------------------------------------------------- the registry itself


def test_every_operator_declares_a_known_truth_rule_and_the_sets_cover_them():
    assert FAITHFUL | NONE_TRUTH | NO_CALL | COMPOSED | AS_WRITTEN == set(SYN_OPS)
    assert INSERTING <= AS_WRITTEN and "arguments_missing" in AS_WRITTEN
    assert all(OPERATORS[n].anomaly_class == "truncated_output" for n in NONE_TRUTH if "truncate" in n)
    assert {n for n in SYN_OPS if OPERATORS[n].anomaly_class == "degenerate_output"} == NO_CALL
    assert {n for n in SYN_OPS if OPERATORS[n].anomaly_class == "stacked_anomalies"} == COMPOSED


def test_at_least_26_operators_and_3_per_class():
    assert len(SYN_OPS) >= 26
    for cls in CLASSES:
        assert len([n for n in SYN_OPS if OPERATORS[n].anomaly_class == cls]) >= 3, cls


def test_every_operator_has_a_description_and_declared_formats_exist():
    for name in SYN_OPS:
        op = OPERATORS[name]
        assert op.description and op.description != name
        assert op.formats is None or op.formats <= set(FORMATS), name
        assert any(op.applies(tool, fmt) for tool in TOOLS for fmt in FORMATS), name


def test_envelope_operators_declare_their_formats_precisely():
    for name in SYN_OPS:
        if OPERATORS[name].anomaly_class == "envelope_error":
            assert len(OPERATORS[name].formats) < len(FORMATS), name
    assert OPERATORS["unclosed_tag"].formats == {"hermes", "qwen3_xml", "llama_function", "deepseek", "deepseek:v3.1",
                                                 "deepseek:v3.2", "glm:4.5", "glm:4.7", "kimi:k2", "gemma:4"}
    assert OPERATORS["fence_language"].formats == {"fenced", "deepseek"}
    assert OPERATORS["mistral_tag_error"].formats == {"mistral", "mistral:v11"}  # the family, every version
    assert OPERATORS["arguments_key_renamed"].formats == {name for name, f in FORMATS.items() if f.call_object}
    assert "pythonic" not in OPERATORS["trailing_comma"].formats
    assert "qwen3_xml" not in OPERATORS["raw_control_char"].formats  # raw text: escapes mean something else


# --------------------------------------------------------------------------- every operator, every format


@pytest.mark.parametrize("name,fmt", PAIRS, ids=[f"{n}-{f}" for n, f in PAIRS])
def test_operator_truth_against_the_reference_parser(name, fmt):
    op = OPERATORS[name]
    produced = rejected = 0
    per_tool = 4 if fmt in FIRST_FORMATS else 2  # samples per tool; operators that need a value the
    for tool in TOOLS:                           # calls may lack (a literal, a number) try more seeds
        if not op.applies(tool, fmt):
            continue
        made = 0
        for seed in range(12):
            if made >= per_tool:
                break
            result = mutate(name, tool, fmt, seed, multi=seed == 3 or None)
            if result is None:
                continue
            made += 1
            calls, mutation, renderings = result
            produced += 1
            assert mutation.description
            valid_texts = [r.text for c, s, r in renderings if s is None and c == calls]
            assert mutation.text not in valid_texts
            assert mutation.text != render(fmt, calls, RandomSource(seed), chatter=False).text
            got = strict(mutation.text)
            rejected += got is None or got == []
            if name in FAITHFUL:
                assert mutation.calls == calls
                assert mutation.calls is not calls  # a copy: later edits cannot corrupt the truth
                assert got is None or got == calls, (mutation.text[:300], got)
            elif name in NONE_TRUTH:
                assert mutation.calls is None
                assert got is None or got == [], mutation.text[:300]
                if op.anomaly_class == "truncated_output":
                    assert any(cut_point_ok(mutation.text, r) for _, _, r in renderings), mutation.text[-80:]
            elif name in NO_CALL:
                assert mutation.calls == []
                assert got is None or got == [], (mutation.text[:300], got)
            elif name in COMPOSED:  # the last part decides: none, the calls as written, or faithful
                assert got is None or got == [] if mutation.calls is None else got is None or got == mutation.calls, \
                    (mutation.text[:300], got, mutation.calls)
            else:
                if name in INSERTING:
                    single_insertion(calls, mutation.calls)
                assert got is None or got == mutation.calls, (mutation.text[:300], got)
    assert produced, f"{name} never applied in {fmt}"
    if name not in INSERTING and name not in VALID_TRAPS:
        assert rejected, f"{name} in {fmt}: the reference parser accepted every mutation (not a real anomaly)"


@pytest.mark.parametrize("name", sorted(INSERTING))
def test_as_written_truth_holds_exactly_the_inserted_text(name):
    checked = 0
    for tool in TOOLS:
        for fmt in ("json", "hermes", "react", "pythonic", "openai"):
            if not OPERATORS[name].applies(tool, fmt):
                continue
            for seed in range(3):
                result = mutate(name, tool, fmt, seed)
                if result is None:
                    continue
                calls, mutation, _ = result
                old, new = single_insertion(calls, mutation.calls)
                inserted = next(new[i:i + len(new) - len(old)] for i in range(len(old) + 1)
                                if new[:i] == old[:i] and new[i + len(new) - len(old):] == old[i:])
                if name == "raw_control_char":
                    assert len(inserted) == 1 and ord(inserted) < 0x20 and inserted in mutation.text
                elif name == "lone_surrogate":
                    assert len(inserted) == 1 and 0xD800 <= ord(inserted) <= 0xDFFF
                    assert "\\u%04x" % ord(inserted) in mutation.text
                    assert strict(mutation.text) == mutation.calls  # json.loads decodes it exactly so
                else:
                    assert 64_000 <= len(inserted) <= 1_000_000 and inserted in mutation.text
                    if fmt != "pythonic":  # the reference caps dense pythonic payloads
                        assert strict(mutation.text) == mutation.calls
                checked += 1
    assert checked >= 10


# --------------------------------------------------------------------------- hand-written calls, exact text

HAND = Tool("lookup", {"type": "object", "properties": {
    "name": {"type": "string"}, "count": {"type": "integer"}, "exact": {"type": "boolean"},
    "tags": {"type": "array", "items": {"type": "string"}}}})
HAND_REGISTRY = Registry({"lookup": HAND})
HAND_CALLS = [{"name": "lookup", "arguments": {"name": "O'Brien \"Jr\"", "count": 12, "exact": True,
                                               "tags": ["a", "b"], "none": None}}]


def hand(name: str, fmt: str, seed: int, calls=HAND_CALLS):
    source = RandomSource(seed)
    ctx = MutationContext(registry=HAND_REGISTRY, tool=HAND, format=fmt, calls=copy.deepcopy(calls),
                          chatter=False, render=lambda c, style=None: render(fmt, c, source, chatter=False,
                                                                               style=style, layout="usual"))
    return OPERATORS[name](source, ctx)


def test_single_quotes_escape_apostrophes_like_python_repr():
    seen_python = False
    for seed in range(30):
        m = hand("single_quotes", "json", seed)
        assert "'O\\'Brien \"Jr\"'" in m.text or "keys single-quoted" in m.description
        if "Python literals" in m.description and "strings" in m.description:
            assert ast.literal_eval(m.text) == HAND_CALLS[0]  # exactly Python's reading: faithful
            seen_python = True
        assert m.calls == HAND_CALLS
    assert seen_python


def test_python_literals_and_unquoted_keys_are_exact():
    m = hand("python_literals", "json", 0)
    assert "True" in m.text or "None" in m.text
    assert json.loads(m.text.replace("True", "true").replace("None", "null")) == HAND_CALLS[0]
    for seed in range(10):
        m = hand("unquoted_keys", "json", seed)
        assert json.loads(jsontext.splice(m.text, [
            (t.start, t.end, json.dumps(m.text[t.start:t.end]))
            for t in jsontext.analyze(m.text).keys() if t.kind == "w"])) == HAND_CALLS[0]


def test_trailing_comma_and_duplicate_key_only_add_syntax():
    for seed in range(20):
        m = hand("trailing_comma", "hermes", seed)
        payload = m.text[m.text.index("{"):m.text.rindex("}") + 1]
        tokens = jsontext.tokenize(payload)
        pairs = [(a.kind, b.kind) for a, b in zip(tokens, tokens[1:])]
        assert ((",", "}") in pairs) or ((",", "]") in pairs)
        m = hand("duplicate_key", "json", seed)
        pairs = []
        assert json.loads(m.text, object_pairs_hook=lambda p: pairs.append(p) or dict(p)) == HAND_CALLS[0]
        assert any(len(p) != len(dict(p)) for p in pairs)  # a key really is duplicated, same value


def _without_trailing_commas(text: str) -> str:
    tokens = jsontext.tokenize(text)
    return jsontext.splice(text, [(t.start, t.end, "") for t, n in zip(tokens, tokens[1:])
                                  if t.kind == "," and n.kind in "}]"])


def test_openai_arguments_are_edited_inside_the_json_string():
    kinds = set()
    for seed in range(40):
        m = hand("trailing_comma", "openai", seed)
        try:
            message = json.loads(m.text)
        except ValueError:  # the comma is in the envelope document
            kinds.add("outer")
            assert json.loads(_without_trailing_commas(m.text))["tool_calls"][0]["function"]["name"] == "lookup"
            continue
        kinds.add("inner")  # the envelope is valid JSON: the comma is inside the arguments string
        arguments = message["tool_calls"][0]["function"]["arguments"]
        with pytest.raises(ValueError):
            json.loads(arguments)
        assert json.loads(_without_trailing_commas(arguments)) == HAND_CALLS[0]["arguments"]
    assert kinds == {"inner", "outer"}


def test_a_string_argument_that_looks_like_json_is_never_edited_as_a_document():
    calls = [{"name": "lookup", "arguments": {"name": '{"a": [1, 2]}', "count": 1}}]
    for seed in range(40):
        for name in ("trailing_comma", "single_quotes", "json_comments", "unquoted_keys"):
            m = hand(name, "hermes", seed, calls)
            assert '"{\\"a\\": [1, 2]}"' in m.text or "'{\"a\": [1, 2]}'" in m.text, (name, m.text)


def test_smart_quotes_replace_every_structural_quote():
    kinds = set()
    for seed in range(12):
        m = hand("smart_quotes", "hermes", seed)
        payload = m.text.split("\n")[1]
        assert "“" in payload or "„" in payload or "«" in payload
        if "strings quoted" in m.description:  # every string, keys and values
            assert '"' not in payload.replace('\\"', "")
            kinds.add("strings")
        else:
            assert all(f'"{key}"' not in payload for key in ("name", "arguments", "count", "tags"))
            kinds.add("keys")
    assert kinds == {"strings", "keys"}


def test_missing_closing_brace_drops_only_closers_after_the_arguments():
    for seed in range(20):
        m = hand("missing_closing_brace", "mistral", seed)
        valid = render("mistral", HAND_CALLS, RandomSource(0), chatter=False).text
        assert not m.text.rstrip().endswith("]")
        # re-adding the dropped closers restores a document denoting the same calls
        for suffix in ("}]", "]"):
            try:
                read = json.loads(m.text[len("[TOOL_CALLS]"):] + suffix)  # (less the ids Mistral's template writes)
                assert [{k: v for k, v in c.items() if k != "id"} for c in read] == HAND_CALLS
                break
            except ValueError:
                continue
        else:
            pytest.fail(m.text)
        assert valid != m.text


def test_truncation_kinds_cut_where_they_say():
    expectations = {"truncate_after_open": lambda t: t.rstrip()[-1] in "{[",
                    "truncate_after_colon": lambda t: t.rstrip()[-1] == ":",
                    "truncate_after_comma": lambda t: t.rstrip()[-1] == ",",
                    "truncate_in_literal": lambda t: any(w.startswith(t.rsplit(":", 1)[-1].strip(" ["))
                                                         and w != t.rsplit(":", 1)[-1].strip(" [")
                                                         for w in ("true", "false", "null")),
                    "truncate_in_number": lambda t: t[-1] in "0123456789-."}
    for name, check in expectations.items():
        for seed in range(15):
            m = hand(name, "json", seed)
            assert m.calls is None and check(m.text), (name, m.text)
    for seed in range(15):
        m = hand("truncate_in_key", "json", seed)
        partial = m.text[m.text.rfind('"') + 1:]  # an unterminated key string
        assert m.calls is None and m.text[m.text.rfind('"') - 1] in "{, \n"
        assert any(key.startswith(partial) and key != partial
                   for key in ("name", "arguments", "count", "exact", "tags", "none")), m.text


def test_number_truncation_never_leaves_an_equal_number():
    calls = [{"name": "lookup", "arguments": {"count": 1.50, "n": 100, "x": -7}}]
    for seed in range(40):
        m = hand("truncate_in_number", "json", seed, calls)
        number = m.text[m.text.rfind(" ") + 1:]
        try:
            assert float(number) not in (1.5, 100, -7)
        except ValueError:
            pass  # "-" or "1." style prefixes that are no number at all


def test_oversized_sizes_are_in_range_and_cheap():
    m = hand("deep_nesting", "json", 3)
    assert m.calls is None and ("[" * 5000 in m.text or '{"a": ' * 5000 in m.text)
    m = hand("prose_fragment_run", "json", 3)
    run = m.text.split("\n\n")[0]
    assert 5_000 <= len(run) and m.text.endswith(render("json", HAND_CALLS, RandomSource(0), chatter=False).text
                                                 ) or m.calls == HAND_CALLS
    for seed in range(5):
        m = hand("envelope_token_run", "hermes", seed)
        count, fragment = m.description.split(" x ", 1)
        fragment = ast.literal_eval(fragment.split(" before")[0])
        assert 5_000 <= int(count) <= 100_000 and m.text.count(fragment) >= int(count)
        assert m.calls == HAND_CALLS


# --------------------------------------------------------------------------- end to end through build_sample


TRIPLES = [(name, fmt, tool) for name, fmt in PAIRS for tool in TOOLS if OPERATORS[name].applies(tool, fmt)]


def _built(name, fmt, tool, seed):
    try:
        return build_sample(RandomSource(seed), registry=REGISTRY, tool=tool, format=fmt, operator=name)
    except Unbuildable:
        return None


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(TRIPLES), st.integers(0, 2**32))
def test_build_sample_gives_the_class_and_replays_identically(triple, seed):
    name, fmt, tool = triple
    sample = _built(name, fmt, tool, seed)
    assume(sample is not None)  # an operator that never applies fails the filter health check
    assert sample.anomaly_class == OPERATORS[name].anomaly_class and sample.operator == name
    assert (sample.calls is None) == (name in NONE_TRUTH) or name in COMPOSED
    assert (sample.calls == []) == (name in NO_CALL) or name in COMPOSED
    assert replay_recipe(sample.recipe, REGISTRY) == sample


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(TRIPLES), st.integers(0, 2**32), st.data())
def test_shrunk_choice_sequences_build_the_same_class_or_nothing(triple, seed, data):
    name, fmt, tool = triple
    sample = _built(name, fmt, tool, seed)
    assume(sample is not None)
    choices = sample.recipe.choices
    how = data.draw(st.sampled_from(["zero", "prefix", "halve"]))
    if how == "zero":
        shrunk = (0,) * len(choices)
    elif how == "prefix":
        shrunk = choices[:data.draw(st.integers(0, len(choices)))]
    else:
        shrunk = tuple(c // 2 for c in choices)
    recipe = Recipe(**{**sample.recipe.to_json(), "choices": shrunk})
    try:
        again = replay_recipe(recipe, REGISTRY)
    except Unbuildable:
        return
    assert again.anomaly_class == sample.anomaly_class and again.operator == name
    assert (again.calls is None) == (name in NONE_TRUTH) or name in COMPOSED


#: Operators that need a value the simplest call lacks (every optional argument absent), or an
#: argument of a kind the simplest calls have none of.
NEEDS_OPTIONAL_VALUES = {"python_literals", "truncate_in_number", "truncate_in_literal"}


def test_all_zero_choices_build_every_operator_in_every_format():
    """The all-zero choice sequence (where shrinking ends) builds a sample of the operator's class."""
    built = set()
    for name, fmt in PAIRS:
        for tool in TOOLS:
            if not OPERATORS[name].applies(tool, fmt):
                continue
            recipe = Recipe(tool=tool.name, format=fmt, operator=name, choices=())
            try:
                sample = replay_recipe(recipe, REGISTRY)
            except Unbuildable:
                continue
            assert sample.anomaly_class == OPERATORS[name].anomaly_class
            built.add(name)
    assert set(SYN_OPS) - NEEDS_OPTIONAL_VALUES <= built


# --------------------------------------------------------------------------- jsontext


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=20)


def _count(value, kind):
    stack, n = [value], 0
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            n += len(v) if kind == "members" else 1
            stack.extend(v.values())
        elif isinstance(v, list):
            n += 0 if kind == "members" else 1
            stack.extend(v)
    return n


@settings(max_examples=200, deadline=None)
@given(json_values, st.sampled_from([None, 2]), st.booleans())
def test_analyze_finds_every_member_and_container(value, indent, ascii_only):
    text = json.dumps(value, indent=indent, ensure_ascii=ascii_only)
    a = jsontext.analyze(text)
    assert "".join(text[t.start:t.end] for t in a.tokens) == "".join(
        text[t.start:t.end] for t in jsontext.tokenize(text))
    assert all(t.kind != "o" for t in a.tokens)
    assert len(a.members) == _count(value, "members")
    assert len(a.containers) == _count(value, "containers")
    for start, end in a.members:  # every member span is "key": value
        member = json.loads("{" + text[start:end] + "}")
        assert len(member) == 1
    for c in a.containers:
        assert text[c.open] in "{[" and text[c.close] == "}]"["{[".index(text[c.open])]
        if c.last_value_end >= 0:
            assert text[c.last_value_end:c.close].strip() == ""


@given(st.text())
def test_single_quoted_reads_back_in_python(value):
    literal = jsontext.single_quoted(value)
    assert literal[0] == literal[-1] == "'"
    assert ast.literal_eval(literal) == value


@given(st.text())
def test_string_encoder_reproduces_the_encoding(value):
    for ascii_only in (True, False):
        token = json.dumps(value, ensure_ascii=ascii_only)
        encode = jsontext.string_encoder(token, value)
        assert encode is not None and encode(value) == token


def test_tokenizer_is_linear_on_deep_and_long_text():
    text = "[" * 200_000 + "]" * 200_000
    a = jsontext.analyze(text)  # no recursion: would overflow the stack
    assert len(a.containers) == 200_000
