"""Tools and registries: what the model may call.

A **tool** is a name, a description and the JSON Schema of its arguments. A **registry** is the set
of tools a campaign fuzzes, loaded from an OpenAI ``tools`` list, an Anthropic tools list, an MCP
``tools/list`` result, a plain ``{name: schema}`` mapping (JSON or YAML), or pydantic models.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib
import inspect
import json
import os
import re
import sys
from dataclasses import dataclass, field
from collections.abc import Mapping
from typing import Any, Iterator, Optional

from strategies.errors import InvalidSchema, RegistryError, UnknownName
from strategies.json_schemas import escape_pointer_token, normalize_openapi, resolve_pointer, validator_class
from strategies.json_values import JSON_TYPES, json_type_name


@dataclass(frozen=True)
class Tool:
    name: str
    schema: Mapping[str, Any]  # JSON Schema of the arguments object
    description: str = ""
    #: JSON pointer of the schema in the file it came from, so errors point into that file.
    pointer: str = field(default="", compare=False)

    def __hash__(self) -> int:
        return hash(self.name)



_DIGESTS: dict = {}  # id(registry) -> (registry, digest)


def registry_digest(registry: Any) -> str:
    """Equal for registries with the same tools and schemas, computed once per registry object.

    A worker keeps the registry it has when a visit brings an equal one (its tools' compiled
    generators and validators are cached on the tool objects), and the executor engine judges a
    worker's verdicts only when the worker judged against an equal registry."""
    hit = _DIGESTS.get(id(registry))
    if hit is not None and hit[0] is registry:
        return hit[1]
    tools = {tool.name: tool.schema for tool in registry}
    digest = hashlib.sha1(json.dumps(tools, sort_keys=True, default=repr).encode()).hexdigest()
    if len(_DIGESTS) > 16:
        _DIGESTS.clear()
    _DIGESTS[id(registry)] = (registry, digest)
    return digest

