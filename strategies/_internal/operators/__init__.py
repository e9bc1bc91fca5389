"""The built-in mutation operators, one module per anomaly class (the module is named like the class).

Importing this package registers every operator in :data:`strategies._internal.mutator.OPERATORS`.

Every operator states its ground truth by construction (DESIGN.md, "Sample"):

* **faithful** — noise a careful parser may strip or repair: the truth is the original calls (a copy);
* **none** — the text denotes no faithful call (cut mid-value, NaN, an invalid escape, a number out
  of range): the truth is ``None``;
* **as written** — the text really spells different values (a raw control character, a huge string,
  and every semantic class: a wrong type, a missing argument...): the truth is the calls as written;
* **no call** — the text holds no call at all (``degenerate_output``): the truth is ``[]``;
* **composed** — ``stacked_anomalies``: the truth of the composition of their parts.

Each operator declares its rule (``Operator.truth``) and its docstring says it.

Text-level operators share three techniques (:mod:`.textual`), which keep them cheap (the campaign
runs them tens of thousands of times a second) and exact:

* **token edits** — render the valid calls, tokenize a JSON payload (:mod:`strategies._internal.jsontext`)
  and splice a few characters at structural positions; every other byte stays as the format rendered
  it. A JSON document a format embeds as a JSON *string* (OpenAI ``"arguments": "{...}"``) is edited
  inside the string and re-embedded with the same escaping;
* **sentinels** — to change one argument value in the text, put a unique ASCII sentinel into the
  calls, render, and replace the sentinel (with its quotes, however many times the format encoded
  them) by the raw replacement;
* **string multiplication** for the oversized class: huge texts are built in one allocation.

Call-level operators (:mod:`.calls`) transform a copy of the calls and check with
:mod:`strategies._internal.schemainfo` that the new value really breaks the rule its class names.
"""

from strategies._internal.operators import (  # noqa: F401  (registration)
    constraint_violation, degenerate_output, duplicate_call, encoding_error, envelope_error, injection_payload,
    invalid_argument_type, malformed_json, missing_argument, oversized_input, truncated_output, unexpected_argument,
    unknown_function,
)
from strategies._internal.operators import stacked_anomalies  # noqa: F401,E402  (composes the others: last)
