"""Words and names: the derivations semantic operators use to write what a model plausibly writes
(sibling tool names, typos, case conventions, synonyms, numbers in words). Nothing is tool-specific.
"""

from __future__ import annotations

import re
from typing import Optional


_VERB_FAMILIES = (
    ("get", "fetch", "retrieve", "read", "lookup", "query", "load"),
    ("search", "find", "lookup", "query", "list", "browse"),
    ("list", "get", "search", "fetch", "show"),
    ("create", "add", "make", "new", "insert", "register"),
    ("book", "reserve", "schedule", "create", "make"),
    ("update", "edit", "modify", "set", "change", "patch"),
    ("delete", "remove", "cancel", "drop", "destroy"),
    ("cancel", "delete", "remove", "abort"),
    ("send", "post", "submit", "dispatch", "deliver", "compose"),
    ("calculate", "compute", "evaluate", "solve", "calc"),
    ("check", "verify", "validate", "get"),
    ("run", "execute", "invoke", "start"),
    ("convert", "translate", "transform"),
)
_VERBS = {v: fam for fam in reversed(_VERB_FAMILIES) for v in fam}
#: verbs a model swaps in for any action (search_flights -> book_flights / cancel_flight)
_OTHER_ACTIONS = ("get", "list", "create", "update", "cancel", "book", "delete", "check")
_NOUN_SIBLINGS = {
    "weather": ("forecast", "temperature", "climate"),
    "flight": ("ticket", "trip", "fare", "airfare"), "flights": ("tickets", "trips", "fares"),
    "hotel": ("room", "accommodation", "lodging"), "hotels": ("rooms", "accommodations"),
    "email": ("mail", "message"), "emails": ("mails", "messages"), "mail": ("email", "message"),
    "message": ("email", "text", "sms"), "messages": ("emails", "texts"),
    "user": ("account", "profile", "customer"), "users": ("accounts", "profiles"),
    "file": ("document", "doc"), "files": ("documents", "docs"), "document": ("file", "doc"),
    "event": ("meeting", "appointment"), "events": ("meetings", "appointments"),
    "meeting": ("event", "appointment"), "order": ("purchase", "transaction"),
    "product": ("item", "article"), "products": ("items", "articles"), "price": ("quote", "cost"),
    "stock": ("share", "ticker"), "time": ("date", "clock"), "news": ("headlines", "articles"),
    "reservation": ("booking",), "booking": ("reservation",), "restaurant": ("table", "venue"),
    "location": ("place", "address"), "contact": ("person", "recipient"), "task": ("todo", "job"),
}
_NAME_SUFFIXES = ("info", "details", "data", "v2")


def split_words(name: str) -> tuple:
    """``(words, style)``: ``get_weather`` -> (["get", "weather"], "snake"); handles camel, Pascal,
    kebab, dotted and UPPER_SNAKE so a derived name keeps the original convention."""
    if "_" in name:
        style = "upper" if name.isupper() else "snake"
        parts = name.split("_")
    elif "-" in name:
        style, parts = "kebab", name.split("-")
    elif "." in name:
        style, parts = "dotted", name.split(".")
    else:
        parts = re.findall(r"[A-Z]+(?=[A-Z][a-z]|\d|$)|[A-Z]?[a-z]+|\d+|[A-Z]+", name) or [name]
        style = "pascal" if name[:1].isupper() else ("camel" if len(parts) > 1 else "snake")
    return [p.lower() for p in parts if p], style


def join_words(words: list, style: str) -> str:
    words = [w for w in words if w]
    if not words:
        return ""
    if style == "upper":
        return "_".join(w.upper() for w in words)
    if style == "kebab":
        return "-".join(words)
    if style == "dotted":
        return ".".join(words)
    if style == "pascal":
        return "".join(w.capitalize() for w in words)
    if style == "camel":
        return words[0] + "".join(w.capitalize() for w in words[1:])
    return "_".join(words)


def _singular(word: str) -> Optional[str]:
    if len(word) > 3 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return None


def hallucinated_names(name: str) -> list:
    """Plausible sibling names a model invents for ``name`` (not filtered against a registry).

    Built from the name's own words: a verb swapped for a synonym or another action, the noun
    swapped for a related noun or (un)pluralised, a qualifier added. Nothing is specific to a tool.
    """
    words, style = split_words(name)
    out: list = []
    verb, rest = words[0], words[1:]
    if verb in _VERBS and rest:
        family = [v for v in _VERBS[verb] if v != verb]
        out += [join_words([v] + rest, style) for v in family]
        for noun in _NOUN_SIBLINGS.get(rest[-1], ()):
            out.append(join_words([verb] + rest[:-1] + [noun], style))
        singular = _singular(rest[-1])
        for v in _OTHER_ACTIONS:
            if v != verb:
                out.append(join_words([v] + rest, style))
                if singular:
                    out.append(join_words([v] + rest[:-1] + [singular], style))
        if singular:
            out.append(join_words([verb] + rest[:-1] + [singular], style))
        else:
            out.append(join_words([verb] + rest[:-1] + [rest[-1] + "s"], style))
    elif verb in _VERBS:  # a bare verb: calculate -> compute, calculator, calculate_expression
        out += [join_words([v], style) for v in _VERBS[verb] if v != verb]
        if verb.endswith("ate"):
            out.append(join_words([verb[:-3] + "ator"], style))
        out += [join_words([verb, "expression"], style), join_words([verb, "value"], style)]
    else:  # a noun phrase: weather -> get_weather
        out += [join_words(["get"] + words, style), join_words(["fetch"] + words, style)]
        for noun in _NOUN_SIBLINGS.get(words[-1], ()):
            out.append(join_words(words[:-1] + [noun], style))
    out += [join_words(words + [s], style) for s in _NAME_SUFFIXES]
    return [n for n in dict.fromkeys(out) if n and n != name]


