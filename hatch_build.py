"""Build hook: the data folders (``[tool.hatch.build.targets.wheel.hooks.custom.data]``) go into the wheel.

Only into a standard wheel: an editable install finds them in the checkout (``ratio_bench.core.resources``), and a
copy in site-packages would go stale as soon as a lexicon file is edited.
"""

from __future__ import annotations

from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class DataFiles(BuildHookInterface):
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if version == "standard":
            build_data["force_include"].update(self.config["data"])
