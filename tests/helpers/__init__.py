"""Helpers shared by the tests (and the screenshot tool): importable modules, not fixtures."""
