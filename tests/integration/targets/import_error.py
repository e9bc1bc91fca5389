"""A target module that fails while being imported (a usage error for the CLI: exit 2, one line)."""

raise RuntimeError("this parser module cannot be imported")


def parse(text):  # pragma: no cover - never reached
    return []
