"""Operators of the ``unexpected_argument`` class (semantic: the truth is the calls as written). An argument the schema does not allow: extra, renamed, wrapped.
"""

from __future__ import annotations

from typing import Any, Callable

from strategies._internal.mutator import Mutation, MutationContext, NotApplicable, mutator
from strategies._internal.schemainfo import format_path, get_at, locate, schema_info
from strategies.json_values import copy_json
from strategies._internal.operators.calls import _emit, _short, _tool_call_indices, reads_as_string
from strategies._internal.operators.words import join_words, split_words, synonyms


#: Extra arguments models add on their own, simplest first.
_EXTRA_ARGUMENTS = (
    ("format", "json"), ("verbose", True), ("units", "metric"), ("language", "en"), ("limit", 10),
    ("timeout", 30), ("debug", False), ("confirm", True), ("api_version", "v2"), ("user_id", "12345"),
    ("options", {}), ("notes", "as requested by the user"),
)
_WRAPPERS = ("params", "parameters", "input", "arguments", "kwargs", "args")


def _objects_present(ctx: MutationContext, *, forbidden_only: bool = True) -> list:
    """(call index, ObjectInfo, concrete path) of every object value present in the calls."""
    info = schema_info(ctx.tool)
    out = []
    for ci in _tool_call_indices(ctx):
        arguments = ctx.calls[ci]["arguments"]
        for obj in info.objects:
            if forbidden_only and not obj.extra_forbidden:
                continue
            for concrete in locate(arguments, obj.path):
                if isinstance(get_at(arguments, concrete), dict):
                    out.append((ci, obj, concrete))
    return out


def _forbids_extra(tool: Any) -> bool:
    return any(o.extra_forbidden for o in schema_info(tool).objects)


def _forbids_extra_with_properties(tool: Any) -> bool:
    """Some object forbids extras and declares properties (something to rename)."""
    return any(o.extra_forbidden and o.properties for o in schema_info(tool).objects)


@mutator("extra_argument", anomaly_class="unexpected_argument", applies=_forbids_extra)
def extra_argument(source: Any, ctx: MutationContext) -> Mutation:
    """An argument the schema does not declare ("verbose": true, "units": "metric")."""
    sites = []
    for ci, obj, concrete in _objects_present(ctx):
        present = get_at(ctx.calls[ci]["arguments"], concrete)
        extras = [(k, v) for k, v in _EXTRA_ARGUMENTS if k not in present and not obj.declares(k)
                  and not reads_as_string(ctx, concrete + (k,), v)]
        if extras:
            sites.append((ci, concrete, extras))
    if not sites:
        raise NotApplicable("no object that forbids extra arguments")
    ci, concrete, extras = source.choice(sites)
    key, value = source.choice(extras)
    new_calls = copy_json(ctx.calls)
    target = get_at(new_calls[ci]["arguments"], concrete)
    items = list(target.items())
    position = len(items) - source.integer(0, len(items))  # 0 = appended at the end
    items.insert(position, (key, copy_json(value)))
    target.clear()
    target.update(items)
    where = format_path(concrete + (key,))
    return _emit(ctx, new_calls, f"extra argument {where}={_short(value)} added")


def _rename_argument(source: Any, ctx: MutationContext, names: Callable[[str], list], kind: str) -> Mutation:
    sites = []
    for ci, obj, concrete in _objects_present(ctx):
        present = get_at(ctx.calls[ci]["arguments"], concrete)
        for key in present:
            if reads_as_string(ctx, concrete + (key,), present[key]):
                continue  # undeclared under its new name, it reads as the raw string
            options = [n for n in names(key) if n and n not in present and not obj.declares(n)]
            if options:
                sites.append((ci, concrete, key, options))
    if not sites:
        raise NotApplicable(f"no argument to rename ({kind})")
    ci, concrete, key, options = source.choice(sites)
    new_key = source.choice(options)
    new_calls = copy_json(ctx.calls)
    target = get_at(new_calls[ci]["arguments"], concrete)
    items = [(new_key if k == key else k, v) for k, v in target.items()]
    target.clear()
    target.update(items)
    return _emit(ctx, new_calls, f"argument {format_path(concrete + (key,))} renamed to {new_key!r} ({kind})")


@mutator("renamed_argument", anomaly_class="unexpected_argument", applies=_forbids_extra_with_properties)
def renamed_argument(source: Any, ctx: MutationContext) -> Mutation:
    """An argument under a plausible synonym (city -> location, recipients -> to)."""
    return _rename_argument(source, ctx, synonyms, "synonym")


@mutator("argument_case_changed", anomaly_class="unexpected_argument",
         applies=_forbids_extra_with_properties)
def argument_case_changed(source: Any, ctx: MutationContext) -> Mutation:
    """An argument name in another case convention (departure_date -> departureDate)."""
    def names(key: str) -> list:
        words, style = split_words(key)
        out = [join_words(words, s) for s in ("camel", "snake", "pascal", "kebab")]
        out += [key[:1].upper() + key[1:], key.upper()]
        return [n for n in dict.fromkeys(out) if n != key]

    return _rename_argument(source, ctx, names, "case")


@mutator("wrapped_arguments", anomaly_class="unexpected_argument", formats=lambda fmt: not fmt.schema_typed,
         applies=lambda tool: schema_info(tool).extra_forbidden and bool(schema_info(tool).root.properties))
def wrapped_arguments(source: Any, ctx: MutationContext) -> Mutation:
    """The arguments nested one level too deep ({"params": {...}})."""
    # not in a format typed by the schema alone: the wrapper, undeclared, reads as the raw string
    root = schema_info(ctx.tool).root
    indices = [i for i in _tool_call_indices(ctx) if ctx.calls[i]["arguments"]]
    wrappers = [w for w in _WRAPPERS if not root.declares(w)]
    if not indices or not wrappers or not root.extra_forbidden:
        raise NotApplicable("nothing to wrap")
    ci = source.choice(indices)
    wrapper = source.choice(wrappers)
    new_calls = copy_json(ctx.calls)
    new_calls[ci]["arguments"] = {wrapper: new_calls[ci]["arguments"]}
    return _emit(ctx, new_calls, f"arguments wrapped in {wrapper!r}")