def typo_names(name: str) -> list:
    """Every one-keystroke typo of ``name``: a letter dropped, two neighbours swapped, a letter doubled."""
    drops, swaps, doubles = [], [], []
    for i, ch in enumerate(name):
        if ch.isalpha() and len(name) > 2:
            drops.append(name[:i] + name[i + 1:])
            doubles.append(name[:i] + ch + name[i:])
        if i + 1 < len(name) and ch.isalpha() and name[i + 1].isalpha() and ch != name[i + 1]:
            swaps.append(name[:i] + name[i + 1] + ch + name[i + 2:])
    return [n for n in dict.fromkeys(drops + swaps + doubles) if n != name]


def case_changed_names(name: str) -> list:
    """The name in other naming conventions: GetWeather, getWeather, GET_WEATHER, Get_Weather, get-weather."""
    words, _ = split_words(name)
    out = [join_words(words, "pascal"), join_words(words, "camel"), join_words(words, "upper"),
           "_".join(w.capitalize() for w in words), join_words(words, "snake"), join_words(words, "kebab"),
           name.lower(), name.upper(), name[:1].upper() + name[1:]]
    return [n for n in dict.fromkeys(out) if n and n != name]





_ONES = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
         "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
         "nineteen")
_TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")


def number_words(n: int) -> str:
    """English words for an integer (|n| < 10**12): 21 -> "twenty-one", -3 -> "minus three"."""
    if n < 0:
        return "minus " + number_words(-n)
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("-" + _ONES[n % 10] if n % 10 else "")
    if n < 1000:
        return _ONES[n // 100] + " hundred" + (" and " + number_words(n % 100) if n % 100 else "")
    for size, word in ((10 ** 9, "billion"), (10 ** 6, "million"), (1000, "thousand")):
        if n >= size:
            return (number_words(n // size) + " " + word
                    + (" " + number_words(n % size) if n % size else ""))
    return str(n)


#: Synonyms models substitute for common parameter words.
_SYNONYMS = {
    "city": ("location", "city_name", "place"), "location": ("city", "place", "address"),
    "date": ("day", "when", "departure_date"), "day": ("date",), "time": ("datetime", "hour"),
    "recipients": ("to", "recipient", "emails"), "recipient": ("to", "email"), "to": ("recipients", "recipient"),
    "subject": ("title", "topic"), "body": ("message", "content", "text"), "message": ("body", "text"),
    "text": ("content", "body"), "content": ("text", "body"), "query": ("q", "search", "term"),
    "expression": ("expr", "formula", "equation"), "origin": ("from", "source", "departure"),
    "destination": ("to", "dest", "arrival"), "from": ("origin", "source"), "source": ("origin", "from"),
    "unit": ("units", "scale"), "units": ("unit", "system"), "name": ("title", "full_name"),
    "title": ("name", "subject"), "id": ("identifier", "key"), "count": ("number", "num", "quantity"),
    "limit": ("max_results", "count", "top_k"), "guests": ("people", "num_guests"),
    "passengers": ("travelers", "num_passengers", "people"), "adults": ("guests", "people"),
    "email": ("email_address", "mail"), "phone": ("phone_number", "tel"), "url": ("link", "uri"),
    "path": ("file", "filename"), "file": ("path", "filename"), "amount": ("value", "sum"),
    "currency": ("currency_code",), "language": ("lang", "locale"), "description": ("desc", "details"),
    "check_in": ("checkin", "arrival_date", "start_date"), "check_out": ("checkout", "departure_date", "end_date"),
    "start": ("begin", "from"), "end": ("finish", "to"), "nights": ("duration", "num_nights"),
    "price": ("cost", "amount"), "address": ("location", "addr"), "cc": ("copy", "carbon_copy"),
    "precision": ("decimals", "digits"), "class": ("cabin", "tier"), "cabin": ("class", "seat_class"),
    "rooms": ("num_rooms", "room_count"), "user": ("username", "user_id"),
}


def synonyms(key: str) -> list:
    """Names a model may use instead of ``key``: bank synonyms by word, then generic fallbacks."""
    words, style = split_words(key)
    out: list = list(_SYNONYMS.get(key.lower(), ()))
    for i, word in enumerate(words):
        for syn in _SYNONYMS.get(word, ()):
            if set(split_words(syn)[0]) & (set(words) - {word}):
                continue  # departure_date -> departure_departure_date
            out.append(join_words(words[:i] + [syn] + words[i + 1:], style))
    singular = _singular(words[-1]) if words else None
    if singular:  # recipients -> recipient
        out.append(join_words(words[:-1] + [singular], style))
    if not out:  # no known word: the generic renames models make
        out += [join_words(words + ["value"], style), join_words(words + ["name"], style)]
    return [n for n in dict.fromkeys(out) if n and n != key]
