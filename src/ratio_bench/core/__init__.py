"""The bottom layer: errors, atomic writes and artefact folders, bounded YAML, the relations, shipped data.

It imports nothing else of ``ratio_bench`` (``tests/test_architecture.py`` enforces it), so every stage can use it.
"""
