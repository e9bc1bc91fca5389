"""The bundled reference parser's readers, one module per group of families: what they read with
(:mod:`.reading`), the JSON families, the pythonic list, the tag families and the special-token
families. :mod:`fuzzer.targets.reference` picks one by the first marker in the text."""
