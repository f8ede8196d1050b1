"""Judge prompts as versioned data files (``judge/prompts/*.yaml``), rendered into chat messages.

A file holds one prompt: its id, version, relation, purpose, output kind, a system text with ``$name``
placeholders and one or more *modes*. A mode fills the placeholders and gives the user-message template
(``{field}`` placeholders). Silver prompts have a ``silver`` mode (input "S1. marker, S2") and a
``candidate`` mode for judging retrieved candidates (spec I.3: the marker note is dropped and the input is
"s1, s2"); the pairwise prompt has one mode per relation. Everything that changes a request is in the file,
so ``<id>@v<version>/<mode>`` plus the file's SHA-256 identifies a verdict's prompt exactly.
"""

from __future__ import annotations

import hashlib
import string
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from ratio_bench.core.errors import RatioError
from ratio_bench.core.yamlio import load_yaml

PROMPT_DIR = Path(__file__).resolve().parent / "prompts"
OUTPUT_KINDS = ("verdict", "pairwise", "markers")


class PromptError(RatioError, ValueError):
    """A prompt file that is missing, malformed, or rendered without the fields it needs."""


@dataclass(frozen=True)
class Prompt:
    id: str
    version: int
    relation: str  # a relation, or "any"
    purpose: str
    output: str  # verdict | pairwise | markers
    description: str
    system_template: str
    modes: dict[str, dict[str, str]]
    sha256: str

    def ref(self, mode: str) -> str:
        return f"{self.id}@v{self.version}/{mode}"

    def messages(self, mode: str, system_vars: dict[str, Any] | None = None, **fields: Any) -> list[dict]:
        """System and user messages for one instance (the whole prompt in the system message, spec C)."""
        if mode not in self.modes:
            raise PromptError(f"prompt {self.id} has no mode {mode!r} (modes: {', '.join(self.modes)})")
        spec = self.modes[mode]
        variables = {k: v for k, v in spec.items() if k != "user"} | (system_vars or {})
        try:
            system = string.Template(self.system_template).substitute(variables)
            user = spec["user"].format(**fields)
        except (KeyError, ValueError) as exc:
            raise PromptError(f"prompt {self.ref(mode)}: missing field {exc}") from None
        system = "\n".join(line.rstrip() for line in system.splitlines()).replace("\n\n\n", "\n\n").strip()
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _load(path: Path) -> Prompt:
    raw = path.read_bytes()
    try:
        spec = load_yaml(raw)
        prompt = Prompt(
            id=str(spec["id"]),
            version=int(spec["version"]),
            relation=str(spec["relation"]),
            purpose=str(spec["purpose"]),
            output=str(spec["output"]),
            description=" ".join(str(spec.get("description", "")).split()),
            system_template=str(spec["system"]),
            modes={str(k): {kk: str(vv).strip() for kk, vv in v.items()} for k, v in spec["modes"].items()},
            sha256=hashlib.sha256(raw).hexdigest(),
        )
    except (KeyError, TypeError, AttributeError, yaml.YAMLError) as exc:
        raise PromptError(f"{path}: malformed prompt file ({exc})") from None
    if prompt.output not in OUTPUT_KINDS:
        raise PromptError(f"{path}: output must be one of {OUTPUT_KINDS}, not {prompt.output!r}")
    if path.stem != prompt.id:
        raise PromptError(f"{path}: file name and id {prompt.id!r} differ")
    if any("user" not in m for m in prompt.modes.values()):
        raise PromptError(f"{path}: every mode needs a user template")
    return prompt


@cache
def load_prompts(directory: Path = PROMPT_DIR) -> dict[str, Prompt]:
    """Every prompt of ``directory`` by id."""
    return {p.id: p for p in map(_load, sorted(directory.glob("*.yaml")))}


def get_prompt(prompt_id: str, directory: Path = PROMPT_DIR) -> Prompt:
    prompts = load_prompts(directory)
    if prompt_id not in prompts:
        raise PromptError(f"unknown prompt {prompt_id!r}; known: {', '.join(sorted(prompts))}")
    return prompts[prompt_id]


def prompts_for(relation: str, purpose: str, directory: Path = PROMPT_DIR) -> list[Prompt]:
    """The prompts of one relation and purpose (e.g. the candidate silver prompts to calibrate)."""
    return [p for p in load_prompts(directory).values() if p.relation == relation and p.purpose == purpose]
