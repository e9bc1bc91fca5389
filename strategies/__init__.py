"""toolfuzz strategies: tools, JSON Schema -> Hypothesis, output formats and mutation operators."""
