"""An issue as the tracker writes it: who said what, and which text is structure rather than a claim.

Note [Tracker conventions]
PyTorch's issue templates give every report the same skeleton: "## 🐛 Bug" / "### 🐛 Describe the
bug", "## To Reproduce", "## Expected behavior", "## Environment" or "### Versions" (the output of
``python -m torch.utils.collect_env``), "cc @..." lines, and often a long traceback. These are
structure: a heading "Expected behavior" is the reporter's claim of what should happen, never a
maintainer's verdict that the behaviour is expected, and the environment dump is neither a symptom
(it names CUDA, versions and libraries) nor evidence. ``for_rules`` removes them from the text the
word rules read. What the reporter printed stays, and so do the feature and docs forms' headings
("### 🚀 The feature, motivation and pitch", "### 📚"): they say what kind of issue it is.

Verdicts come from other people: a dismissal ("not a bug", "expected behaviour") counts when someone
other than the reporter writes it in a comment, or when the reporter concedes it outright ("not a
bug"). Issue exports often render a whole thread into one text, one section per message, headed
``<login> · description · <date>`` and ``<login> · comment · <date>``; ``split_thread`` turns such a
text back into the reporter's description and the comments, each with its author. A body without
those headers is the description alone; a body with comment headers and no description header (the issue's own
text with its comments rendered after it) keeps what comes before the first comment, less a closing thematic
break, as the description: the reporter's text is never dropped for want of a header.

Every pattern here is line-anchored and linear (Note [Linear-time patterns on issue text]).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# "<login> · description · 2024-01-31" (the date may carry a time)
_SECTION = re.compile(r"^([^\s·]{1,64}) · (description|comment) · (\d{4}-\d{2}-\d{2})[^\n]*$", re.M)
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})", re.M)
_THEMATIC_BREAK = re.compile(r"[^\S\n]*(?:-{3,}|\*{3,}|_{3,})[^\S\n]*")
# Template headings of PyTorch's bug, feature and docs forms (and the older "## 🐛 Bug" form).
_TEMPLATE_HEADING = re.compile(
    r"^[^\S\n]*#{1,6}[^\S\n]*(?:🐛[^\S\n]*)?(?:bug|describe the bug|to reproduce|steps to reproduce|reproducer|repro|"
    r"minified repro|minimal repro|expected behaviou?r|actual behaviou?r|observed behaviou?r|additional context|"
    r"error logs?|environment|versions?|system info(?:rmation)?|alternatives)"
    r"[^\S\n]*:?[^\S\n]*$",
    re.M | re.I,
)
_ENV_HEADING = re.compile(r"^[^\S\n]*#{1,6}[^\S\n]*(?:environment|versions?|system info(?:rmation)?)\b[^\n]*$", re.M | re.I)
# where a section ends: the next heading or a thematic break (---, ***, ___)
_ANY_HEADING = re.compile(r"^[^\S\n]*(?:#{1,6}[^\S\n]+\S|(?:-{3,}|\*{3,}|_{3,})[^\S\n]*$)", re.M)
_COLLECT_ENV = re.compile(r"^[^\S\n]*collecting environment information", re.M | re.I)
_CC_LINE = re.compile(r"^[^\S\n]*cc(?:[^\S\n]+@[\w-]+)+[^\S\n]*$", re.M | re.I)
_TRACEBACK = re.compile(r"^[^\S\n]*traceback \(most recent call last\):", re.M | re.I)
# The last line of a traceback: "SomeError: message" at the start of a line
_EXCEPTION_LINE = re.compile(r"[\w.]*(?:error|exception|interrupt|exit|warning)\b[^\n]*", re.I)


@dataclass(frozen=True)
class Comment:
    author: str | None
    body: str


@dataclass(frozen=True)
class Thread:
    description: str
    reporter: str | None = None
    comments: tuple[Comment, ...] = field(default_factory=tuple)

    def others(self) -> list[str]:
        """Comment texts by anyone but the reporter (all of them when authors are unknown)."""
        return [c.body for c in self.comments if c.author is None or c.author != self.reporter]


def _before_comments(text: str) -> str:
    """The text before the first comment header, without the thematic break that set the comments off."""
    head, _, last = text.rstrip().rpartition("\n")
    return (head if _THEMATIC_BREAK.fullmatch(last) else text).strip("\n")


def split_thread(body: str) -> Thread:
    """The reporter's description and the comments of a body that renders a whole thread."""
    body = (body or "").replace("\r\n", "\n")
    sections = list(_SECTION.finditer(body))
    if not sections:
        return Thread(body)
    reporter: str | None = None
    description_parts: list[str] = []
    if not any(header.group(2) == "description" for header in sections):
        description_parts.append(_before_comments(body[:sections[0].start()]))
    comments: list[Comment] = []
    for index, header in enumerate(sections):
        end = sections[index + 1].start() if index + 1 < len(sections) else len(body)
        text = body[header.end():end].strip("\n")
        author, what = header.group(1), header.group(2)
        if what == "description":
            reporter = reporter or author
            description_parts.append(text)
        else:
            comments.append(Comment(author, text))
    return Thread("\n\n".join(description_parts), reporter, tuple(comments))


