"""An OpenAI chunk accumulator (SDK chunks or the raw SSE bytes) with a planted bug: each raw chunk
is decoded on its own with ``errors="ignore"``, so a UTF-8 sequence cut between two network
chunks is lost (a multi-byte character in the arguments vanishes). Correct for ASCII, and for
any cut that is not inside a multi-byte character."""

import json


def _events(chunks):
    buf = b""
    for raw in chunks:
        buf += raw.decode("utf-8", errors="ignore").encode("utf-8")  # the planted bug
        while b"\n\n" in buf:
            event, buf = buf.split(b"\n\n", 1)
            for line in event.decode("utf-8").split("\n"):
                if line.startswith("data:") and line[5:].strip() != "[DONE]":
                    yield json.loads(line[5:].strip())


def accumulate(chunks):
    calls = {}
    for event in _events(chunks):
        for choice in event.get("choices", []):
            for tc in choice.get("delta", {}).get("tool_calls") or []:
                call = calls.setdefault(tc.get("index", 0), {"name": "", "arguments": ""})
                function = tc.get("function") or {}
                call["name"] = call["name"] or function.get("name") or ""
                call["arguments"] += function.get("arguments") or ""
    return [{"name": c["name"], "arguments": json.loads(c["arguments"] or "{}")} for _i, c in sorted(calls.items())]
