"""A small tool-calling application that records its production traffic (the bundled example).

It has what a real service has: three tools, the parser in production (``parse_v3``, recorded as
parser version ``v3``), the parser change under review (``parse_v4``), an executor (``execute``)
and its next version (``execute_v2``), and a stand-in for the model (:func:`model_output`) that
sends the outputs models really send — clean JSON most of the time, then fences, tags, trailing
commas, Python dicts, truncations, hallucinated tools, numbers as strings, duplicates, several
calls, and now and then something nobody has a name for.

Record 1,000 turns from 4 processes into one database, then look::

    python -m fuzzer.targets.records_app --db calls.db --calls 1000 --processes 4
    fuzz records stats calls.db
    fuzz records pool calls.db
    fuzz replay --records calls.db --target fuzzer.targets.records_app:parse_v4

``parse_v4`` adds a single-quote repair (it fixes Python-dict outputs and breaks apostrophes in
values) and carries two bugs for the injection tests to find: it keeps only the first of
several calls, and it indexes ``arguments`` without checking it is there (KeyError).
``execute_v2`` accepts numbers written as strings where v1 refused them.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any, Optional

from fuzzer.records.recorder import Recorder

TOOLS = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "Current weather in a city.",
        "parameters": {"type": "object", "properties": {
            "city": {"type": "string", "minLength": 1},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
            "required": ["city"], "additionalProperties": False}}},
    {"type": "function", "function": {
        "name": "search_flights", "description": "Flights between two airports on a date.",
        "parameters": {"type": "object", "properties": {
            "origin": {"type": "string", "pattern": "^[A-Z]{3}$"},
            "destination": {"type": "string", "pattern": "^[A-Z]{3}$"},
            "date": {"type": "string", "format": "date"},
            "passengers": {"type": "integer", "minimum": 1, "maximum": 9}},
            "required": ["origin", "destination", "date"], "additionalProperties": False}}},
    {"type": "function", "function": {
        "name": "send_email", "description": "Send an e-mail.",
        "parameters": {"type": "object", "properties": {
            "to": {"type": "string", "format": "email"},
            "subject": {"type": "string"},
            "body": {"type": "string"}},
            "required": ["to", "subject", "body"], "additionalProperties": False}}},
]

recorder = Recorder(parser_version="v3", tools=TOOLS)  # off unless TOOLFUZZ_RECORD=1 or main()


# --------------------------------------------------------------------------------------------
# Parsers

_FENCE = re.compile(r"```(?:json)?\s*(.*?)\s*```", re.S)
_TAG = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.S)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


def _payload(text: str) -> str:
    for pattern in (_TAG, _FENCE):
        found = pattern.findall(text)
        if found:
            return found[0] if len(found) == 1 else "[" + ",".join(found) + "]"
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    return text[start:] if start >= 0 else text


def parse_v3(text: str) -> list:
    """The parser in production: fences and tags stripped, trailing commas repaired."""
    payload = _payload(text)
    try:
        data = json.loads(payload)
    except json.JSONDecodeError:
        data = json.loads(_TRAILING_COMMA.sub(r"\1", payload))
    calls = data if isinstance(data, list) else [data]
    out = []
    for call in calls:
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise ValueError("not a tool call")
        arguments = call.get("arguments", {})
        if not isinstance(arguments, dict):
            raise ValueError("arguments is not an object")
        out.append({"name": call["name"], "arguments": arguments})
    return out


def parse_v4(text: str) -> list:
    """The change under review: also repairs single quotes (and so breaks apostrophes)."""
    payload = _payload(text)
    try:
        data = json.loads(payload)
    except json.JSONDecodeError:
        repaired = _TRAILING_COMMA.sub(r"\1", payload.replace("'", '"'))
        data = json.loads(repaired)
    calls = data if isinstance(data, list) else [data]
    call = calls[0]  # bug: the other calls are dropped
    if not isinstance(call, dict) or not isinstance(call.get("name"), str):
        raise ValueError("not a tool call")
    return [{"name": call["name"], "arguments": call["arguments"]}]  # bug: KeyError without arguments


@recorder.parser
def parse(text: str) -> list:
    """What the application calls (recorded)."""
    return parse_v3(text)


# --------------------------------------------------------------------------------------------
# Tools and executors (deterministic: replay must get the same answers)


def _stable(text: str) -> int:
    return sum(ord(c) * (i + 1) for i, c in enumerate(text)) % 1000


@recorder.tool
def get_weather(city: str, unit: str = "celsius") -> dict:
    if unit not in ("celsius", "fahrenheit"):
        raise ValueError(f"unknown unit {unit!r}")
    celsius = _stable(city) % 35 - 5
    return {"city": city, "temperature": celsius if unit == "celsius" else celsius * 9 // 5 + 32, "unit": unit}


@recorder.tool
def search_flights(origin: str, destination: str, date: str, passengers: int = 1) -> dict:
    if not isinstance(passengers, int) or not 1 <= passengers <= 9:
        raise ValueError(f"passengers must be an integer from 1 to 9, not {passengers!r}")
    base = _stable(origin + destination + date)
    return {"flights": [{"number": f"TF{base + k}", "price": 80 + (base + 37 * k) % 400} for k in range(2)],
            "passengers": passengers}


@recorder.tool
def send_email(to: str, subject: str, body: str) -> dict:
    if "@" not in to:
        raise ValueError(f"not an e-mail address: {to!r}")
    return {"sent": True, "id": f"msg-{_stable(to + subject)}"}


_TOOL_FUNCTIONS = {"get_weather": get_weather, "search_flights": search_flights, "send_email": send_email}


def execute_v1(call: dict) -> Any:
    tool = _TOOL_FUNCTIONS.get(call["name"])
    if tool is None:
        raise LookupError(f"unknown tool {call['name']!r}")
    return tool(**call["arguments"])


@recorder.executor
def execute(call: dict) -> Any:
    """What the application calls (recorded)."""
    return execute_v1(call)


def execute_v2(call: dict) -> Any:
    """The next executor: numbers written as strings are accepted."""
    arguments = {k: int(v) if isinstance(v, str) and v.isdigit() else v for k, v in call["arguments"].items()}
    return execute_v1({"name": call["name"], "arguments": arguments})


# --------------------------------------------------------------------------------------------
# The stand-in model

CITIES = ["Paris", "Tokyo", "Lima", "Cairo", "Oslo", "Quebec", "L'Aquila", "Côte-d'Or", "São Paulo", "Zürich"]
AIRPORTS = ["CDG", "HND", "LIM", "CAI", "OSL", "YQB", "GRU", "ZRH"]
PEOPLE = ["ana@example.com", "bob@example.org", "chen@example.net"]


def _call(rng: random.Random) -> dict:
    kind = rng.random()
    if kind < 0.5:
        arguments = {"city": rng.choice(CITIES)}
        if rng.random() < 0.5:
            arguments["unit"] = rng.choice(["celsius", "fahrenheit"])
        return {"name": "get_weather", "arguments": arguments}
    if kind < 0.85:
        origin, destination = rng.sample(AIRPORTS, 2)
        return {"name": "search_flights", "arguments": {
            "origin": origin, "destination": destination,
            "date": f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}", "passengers": rng.randint(1, 4)}}
    return {"name": "send_email", "arguments": {
        "to": rng.choice(PEOPLE), "subject": "Your trip",
        "body": rng.choice(["See you soon.", "It's booked, call me at +1 555 010 2030 if needed.",
                            "Here's the plan: don't forget your passport."])}}


def model_output(rng: random.Random) -> str:
    """One model output, drawn from the mix production shows."""
    call = _call(rng)
    text = json.dumps(call, ensure_ascii=False)
    roll = rng.random()
    if roll < 0.38:
        return text
    if roll < 0.46:
        return f"```json\n{text}\n```"
    if roll < 0.54:
        return f"<tool_call>\n{text}\n</tool_call>"
    if roll < 0.61:
        return text[:-2] + ",}}" if text.endswith("}}") else text[:-1] + ",}"
    if roll < 0.65:
        return repr(call)  # a Python dict: single quotes
    if roll < 0.70:
        return text[:rng.randint(10, len(text) - 3)]  # cut by the length limit
    if roll < 0.74:
        return json.dumps({"name": rng.choice(["fetch_weather", "get_forecast", "book_flight"]),
                           "arguments": call["arguments"]})
    if roll < 0.79 and call["name"] == "search_flights":
        call["arguments"]["passengers"] = str(call["arguments"]["passengers"])
        return json.dumps(call)
    if roll < 0.82:
        return json.dumps([call, call])
    if roll < 0.87:
        return json.dumps([call, _call(rng)], ensure_ascii=False)
    if roll < 0.89:
        return text[:-1]  # the final brace missing
    if roll < 0.91:
        return json.dumps({"name": call["name"]})  # no arguments at all
    if roll < 0.93:
        arguments = "\n".join(f"  {k}: {v}" for k, v in call["arguments"].items())
        return f"name: {call['name']}\narguments:\n{arguments}"  # YAML: nobody's anomaly class
    if roll < 0.95:
        return "I can't help with that request."
    return text


def reply(calls: list, results: list) -> str:
    if not calls:
        return "Sorry, I could not work out what to do."
    parts = []
    for call, result in zip(calls, results):
        parts.append(f"{call['name']}: {'failed' if isinstance(result, Exception) else 'done'}")
    return "; ".join(parts)


def serve(turns: int, *, seed: int, session: str) -> int:
    """Handle ``turns`` model outputs the way the application does, recording each turn."""
    rng = random.Random(seed)
    for _ in range(turns):
        text = model_output(rng)
        with recorder.turn(session_id=session) as turn:
            try:
                calls = parse(text)
            except Exception:  # noqa: BLE001 - the application answers every turn
                turn.final_reply = reply([], [])
                continue
            results: list = []
            for call in calls:
                try:
                    results.append(execute(call))
                except Exception as exc:  # noqa: BLE001
                    results.append(exc)
            turn.final_reply = reply(calls, results)
    recorder.flush()
    return turns


def _worker(turns: int, seed: int, session: str, db: str) -> None:
    recorder.enable(db)
    serve(turns, seed=seed, session=session)
    recorder.close()


def main(argv: Optional[list] = None) -> int:
    import argparse
    import multiprocessing

    ap = argparse.ArgumentParser(description="Run the example application with recording on.")
    ap.add_argument("--db", required=True, help="records database to write")
    ap.add_argument("--calls", type=int, default=1000, help="model outputs to handle, in total")
    ap.add_argument("--processes", type=int, default=4, help="worker processes sharing the database")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.calls < 1 or args.processes < 1:
        ap.error("--calls and --processes must be at least 1")
    share, extra = divmod(args.calls, args.processes)
    ctx = multiprocessing.get_context("fork" if hasattr(__import__("os"), "fork") else "spawn")
    procs = [ctx.Process(target=_worker, args=(share + (k < extra), args.seed * 1000 + k, f"worker-{k}", args.db))
             for k in range(args.processes)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    failed = [p.exitcode for p in procs if p.exitcode]
    print(f"{args.calls} turns from {args.processes} processes recorded into {args.db}"
          + (f"; {len(failed)} process(es) failed" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
