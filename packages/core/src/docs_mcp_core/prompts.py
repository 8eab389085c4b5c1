"""MCP prompt templates shipped next to the docs: discovery, parsing, validation and rendering.

Docs authors put reusable prompts in the corpus as ``<name>.template.md`` (YAML front matter with
``title``, ``description`` and ``arguments``; the body becomes one user message) or
``<name>.template.yaml`` (the same keys plus a ``messages`` list of user/assistant turns). The prompt's
name is the file's path relative to the docs folder without the ``.template.*`` suffix, e.g.
``prompts/debug-webhook``. Template files are never indexed for search; ``build`` stores the parsed
prompts in ``metadata.json`` and the server offers them through ``prompts/list`` and ``prompts/get``,
filling ``{{argument}}`` placeholders with Mustache (no HTML escaping).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from docs_mcp_core import mustache
from docs_mcp_core.errors import (
    InvalidPrompt,
    MustacheError,
    MustacheOutputError,
    PromptTemplateError,
    YamlExpansionError,
    format_path,
)
from docs_mcp_core.ordering import sort_key
from docs_mcp_core.utf8 import LoneSurrogate, first_lone_surrogate

if TYPE_CHECKING:  # PyYAML is imported by the functions reading templates: a server reading
    import yaml  # metadata.json's prompts before its handshake has no use for it

MARKDOWN_SUFFIX = ".template.md"
YAML_SUFFIX = ".template.yaml"
# what arguments may add to a message's template: one argument as large as a request can carry (4 MiB
# over stdio), not a template that repeats it (20,000 {{a}} and 100 KB rendered 2 GB in 15 s)
MAX_ADDED_CHARACTERS = 4 << 20


class PromptArgument(BaseModel):
    """One named input of a prompt; ``required`` is ``None`` when the author did not say."""

    name: str
    title: str | None = None
    description: str | None = None
    required: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        if self.title is not None:
            out["title"] = self.title
        if self.description is not None:
            out["description"] = self.description
        if self.required is not None:
            out["required"] = self.required
        return out


class PromptContent(BaseModel):
    """Message content; only text is supported."""

    type: Literal["text"] = "text"
    text: str


class PromptMessage(BaseModel):
    """One turn of a prompt."""

    role: Literal["user", "assistant"]
    content: PromptContent

    def to_dict(self) -> dict[str, Any]:
        return {"role": self.role, "content": {"type": self.content.type, "text": self.content.text}}


class PromptDefinition(BaseModel):
    """A parsed prompt template as stored in ``metadata.json`` (messages hold unrendered Mustache)."""

    name: str
    title: str | None = None
    description: str | None = None
    arguments: list[PromptArgument] = []
    messages: list[PromptMessage]

    def to_dict(self) -> dict[str, Any]:
        """The ``metadata.json`` shape: optional keys only when set, ``arguments`` always present."""
        out: dict[str, Any] = {"name": self.name}
        if self.title is not None:
            out["title"] = self.title
        if self.description is not None:
            out["description"] = self.description
        out["arguments"] = [argument.to_dict() for argument in self.arguments]
        out["messages"] = [message.to_dict() for message in self.messages]
        return out


@dataclass(frozen=True)
class PromptTemplateFile:
    """A template file chosen for a prompt name; ``path`` is POSIX and relative to the docs folder."""

    name: str
    path: str
    format: Literal["md", "yaml"]


# --------------------------------------------------------------------------------------------
# discovery


def is_prompt_template(relpath: str) -> bool:
    """True for ``*.template.md`` / ``*.template.yaml`` paths (never indexed as documentation)."""
    return relpath.endswith(MARKDOWN_SUFFIX) or relpath.endswith(YAML_SUFFIX)


def _template_file(relpath: str) -> PromptTemplateFile:
    if relpath.endswith(YAML_SUFFIX):
        return PromptTemplateFile(relpath[: -len(YAML_SUFFIX)], relpath, "yaml")
    return PromptTemplateFile(relpath[: -len(MARKDOWN_SUFFIX)], relpath, "md")


def choose_prompt_templates(relpaths: list[str]) -> tuple[list[PromptTemplateFile], list[str]]:
    """Pick one template per prompt name from template paths (relative, POSIX).

    The same name in the same format twice is an error; a markdown and a yaml template with the same
    name keep the yaml one and produce a warning. Returns the chosen files sorted by name.
    """
    chosen: dict[str, PromptTemplateFile] = {}
    warnings: list[str] = []
    for relpath in sorted(relpaths, key=sort_key):
        incoming = _template_file(relpath)
        existing = chosen.get(incoming.name)
        if existing is None:
            chosen[incoming.name] = incoming
            continue
        if existing.format == incoming.format:
            raise PromptTemplateError(
                f"Duplicate prompt template '{incoming.name}' with the same format at "
                f"'{existing.path}' and '{incoming.path}'"
            )
        md, yml = (incoming, existing) if incoming.format == "md" else (existing, incoming)
        warnings.append(
            f"Found both markdown and yaml templates for '{incoming.name}' ({md.path} and {yml.path}); "
            "using yaml"
        )
        chosen[incoming.name] = yml
    return sorted(chosen.values(), key=lambda f: sort_key(f.name)), warnings


def discover_prompt_templates(
    docs_dir: Path, paths: Sequence[str]
) -> tuple[list[PromptTemplateFile], list[str]]:
    """Choose the templates among ``paths``: the ``*.template.md`` and ``*.template.yaml`` files a
    walk of ``docs_dir`` found (:attr:`docs_mcp_core.corpus.CorpusFiles.templates`, which skips dot
    folders and files). ``.yml`` is not a template suffix. Returns ``(files sorted by name, warnings)``.

    The walk is the caller's: this module is read by the server at start-up (prompts from
    ``metadata.json``), which must not load the corpus code.
    """
    docs_dir = Path(docs_dir)
    found = [rel for rel in paths if is_prompt_template(rel) and (docs_dir / rel).is_file()]
    return choose_prompt_templates(found)


def load_prompt_templates(docs_dir: Path, paths: Sequence[str]) -> tuple[list[PromptDefinition], list[str]]:
    """Parse every prompt template under ``docs_dir`` among ``paths`` (see
    :func:`discover_prompt_templates`); returns ``(prompts, warnings)``."""
    docs_dir = Path(docs_dir)
    files, warnings = discover_prompt_templates(docs_dir, paths)
    prompts: list[PromptDefinition] = []
    for template in files:
        try:
            text = (docs_dir / template.path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise PromptTemplateError(f"{template.path}: cannot read prompt template: {exc}") from exc
        parse = parse_prompt_yaml if template.format == "yaml" else parse_prompt_markdown
        prompts.append(parse(text, name=template.name, source=template.path))
    return prompts, warnings


# --------------------------------------------------------------------------------------------
# validation shared with metadata.json


def _optional_text(raw: Mapping[str, Any], key: str, path: tuple[str | int, ...]) -> str | None:
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InvalidPrompt((*path, key), "must be a non-empty string")
    return value.strip()


def _required_text(raw: Mapping[str, Any], key: str, path: tuple[str | int, ...]) -> str:
    value = _optional_text(raw, key, path)
    if value is None:
        raise InvalidPrompt((*path, key), "must be a non-empty string")
    return value


def _as_mapping(
    value: Any, path: tuple[str | int, ...], what: str = "must be an object"
) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise InvalidPrompt(path, what)
    return value  # pyright: ignore[reportUnknownVariableType]


def parse_arguments(raw: Any, path: tuple[str | int, ...] = ("arguments",)) -> list[PromptArgument]:
    """Validate an ``arguments`` list: ``[{name, title?, description?, required? (bool)}]``."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise InvalidPrompt(path, "must be a list of {name, title?, description?, required?}")
    arguments: list[PromptArgument] = []
    for index, item in enumerate(raw):  # pyright: ignore[reportUnknownVariableType,reportUnknownArgumentType]
        here = (*path, index)
        entry = _as_mapping(item, here)
        required = entry.get("required")
        if required is not None and not isinstance(required, bool):
            raise InvalidPrompt((*here, "required"), "must be a boolean (true or false)")
        arguments.append(
            PromptArgument(
                name=_required_text(entry, "name", here),
                title=_optional_text(entry, "title", here),
                description=_optional_text(entry, "description", here),
                required=required,
            )
        )
    return arguments


