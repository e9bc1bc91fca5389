"""Bundled example targets."""
