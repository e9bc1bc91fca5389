"""Fold a stream's events into what a client ends up with: calls, content, reasoning.

Why here and once: every oracle (:mod:`.checks`) judges the folded result, and the folding is
what a careful client does (vLLM's tests rebuild calls the same way): content and reasoning are
the concatenation of their deltas; a call is opened by its start event (name, id), its arguments
are the concatenation of its argument fragments, decoded as JSON at the end. Whatever breaks the
event grammar on the way (a second start for one index, arguments for a call never started or
already ended, an index that skips ahead) is noted as it is met,
with the step, and folding goes on as a lenient client would.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Optional

#: Decoded arguments that were not a JSON object: the raw text, kept apart so the comparison with
#: the truth fails and says why.
NOT_JSON = "<arguments not JSON>"


@dataclass
class Folded:
    """What a client assembled from one stream."""

    calls: list = field(default_factory=list)  # [{"name", "arguments"}] by index
    raw_arguments: list = field(default_factory=list)  # the arguments text of each call
    ids: list = field(default_factory=list)  # the id each call was given (None: shape without ids)
    content: str = ""
    reasoning: str = ""
    #: (kind, step, words) of each break of the event grammar, in order
    grammar: list = field(default_factory=list)
    #: (call index, step) of arguments that were complete JSON, followed by more arguments
    reopened: list = field(default_factory=list)
    #: content emitted after each feed step (lengths), for the flush oracle
    content_after: list = field(default_factory=list)
    #: the step (0-based feed index) of the first call start, or None
    first_start: Optional[int] = None

    def result(self) -> tuple:
        """The comparable result (calls as JSON, content, reasoning)."""
        return (json.dumps(self.calls, sort_keys=True, ensure_ascii=False, default=repr), self.content,
                self.reasoning)


def decode_arguments(text: str) -> Any:
    """The arguments value of a call's text: a JSON object, else :data:`NOT_JSON` plus the text.
    No arguments at all (``""``) is not ``{}``: a call whose arguments never came is not complete."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return f"{NOT_JSON} {text[:200]}"
    return value if isinstance(value, dict) else f"{NOT_JSON} {text[:200]}"


def fold(steps: list, finish: list) -> Folded:
    """Fold ``steps`` (the normalized events of each ``feed``) and ``finish`` (those of
    ``finish()``)."""
    out = Folded()
    names: dict = {}
    ids: dict = {}
    args: dict = {}
    ended: set = set()
    complete_at: dict = {}
    content: list = []
    reasoning: list = []
    content_len = 0
    grammar = out.grammar
    for step, events in enumerate(list(steps) + [finish]):
        for event in events:
            kind = event[0]
            if kind == "text":
                content.append(event[1])
                content_len += len(event[1])
            elif kind == "reasoning":
                reasoning.append(event[1])
            elif kind == "start":
                index, call_id, name = event[1], event[2], event[3]
                if index in names:
                    what = "name" if name else "id"
                    grammar.append(("restart", step, f"call {index} started again ({what} emitted twice)"))
                    if name and not names[index]:
                        names[index] = name
                    continue
                expected = len(names)
                if index != expected:
                    grammar.append(("index", step, f"call index {index} where {expected} was next"))
                if not name:
                    grammar.append(("noname", step, f"call {index} started without a name"))
                if call_id == "":
                    grammar.append(("noid", step, f"call {index} started without an id"))
                names[index], ids[index] = name, call_id
                args.setdefault(index, [])
                if out.first_start is None:
                    out.first_start = step
            elif kind == "args":
                index = event[1]
                if index not in names:
                    grammar.append(("orphan", step, f"arguments for call {index}, which was never started"))
                    names[index], ids[index] = "", None
                    args.setdefault(index, [])
                elif index in ended:
                    grammar.append(("after_end", step, f"arguments for call {index} after it ended"))
                fragment = event[2]
                if index in complete_at and fragment.strip():
                    out.reopened.append((index, complete_at.pop(index)))
                args[index].append(fragment)
                if fragment.rstrip().endswith("}"):  # only then can the text so far be a whole object
                    so_far = "".join(args[index])
                    if so_far.lstrip().startswith("{"):
                        try:
                            json.loads(so_far)
                        except (ValueError, RecursionError):
                            pass
                        else:
                            complete_at[index] = step
            elif kind == "end":
                index = event[1]
                if index not in names:
                    grammar.append(("orphan_end", step, f"call {index} ended but never started"))
                elif index in ended:
                    grammar.append(("end_twice", step, f"call {index} ended twice"))
                ended.add(index)
        if step < len(steps):
            out.content_after.append(content_len)
    for index in sorted(names):
        text = "".join(args.get(index, ()))
        out.calls.append({"name": names[index], "arguments": decode_arguments(text)})
        out.raw_arguments.append(text)
        out.ids.append(ids.get(index))
    out.content, out.reasoning = "".join(content), "".join(reasoning)
    return out


__all__ = ["Folded", "NOT_JSON", "decode_arguments", "fold"]