@dataclass
class Registry:
    tools: dict[str, Tool] = field(default_factory=dict)
    source: str = "<built-in>"

    def __getitem__(self, name: str) -> Tool:
        try:
            return self.tools[name]
        except KeyError:
            close = difflib.get_close_matches(name, list(self.tools), n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            known = f" (known: {', '.join(sorted(self.tools))})" if not close and len(self.tools) <= 12 else ""
            raise UnknownName(f"{self.source}: unknown tool {name!r}{hint}{known}") from None

    def __contains__(self, name: object) -> bool:
        return name in self.tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(self.tools.values())

    def __len__(self) -> int:
        return len(self.tools)

    def names(self) -> list[str]:
        """The tool names, in definition order."""
        return list(self.tools)

    def __repr__(self) -> str:
        """How the registry was made: ``builtin_registry()``, ``load_registry('tools.json')``, or its tools."""
        if self.source == "<built-in>":
            return "builtin_registry()"
        if self.source and not self.source.startswith("<"):
            return f"load_registry({self.source!r})"
        names = ", ".join(list(self.tools)[:4]) + (", ..." if len(self.tools) > 4 else "")
        return f"Registry({len(self.tools)} tools: {names})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """Hypothesis prints strategy arguments with its pretty printer: the same short repr."""
        printer.text(repr(self))


# --------------------------------------------------------------------------------------------------
# Loading

_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_ONE = ("additionalProperties", "additionalItems", "not", "if", "then", "else", "contains",
               "propertyNames", "unevaluatedProperties", "unevaluatedItems")
_NON_NEGATIVE = ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties")
_NUMERIC = ("minimum", "maximum", "multipleOf")


def _ptr(token: Any) -> str:
    return "/" + escape_pointer_token(token)


def load_registry(path: Optional[str], *, import_timeout: Optional[float] = None) -> Registry:
    """Load a registry from a JSON/YAML file or a Python reference ``module:attr``; None = built-in.

    Accepted shapes (file or Python object): an OpenAI ``tools`` list (``{"type": "function",
    "function": {...}}``, also wrapped as ``{"tools": [...]}``; legacy ``functions`` lists too), an
    Anthropic tools list (``input_schema``), an MCP ``tools/list`` result (``inputSchema``, optionally
    under ``result``), a plain ``{name: schema}`` mapping. A Python reference may also name a pydantic
    ``BaseModel`` class or a list of them: the tool name is the class's ``__tool_name__`` if set, else
    its class name in snake_case; the description is its docstring; the schema is
    ``model_json_schema()``.

    OpenAI/OpenAPI ``nullable: true`` is rewritten to standard JSON Schema (``null`` added to the type)
    so the generator and jsonschema agree. Bad input raises :class:`RegistryError`/:class:`InvalidSchema`
    with one line naming the file, the tool and the JSON pointer of the problem. ``import_timeout``:
    seconds a Python reference's import may take (None: unbounded); one that never finishes is a
    RegistryError saying where it was stuck.
    """
    if path is None:
        return builtin_registry()
    path = str(path)
    if not os.path.exists(path) and _PYREF.match(path):
        return _from_data(_import_ref(path, import_timeout), path)
    if not os.path.exists(path):
        raise RegistryError("no such file", source=path)
    if os.path.isdir(path):
        raise RegistryError("is a directory, expected a JSON or YAML tools file", source=path)
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise RegistryError(f"not UTF-8 text (byte {exc.start})", source=path) from None
    except OSError as exc:
        raise RegistryError(f"cannot read: {exc.strerror}", source=path) from None
    return _from_data(_parse_text(text, path), path)


_PYREF = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


def _parse_text(text: str, path: str) -> Any:
    lower = path.lower()
    if not text.strip():
        raise RegistryError("the file is empty", source=path)
    if lower.endswith((".yaml", ".yml")):
        return _parse_yaml(text, path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if lower.endswith(".json"):
            raise RegistryError(f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
                                source=path) from None
        json_error = exc
    try:
        return _parse_yaml(text, path)
    except RegistryError:
        raise RegistryError(f"neither JSON nor YAML: {json_error.msg} at line {json_error.lineno} "
                            f"column {json_error.colno}", source=path) from None


def _parse_yaml(text: str, path: str) -> Any:
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        raise RegistryError(f"not valid YAML: {problem}{where}", source=path) from None


def _import_ref(ref: str, timeout: Optional[float] = None) -> Any:
    module_name, attr = ref.split(":", 1)
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        obj: Any = _import_within(module_name, timeout, ref)
    except ModuleNotFoundError as exc:
        raise RegistryError(f"cannot import module {module_name!r}: {exc}", source=ref) from None
    except Exception as exc:  # the user's module failed while importing: say so in one line
        raise RegistryError(f"importing {module_name!r} raised {type(exc).__name__}: {exc}", source=ref) from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            names = [n for n in dir(obj) if not n.startswith("_")]
            close = difflib.get_close_matches(part, names, n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise RegistryError(f"{module_name!r} has no attribute {attr!r}{hint}", source=ref)
        obj = getattr(obj, part)
    return obj


def _import_within(module_name: str, timeout: Optional[float], ref: str) -> Any:
    """``importlib.import_module``, given at most ``timeout`` seconds: the import runs in a thread
    (daemon: one that never ends does not keep the process alive) and, past the timeout, is left
    where it is stuck, which the error names (a module waiting at import time for a server, a lock,
    input: ``--budget`` must still be a limit)."""
    if timeout is None:
        return importlib.import_module(module_name)
    import threading

    done: dict = {}

    def work() -> None:
        try:
            done["module"] = importlib.import_module(module_name)
        except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
            done["error"] = exc

    thread = threading.Thread(target=work, name="toolfuzz-import-tools", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        frame = sys._current_frames().get(thread.ident)
        where = ""
        while frame is not None:  # the innermost frame outside the import system
            name = frame.f_code.co_filename
            if "importlib" not in name and not name.startswith("<frozen"):
                where = f"stuck at {os.path.basename(name)} line {frame.f_lineno} in {frame.f_code.co_name}: "
                break
            frame = frame.f_back
        raise RegistryError(f"importing {module_name!r} did not finish within {timeout:g} s "
                            f"({where}does the module wait for something at import time?)", source=ref)
    if "error" in done:
        raise done["error"]
    return done["module"]


def _is_model(obj: Any) -> bool:
    try:
        from pydantic import BaseModel
    except ImportError:  # pragma: no cover - pydantic is a dependency
        return False
    return isinstance(obj, type) and issubclass(obj, BaseModel)


def _snake(name: str) -> str:
    name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()


def _model_tool(model: Any, source: str, pointer: str) -> tuple[str, Any, str, str]:
    name = getattr(model, "__tool_name__", None) or _snake(model.__name__)
    try:
        schema = model.model_json_schema()
    except Exception as exc:
        raise InvalidSchema(f"pydantic cannot build the JSON Schema: {type(exc).__name__}: {exc}",
                            source=source, tool=name, pointer=pointer) from None
    description = inspect.cleandoc(model.__doc__) if model.__doc__ else schema.get("description", "")
    return name, schema, description, pointer


def _entries(data: Any, source: str) -> list[tuple[str, Any, str, str]]:
    """(name, schema, description, pointer of the schema) for every tool in a loaded structure."""
    if _is_model(data):
        return [_model_tool(data, source, "")]
    if isinstance(data, Mapping):
        if isinstance(data.get("tools"), list):
            return _list_entries(data["tools"], source, "/tools")
        if isinstance(data.get("functions"), list):
            return _list_entries(data["functions"], source, "/functions")
        result = data.get("result")
        if isinstance(result, Mapping) and isinstance(result.get("tools"), list):
            return _list_entries(result["tools"], source, "/result/tools")
        if _looks_like_tool(data):
            return _list_entries([data], source, "")
        out = []
        for name, schema in data.items():
            pointer = _ptr(name)
            if not isinstance(name, str) or not name:
                raise RegistryError("tool name must be a non-empty string", source=source, pointer=pointer)
            if _is_model(schema):
                out.append((name, schema.model_json_schema(), inspect.cleandoc(schema.__doc__ or ""), pointer))
                continue
            if not isinstance(schema, (Mapping, bool)):
                raise InvalidSchema(f"schema must be an object or a boolean, got {_kind(schema)}",
                                    source=source, tool=name, pointer=pointer)
            description = schema.get("description", "") if isinstance(schema, Mapping) else ""
            out.append((name, schema, description if isinstance(description, str) else "", pointer))
        return out
    if isinstance(data, (list, tuple)):
        return _list_entries(list(data), source, "")
    raise RegistryError(f"expected a tools list or a {{name: schema}} mapping, got {_kind(data)}", source=source,
                        pointer="")


def _looks_like_tool(item: Mapping) -> bool:
    return "name" in item and any(k in item for k in ("parameters", "input_schema", "inputSchema")) or (
        item.get("type") == "function" and isinstance(item.get("function"), Mapping))


def _list_entries(items: list, source: str, base: str) -> list[tuple[str, Any, str, str]]:
    out = []
    for i, item in enumerate(items):
        pointer = f"{base}/{i}"
        if _is_model(item):
            out.append(_model_tool(item, source, pointer))
            continue
        if not isinstance(item, Mapping):
            raise RegistryError(f"a tool must be an object, got {_kind(item)}", source=source, pointer=pointer)
        body, body_ptr = item, pointer
        if isinstance(item.get("function"), Mapping):
            body, body_ptr = item["function"], pointer + "/function"
        elif "function" in item:
            raise RegistryError(f"'function' must be an object, got {_kind(item['function'])}", source=source,
                                pointer=pointer + "/function")
        name = body.get("name")
        if not isinstance(name, str) or not name.strip():
            what = "has no 'name'" if name is None else f"has an invalid name {name!r}"
            raise RegistryError(f"tool {what} (expected a non-empty string)", source=source,
                                pointer=body_ptr + ("/name" if name is not None else ""))
        for key in ("parameters", "input_schema", "inputSchema"):
            if key in body:
                schema, schema_ptr = body[key], f"{body_ptr}/{key}"
                break
        else:
            schema, schema_ptr = {"type": "object", "properties": {}}, body_ptr
        description = body.get("description") or ""
        if not isinstance(description, str):
            description = str(description)
        out.append((name, schema, description, schema_ptr))
    return out


_kind = json_type_name


def _from_data(data: Any, source: str) -> Registry:
    if isinstance(data, (list, tuple)) and data and all(_is_model(m) for m in data):
        entries = [_model_tool(m, source, f"/{i}") for i, m in enumerate(data)]
    else:
        entries = _entries(data, source)
    tools: dict[str, Tool] = {}
    where: dict[str, str] = {}
    for name, schema, description, pointer in entries:
        if name in tools:
            raise RegistryError(f"duplicate tool name (first defined at {where[name] or '/'})", source=source,
                                tool=name, pointer=pointer)
        check_schema(schema, source=source, tool=name, pointer=pointer)
        tools[name] = Tool(name=name, schema=normalize_openapi(schema), description=description, pointer=pointer)
        where[name] = pointer
    if not tools:
        raise RegistryError("no tools defined", source=source)
    return Registry(tools=tools, source=source)


def check_schema(schema: Any, *, source: Optional[str] = None, tool: Optional[str] = None,
                 pointer: str = "") -> None:
    """Raise :class:`InvalidSchema` (file, tool, JSON pointer, one line) for a malformed schema.

    Common mistakes get specific messages (unknown ``type``, ``required`` not a list of strings,
    unresolvable ``$ref``, invalid ``pattern``); anything else is caught by the draft's metaschema.
    """
    def fail(message: str, at: str) -> None:
        raise InvalidSchema(message, source=source, tool=tool, pointer=at)

    if not isinstance(schema, (Mapping, bool)):
        fail(f"schema must be an object or a boolean, got {_kind(schema)}", pointer)
    if isinstance(schema, Mapping) and schema.get("type") not in (None, "object") and not (
            isinstance(schema.get("type"), list) and "object" in schema["type"]):
        fail(f"the arguments schema must describe an object, got type {schema.get('type')!r}", pointer + "/type")
    stack: list[tuple[Any, str]] = [(schema, pointer)]
    refs: list[tuple[str, str]] = []
    while stack:
        node, at = stack.pop()
        if isinstance(node, bool):
            continue
        if not isinstance(node, Mapping):
            fail(f"schema must be an object or a boolean, got {_kind(node)}", at)
        kind = node.get("type")
        if kind is not None:
            kinds = kind if isinstance(kind, list) else [kind]
            for i, k in enumerate(kinds):
                if not isinstance(k, str) or k not in JSON_TYPES:
                    fail(f"{k!r} is not a JSON type (expected one of {', '.join(JSON_TYPES)})",
                         at + "/type" + (f"/{i}" if isinstance(kind, list) else ""))
        if "required" in node:
            req = node["required"]
            if not isinstance(req, list) or not all(isinstance(r, str) for r in req):
                fail(f"'required' must be a list of strings, got {json.dumps(req, default=str)}", at + "/required")
        if "enum" in node and not isinstance(node["enum"], list):
            fail(f"'enum' must be a list, got {_kind(node['enum'])}", at + "/enum")
        for key in _NON_NEGATIVE:
            if key in node and (isinstance(node[key], bool) or not isinstance(node[key], int) or node[key] < 0):
                fail(f"{key!r} must be a non-negative integer, got {node[key]!r}", f"{at}/{key}")
        for key in _NUMERIC:
            if key in node and (isinstance(node[key], bool) or not isinstance(node[key], (int, float))):
                fail(f"{key!r} must be a number, got {node[key]!r}", f"{at}/{key}")
        if "multipleOf" in node and node["multipleOf"] <= 0:
            fail(f"'multipleOf' must be greater than 0, got {node['multipleOf']!r}", at + "/multipleOf")
        if "pattern" in node:
            try:
                re.compile(node["pattern"])
            except (re.error, TypeError) as exc:
                fail(f"'pattern' {node['pattern']!r} is not a valid regular expression: {exc}", at + "/pattern")
        if "$ref" in node:
            if not isinstance(node["$ref"], str):
                fail(f"'$ref' must be a string, got {_kind(node['$ref'])}", at + "/$ref")
            refs.append((node["$ref"], at + "/$ref"))
        for key in _SCHEMA_MAPS:
            if key in node:
                if not isinstance(node[key], Mapping):
                    fail(f"{key!r} must be an object, got {_kind(node[key])}", f"{at}/{key}")
                stack.extend((v, f"{at}/{key}{_ptr(k)}") for k, v in node[key].items())
        for key in _SCHEMA_LISTS:
            if key in node:
                if not isinstance(node[key], list) or (key != "prefixItems" and not node[key]):
                    fail(f"{key!r} must be a non-empty list of schemas", f"{at}/{key}")
                stack.extend((v, f"{at}/{key}/{i}") for i, v in enumerate(node[key]))
        for key in _SCHEMA_ONE:
            if key in node:
                stack.append((node[key], f"{at}/{key}"))
        if "items" in node:
            items = node["items"]
            if isinstance(items, list):
                stack.extend((v, f"{at}/items/{i}") for i, v in enumerate(items))
            else:
                stack.append((items, f"{at}/items"))
    for ref, at in refs:
        try:
            resolve_pointer(schema, ref)
        except KeyError:
            extra = "" if ref.startswith("#") else " (only local references such as '#/$defs/Name' are supported)"
            fail(f"$ref {ref!r} does not resolve{extra}", at)
    from jsonschema.exceptions import SchemaError

    try:
        validator_class(schema).check_schema(schema)
    except SchemaError as exc:
        sub = "".join(_ptr(p) for p in exc.absolute_path)
        fail(f"{exc.message.splitlines()[0][:200]}", pointer + sub)


# --------------------------------------------------------------------------------------------------
# The built-in registry

_DATE = {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$"}


def _builtin_tools() -> list[Tool]:
    def date(description: str) -> dict:
        return dict(_DATE, description=description + " (YYYY-MM-DD)")

    def tool(name: str, description: str, properties: dict, required: list) -> Tool:
        schema = {"type": "object", "properties": properties, "required": required, "additionalProperties": False}
        return Tool(name=name, schema=schema, description=description, pointer=f"/{name}")

    return [
        tool("get_weather", "Get the current weather or the forecast for a city.", {
            "city": {"type": "string", "minLength": 1, "description": "City name, e.g. 'Paris' or 'Xi'an'"},
            "date": date("Forecast date"),
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "Temperature unit"},
        }, ["city"]),
        tool("search_flights", "Search one-way flights between two cities on a date.", {
            "from_city": {"type": "string", "minLength": 1, "description": "Departure city or airport"},
            "to_city": {"type": "string", "minLength": 1, "description": "Arrival city or airport"},
            "date": date("Departure date"),
            "passenger_count": {"type": "integer", "minimum": 1, "maximum": 9, "description": "Number of passengers"},
            "cabin": {"type": "string", "enum": ["economy", "premium_economy", "business", "first"],
                      "description": "Cabin class"},
        }, ["from_city", "to_city", "date"]),
        tool("book_hotel", "Book a hotel room in a city for a stay.", {
            "city": {"type": "string", "minLength": 1, "description": "City of the hotel"},
            "check_in": date("Check-in date"),
            "check_out": date("Check-out date"),
            "guests": {"type": "integer", "minimum": 1, "description": "Number of guests"},
            "preferences": {
                "type": "object", "description": "Room preferences", "additionalProperties": False,
                "properties": {
                    "smoking": {"type": "boolean", "description": "Smoking room"},
                    "bed": {"type": "string", "enum": ["single", "double", "queen", "king", "twin"]},
                    "floor": {"type": "integer", "description": "Preferred floor"},
                    "amenities": {"type": "array", "items": {"type": "string"},
                                  "description": "Requested amenities, e.g. 'wifi', 'parking'"},
                },
            },
        }, ["city", "check_in", "check_out"]),
        tool("send_email", "Send an email message.", {
            "recipients": {"type": "array", "minItems": 1, "items": {"type": "string", "format": "email"},
                           "description": "Recipient addresses"},
            "subject": {"type": "string", "maxLength": 200, "description": "Subject line"},
            "body": {"type": "string", "description": "Plain-text body"},
            "cc": {"type": "array", "items": {"type": "string", "format": "email"}, "description": "CC addresses"},
        }, ["recipients"]),
        tool("calculate", "Evaluate an arithmetic expression.", {
            "expression": {"type": "string", "description": "Expression such as '2 * (3 + 4)'"},
        }, ["expression"]),
        tool("create_calendar_event", "Create an event in the user's calendar.", {
            "title": {"type": "string", "minLength": 1, "maxLength": 120, "description": "Event title"},
            "start": {"type": "string", "format": "date-time", "description": "Start time (RFC 3339)"},
            "duration_minutes": {"type": "integer", "minimum": 5, "maximum": 1440, "multipleOf": 5},
            "attendees": {"type": "array", "uniqueItems": True, "maxItems": 20,
                          "items": {"type": "string", "format": "email"}},
            "location": {"type": ["string", "null"], "description": "Place or meeting link, null for none"},
            "reminder": {"anyOf": [{"type": "integer", "minimum": 0, "maximum": 10080,
                                    "description": "Minutes before the start"},
                                   {"type": "string", "enum": ["none", "default"]}]},
        }, ["title", "start"]),
        tool("get_stock_price", "Get the latest price of a stock.", {
            "ticker": {"type": "string", "pattern": r"^[A-Z]{1,5}(\.[A-Z]{1,2})?$",
                       "description": "Ticker symbol, e.g. 'AAPL' or 'BRK.B'"},
            "exchange": {"type": "string", "enum": ["NASDAQ", "NYSE", "LSE", "TSE"]},
            "include_history_days": {"type": "integer", "minimum": 0, "maximum": 365},
            "price_threshold": {"type": "number", "exclusiveMinimum": 0, "description": "Alert threshold in USD"},
        }, ["ticker"]),
    ]


def builtin_registry() -> Registry:
    """The default registry: realistic travel, email, calendar, finance and calculator tools."""
    return Registry(tools={t.name: t for t in _builtin_tools()}, source="<built-in>")