def _check_mustache(text: str, path: tuple[str | int, ...]) -> None:
    try:
        mustache.parse(text)
    except MustacheError as exc:
        raise InvalidPrompt(path, f"invalid Mustache template: {exc}") from exc


def parse_messages(
    raw: Any, path: tuple[str | int, ...] = ("messages",), *, check_templates: bool = False
) -> list[PromptMessage]:
    """Validate a non-empty ``messages`` list of ``{role: user|assistant, content: {type: text, text}}``.

    With ``check_templates``, each text must also be a well-formed Mustache template.
    """
    if not isinstance(raw, list) or not raw:
        raise InvalidPrompt(path, "must include at least one message")
    messages: list[PromptMessage] = []
    for index, item in enumerate(raw):  # pyright: ignore[reportUnknownVariableType,reportUnknownArgumentType]
        here = (*path, index)
        entry = _as_mapping(item, here, "must be an object with role and content")
        role = entry.get("role")
        if role not in ("user", "assistant"):
            raise InvalidPrompt((*here, "role"), f"must be 'user' or 'assistant', got {role!r}")
        content = _as_mapping(
            entry.get("content"), (*here, "content"), "must be an object {type: text, text}"
        )
        if content.get("type") != "text":
            raise InvalidPrompt((*here, "content", "type"), f"must be 'text', got {content.get('type')!r}")
        text = _required_text(content, "text", (*here, "content"))
        if check_templates:
            _check_mustache(text, (*here, "content", "text"))
        messages.append(PromptMessage(role=role, content=PromptContent(text=text)))
    return messages


