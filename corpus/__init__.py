"""toolfuzz corpus."""
