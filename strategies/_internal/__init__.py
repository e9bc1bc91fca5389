"""Implementation modules of :mod:`strategies`; import the public names from ``strategies``."""
