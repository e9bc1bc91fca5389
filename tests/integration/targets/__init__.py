"""Small buggy and torture targets run by the campaign tests through the real CLI.

They are loaded by worker processes as ``tests.integration.targets.<module>:<name>``, with the
repository root on PYTHONPATH (see ``tests/conftest.py``).
"""
