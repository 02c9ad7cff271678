"""Load the versioned prompt templates of ``prompts/`` and render them to chat messages.

A template file has a front matter (name, version, output_schema) and two sections,
``## system`` and ``## user``, written in mustache. Issue text is inserted with triple braces
so it is not HTML-escaped, and only ever as a variable value: it is never parsed as a template.

Note [Data blocks]
Untrusted text (issue text, and model output such as the triage reason) sits inside data blocks:
a line ``<issue>`` … a line ``</issue>`` in the user section. Inside every value, an opening or
closing tag of any block of that template is written ``&lt;issue`` instead, so a body containing
``</issue>`` cannot end its block early and smuggle instructions outside it. Everything else in
the text is kept verbatim.

Note [Optional variables]
A template may list variables in its front matter as ``optional: a, b``: a caller that has no value
for one (the issue's state, the recorded facts of its repro) renders it as an empty string instead of
failing, so callers that predate a variable keep working. Every other variable is required.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from agent.llm.errors import LlmConfigError

PROMPT_NAMES: tuple[str, ...] = ("triage", "pattern", "api_semantics", "transfer_check", "harness_inputs", "api_describe")
_VARIABLE_RE = re.compile(r"\{\{\{?\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}?\}\}")
_BLOCK_TAG_RE = re.compile(r"^<([A-Za-z_][A-Za-z0-9_]*)>\s*$", re.M)


def escape_data(value: str, tags: frozenset[str]) -> str:
    """``<tag`` / ``</tag`` of the given block tags become ``&lt;tag`` (see Note [Data blocks])."""
    if not tags:
        return value
    pattern = re.compile(r"<(\s*/?\s*)(" + "|".join(map(re.escape, sorted(tags))) + r")(?![A-Za-z0-9_])", re.I)
    return pattern.sub(lambda m: "&lt;" + m.group(1) + m.group(2), value)


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    version: str
    output_schema: str
    system: str
    user: str
    sha256: str
    optional: frozenset[str] = frozenset()

    @property
    def block_tags(self) -> frozenset[str]:
        """Names of the data blocks (``<issue>`` lines) of the user section."""
        return frozenset(_BLOCK_TAG_RE.findall(self.user))

    @property
    def variables(self) -> frozenset[str]:
        return frozenset(_VARIABLE_RE.findall(self.system) + _VARIABLE_RE.findall(self.user))

    def render(self, variables: dict[str, Any]) -> list[tuple[str, str]]:
        """[(role, text)] with every variable filled; missing variables are an error."""
        missing = self.variables - set(variables) - self.optional
        if missing:
            raise LlmConfigError(f"prompt {self.name}: missing variable(s) {', '.join(sorted(missing))}")
        from langchain_core.prompts import ChatPromptTemplate

        template = ChatPromptTemplate.from_messages(
            [("system", self.system), ("human", self.user)], template_format="mustache"
        )
        tags = self.block_tags
        values = {k: "" for k in self.optional & self.variables}
        values |= {k: "" if v is None else escape_data(str(v), tags) for k, v in variables.items() if k in self.variables}
        messages = template.format_messages(**values)
        return [("system" if m.type == "system" else "user", str(m.content)) for m in messages]


def _parse(name: str, text: str) -> PromptTemplate:
    match = re.match(r"^---\n(.*?)\n---\n(.*)$", text, re.S)
    if match is None:
        raise LlmConfigError(f"prompt {name}: missing front matter")
    meta: dict[str, str] = {}
    for line in match.group(1).splitlines():
        key, _, value = line.partition(":")
        meta[key.strip()] = value.strip()
    sections = re.split(r"^## (system|user)\s*$", match.group(2), flags=re.M)
    parts = {sections[i]: sections[i + 1].strip("\n") for i in range(1, len(sections) - 1, 2)}
    if set(parts) != {"system", "user"}:
        raise LlmConfigError(f"prompt {name}: needs '## system' and '## user' sections")
    if meta.get("name") != name or not meta.get("version"):
        raise LlmConfigError(f"prompt {name}: front matter must give name: {name} and a version")
    return PromptTemplate(
        name=name,
        version=meta["version"],
        output_schema=meta.get("output_schema", ""),
        system=parts["system"],
        user=parts["user"],
        sha256=hashlib.sha256(text.encode()).hexdigest(),
        optional=frozenset(v.strip() for v in meta.get("optional", "").split(",") if v.strip()),
    )


@cache
def load_prompt(name: str) -> PromptTemplate:
    """The template ``prompts/<name>.md`` (read once per process)."""
    if name not in PROMPT_NAMES:
        raise LlmConfigError(f"unknown prompt {name!r}; known: {', '.join(PROMPT_NAMES)}")
    text = (resources.files("prompts") / f"{name}.md").read_text(encoding="utf-8")
    return _parse(name, text)


def prompt_version(name: str) -> str:
    return load_prompt(name).version
