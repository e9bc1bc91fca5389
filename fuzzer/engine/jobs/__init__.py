"""The jobs every command runs: replay, gate, diff and the corpus jobs."""
