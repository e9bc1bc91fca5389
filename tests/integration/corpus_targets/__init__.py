"""Small targets and helpers for the end-to-end tests of the corpus, the gate and the differential runner.

The targets are real parsers the CLI loads by ``M:A`` in its worker processes; the helpers run the
``fuzz`` command as a subprocess and judge a target in-process, independently of the engine's
workers, so the tests check the product's claims instead of repeating its code path.
"""
