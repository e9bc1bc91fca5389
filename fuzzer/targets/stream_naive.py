"""A naive incremental Hermes parser, written the way many are: buffer the text, run a regex over
the buffer on every delta, and stream the arguments with ``partial-json-parser``.

It is an example to fuzz, not to use (``fuzz stream --parser fuzzer.targets.stream_naive:make_parser``);
it needs the ``examples`` extra (``partial-json-parser``). What is wrong with it, as found in the
serving engines' own streaming parsers:

* content is sent as it arrives, so a ``<tool_call>`` cut across deltas leaks ``<tool`` into it;
* the arguments are re-serialized from an optimistic partial parse, which closes strings and
  objects early (``{"city": "Pa"}``), and what was sent cannot be taken back;
* the name is sent as soon as the partial parse has one, even half of it;
* a delta that opens a call only switches modes: a call whose begin and end markers arrive in
  the last delta is dropped;
* the first ``</tool_call>`` ends the call, even inside an argument string;
* ``finish()`` releases nothing: text after the last call, in the last delta, is lost;
* every delta re-parses the whole call so far (quadratic time).
"""

from __future__ import annotations

import json

import partial_json_parser

OPEN, CLOSE = "<tool_call>", "</tool_call>"


class NaiveHermesParser:
    def __init__(self) -> None:
        self.buffer = ""
        self.sent = 0  # characters of the buffer handled as content
        self.in_call = False
        self.call_start = 0
        self.index = 0
        self.name_sent = False
        self.args_sent = ""

    def feed(self, delta: str) -> dict:
        self.buffer += delta
        content, calls = "", []
        if not self.in_call:
            pos = self.buffer.find(OPEN, self.sent)
            if pos < 0:
                content = self.buffer[self.sent:]
                self.sent = len(self.buffer)
                return {"content": content}
            content = self.buffer[self.sent:pos]
            self.sent = pos
            self.in_call, self.call_start = True, pos + len(OPEN)
            return {"content": content}  # the call is parsed from the next delta on
        end = self.buffer.find(CLOSE, self.call_start)
        body = self.buffer[self.call_start:end if end >= 0 else len(self.buffer)].strip()
        obj = partial_json_parser.loads(body) if body else {}
        if isinstance(obj, dict):
            if "name" in obj and not self.name_sent:
                calls.append({"index": self.index, "id": f"call_{self.index}", "type": "function",
                              "function": {"name": obj["name"], "arguments": ""}})
                self.name_sent = True
            if self.name_sent and "arguments" in obj:
                args = json.dumps(obj["arguments"])
                calls.append({"index": self.index, "function": {"arguments": args[len(self.args_sent):]}})
                self.args_sent = args
        if end >= 0:
            self.in_call = False
            self.sent = end + len(CLOSE)
            self.index += 1
            self.name_sent, self.args_sent = False, ""
        return {"content": None, "tool_calls": calls}

    def finish(self) -> None:
        return None


def make_parser() -> NaiveHermesParser:
    return NaiveHermesParser()