def prompt_from_mapping(
    raw: Any, *, name: str | None = None, check_templates: bool = False
) -> PromptDefinition:
    """Build a prompt from a mapping (a YAML template, or one entry of ``metadata.json`` ``prompts``).

    With ``name`` given (templates), the name comes from the file; otherwise the mapping's ``name`` is
    required. A ``template`` string is accepted as shorthand for one user message, but not together
    with ``messages``. ``check_templates`` also rejects malformed Mustache; it is on when authoring
    (template files) and off when loading ``metadata.json``, so an index built elsewhere still boots
    and only the broken prompt fails when it is requested. Raises :class:`InvalidPrompt`.
    """
    entry = _as_mapping(raw, ())
    prompt_name = name if name is not None else _required_text(entry, "name", ())
    template = entry.get("template")
    if template is not None and entry.get("messages") is not None:
        raise InvalidPrompt(("template",), "use either 'template' or 'messages', not both")
    if template is not None:
        if not isinstance(template, str) or not template.strip():
            raise InvalidPrompt(("template",), "must be a non-empty string")
        messages = [PromptMessage(role="user", content=PromptContent(text=template.strip()))]
        if check_templates:
            _check_mustache(template, ("template",))
    else:
        messages = parse_messages(entry.get("messages"), check_templates=check_templates)
    return PromptDefinition(
        name=prompt_name,
        title=_optional_text(entry, "title", ()),
        description=_optional_text(entry, "description", ()),
        arguments=parse_arguments(entry.get("arguments")),
        messages=messages,
    )


# --------------------------------------------------------------------------------------------
# template files


def _split_front_matter(text: str) -> tuple[str | None, str, int]:
    """Split ``---`` YAML front matter from a markdown file.

    Returns ``(yaml or None, body, line number of the first YAML line)``. Like remark-frontmatter,
    the opening fence must be the very first line and a closing ``---`` line must follow.
    """
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip("\r\n") != "---":
        return None, text, 0
    for index in range(1, len(lines)):
        if lines[index].rstrip("\r\n") == "---":
            return "".join(lines[1:index]), "".join(lines[index + 1 :]), 2
    return None, text, 0


