"""The executor harness: a tool executor under injected faults (retries, backoff, breaker, fallback)."""