def _unfenced_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of the text outside fenced blocks; an unclosed fence runs to the end."""
    spans: list[tuple[int, int]] = []
    pos = 0
    opening: re.Match[str] | None = None
    for fence in _FENCE.finditer(text):
        if opening is None:
            spans.append((pos, fence.start()))
            opening = fence
        elif fence.group(1)[0] == opening.group(1)[0] and len(fence.group(1)) >= len(opening.group(1)):
            line_end = text.find("\n", fence.end())
            pos = len(text) if line_end < 0 else line_end + 1
            opening = None
    if opening is None:
        spans.append((pos, len(text)))
    return spans


def _drop_sections(text: str) -> str:
    """Environment/Versions sections and collect_env dumps, up to the next heading or thematic break."""
    cuts: list[tuple[int, int]] = []
    headings = [m.start() for m in _ANY_HEADING.finditer(text)]
    for start in [m.start() for m in _ENV_HEADING.finditer(text)] + [m.start() for m in _COLLECT_ENV.finditer(text)]:
        following = [h for h in headings if h > start]
        cuts.append((start, following[0] if following else len(text)))
    if not cuts:
        return text
    cuts.sort()
    kept, pos = [], 0
    for start, end in cuts:
        if start >= pos:
            kept.append(text[pos:start])
            pos = end
        else:
            pos = max(pos, end)
    kept.append(text[pos:])
    return "".join(kept)


def _drop_tracebacks(text: str) -> str:
    """From "Traceback (most recent call last):" to its exception line (or the next blank line)."""
    out, pos = [], 0
    for match in _TRACEBACK.finditer(text):
        if match.start() < pos:
            continue
        out.append(text[pos:match.start()])
        cursor = text.find("\n", match.end())
        end = len(text)
        while 0 <= cursor < len(text):
            line_end = text.find("\n", cursor + 1)
            line_end = len(text) if line_end < 0 else line_end
            line = text[cursor + 1:line_end]
            if not line.strip():
                end = line_end
                break
            if not line[:1].isspace() and _EXCEPTION_LINE.match(line):
                end = line_end
                break
            cursor = line_end if line_end < len(text) else -1
        pos = end
    out.append(text[pos:])
    return "".join(out)


def for_rules(text: str) -> str:
    """The text the word rules read: template headings, environment dumps, tracebacks and cc lines removed."""
    text = (text or "").replace("\r\n", "\n")
    if not text.strip():
        return text
    text = _drop_sections(text)
    text = _drop_tracebacks(text)
    text = _TEMPLATE_HEADING.sub("", text)
    return _CC_LINE.sub("", text)
