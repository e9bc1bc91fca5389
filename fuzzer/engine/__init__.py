"""The engine every harness runs on: jobs and their events, budget, finding book, confirmation, orders, verdicts and decisions."""