def _node_line(node: yaml.Node | None, path: tuple[str | int, ...]) -> int | None:
    """0-based line of the YAML node at ``path``, or of its deepest existing ancestor below the root.

    ``None`` when not even the first path element exists (a line would point nowhere useful).
    """
    import yaml

    line: int | None = None
    for part in path:
        child: yaml.Node | None = None
        if isinstance(node, yaml.MappingNode) and isinstance(part, str):
            child = next((v for k, v in node.value if getattr(k, "value", None) == part), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            child = node.value[part]
        if child is None:
            break
        node, line = child, child.start_mark.line
    return line


def _load_yaml(text: str, source: str, first_line: int) -> tuple[Any, yaml.Node | None]:
    import yaml

    from docs_mcp_core.yaml_load import load_yaml

    try:  # load_yaml: aliases expanding a few lines to millions of values were walked by the
        # checks (a 9-line template took a minute and gigabytes to report its error)
        data, node = load_yaml(text, first_line=first_line), yaml.compose(text, Loader=yaml.SafeLoader)
    except YamlExpansionError as exc:
        raise PromptTemplateError(f"{source}:{first_line}: the template cannot be read: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{source}:{mark.line + first_line}" if mark is not None else source
        problem = getattr(exc, "problem", None) or str(exc)
        raise PromptTemplateError(f"{where}: invalid YAML: {problem}") from exc
    if (found := first_lone_surrogate(data)) is not None:  # no metadata.json could hold it
        what = "a key" if found.in_key else format_path(found.path)
        line = _node_line(node, found.path)  # a key's: its object's
        where = f"{source}:{line + first_line}" if line is not None else source
        raise PromptTemplateError(f"{where}: {what} holds {found.escape}, {LoneSurrogate.NOT_TEXT}")
    return data, node


def _fail(exc: InvalidPrompt, source: str, node: yaml.Node | None, first_line: int) -> PromptTemplateError:
    line = _node_line(node, exc.path) if node is not None else None
    where = f"{source}:{line + first_line}" if line is not None else source
    field = f"{exc.where} " if exc.path else ""
    return PromptTemplateError(f"{where}: {field}{exc.problem}")


def _check_unique_arguments(prompt: PromptDefinition) -> None:
    seen: set[str] = set()
    for index, argument in enumerate(prompt.arguments):
        if argument.name in seen:
            raise InvalidPrompt(("arguments", index, "name"), f"duplicates argument '{argument.name}'")
        seen.add(argument.name)


def parse_prompt_markdown(text: str, *, name: str, source: str) -> PromptDefinition:
    """Parse a ``*.template.md`` file: optional front matter plus a non-empty body (one user message).

    Errors are :class:`PromptTemplateError` prefixed with ``source`` (and ``:line`` when known).
    """
    text = text.removeprefix("\ufeff")
    front, body, first_line = _split_front_matter(text)
    data: Any = None
    node: yaml.Node | None = None
    if front is not None and front.strip():
        data, node = _load_yaml(front, source, first_line)
    try:
        if data is not None and not isinstance(data, Mapping):
            raise InvalidPrompt((), "prompt frontmatter must be an object")
        meta: Mapping[str, Any] = data if data is not None else {}  # pyright: ignore[reportAssignmentType]
        if not body.strip():
            raise InvalidPrompt((), "prompt template body must be a non-empty string")
        template = body.strip()
        _check_mustache(template, ())
        prompt = PromptDefinition(
            name=name,
            title=_optional_text(meta, "title", ()),
            description=_optional_text(meta, "description", ()),
            arguments=parse_arguments(meta.get("arguments")),
            messages=[PromptMessage(role="user", content=PromptContent(text=template))],
        )
        _check_unique_arguments(prompt)
    except InvalidPrompt as exc:
        raise _fail(exc, source, node, first_line) from exc
    return prompt


def parse_prompt_yaml(text: str, *, name: str, source: str) -> PromptDefinition:
    """Parse a ``*.template.yaml`` file: ``{title?, description?, arguments?, messages}``."""
    data, node = _load_yaml(text.removeprefix("\ufeff"), source, 1)
    try:
        if not isinstance(data, Mapping):
            raise InvalidPrompt((), "prompt template yaml must be an object")
        if data.get("messages") is None and data.get("template") is None:  # pyright: ignore[reportUnknownMemberType]
            raise InvalidPrompt(("messages",), "must include at least one message")
        prompt = prompt_from_mapping(data, name=name, check_templates=True)
        _check_unique_arguments(prompt)
    except InvalidPrompt as exc:
        raise _fail(exc, source, node, 1) from exc
    return prompt


# --------------------------------------------------------------------------------------------
# rendering


def check_required_arguments(prompt: PromptDefinition, arguments: Mapping[str, str | None]) -> None:
    """Raise ``Missing required prompt argument '<name>'`` for a required argument that is absent or blank."""
    for argument in prompt.arguments:
        if argument.required:
            value = arguments.get(argument.name)
            if value is None or not str(value).strip():
                raise PromptTemplateError(f"Missing required prompt argument '{argument.name}'")


def render_prompt(prompt: PromptDefinition, arguments: Mapping[str, str]) -> list[PromptMessage]:
    """Fill every message of ``prompt`` with ``arguments`` (Mustache, unescaped; missing names -> "")."""
    check_required_arguments(prompt, arguments)
    view = dict(arguments)
    rendered: list[PromptMessage] = []
    for message in prompt.messages:
        limit = len(message.content.text) + MAX_ADDED_CHARACTERS
        try:
            text = mustache.render(message.content.text, view, limit=limit)
        except MustacheOutputError:
            raise PromptTemplateError(
                f"Prompt '{prompt.name}' would be longer than {limit:,} characters with these arguments "
                "(its template repeats them); pass shorter arguments"
            ) from None
        except MustacheError as exc:
            raise PromptTemplateError(f"Prompt '{prompt.name}' has an invalid template: {exc}") from exc
        rendered.append(PromptMessage(role=message.role, content=PromptContent(text=text)))
    return rendered


__all__ = [
    "PromptArgument",
    "PromptContent",
    "PromptDefinition",
    "PromptMessage",
    "PromptTemplateFile",
    "check_required_arguments",
    "choose_prompt_templates",
    "discover_prompt_templates",
    "is_prompt_template",
    "load_prompt_templates",
    "parse_arguments",
    "parse_messages",
    "parse_prompt_markdown",
    "parse_prompt_yaml",
    "prompt_from_mapping",
    "render_prompt",
]
