"""Inspiration search over a Ratio release split or a user's own papers: ``ratio index``, ``search``, ``serve``."""
