"""toolfuzz fuzzer."""
