"""A type named exactly finds the section that lists its fields, end to end."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from docs_mcp_core.search import SearchEngine
from docs_mcp_core.search.type_definitions import definition_factors, type_names
from tests.support.tiny_corpus import build_pages, opened, ranking_weights


def _model(name: str, fields: dict[str, str]) -> str:
    example = ", ".join(f'{f}: "{f}_1"' for f in fields)
    rows = "\n".join(f"| `{f}` | *string* | {d} |" for f, d in fields.items())
    return (
        f'# {name}\n\n## Example Usage\n\n```typescript\nimport {{ {name} }} from "acme/models/components";\n\n'
        f"let value: {name} = {{ {example} }};\n```\n\n## Fields\n\n| Field | Type | Description |\n"
        f"| ----- | ---- | ----------- |\n{rows}\n"
    )


# Generated data-model pages: a title, an example that repeats the field names, the fields table;
# enough of them that their headings are the reference's generic ones, as in a real one.
PAGES = {
    **{
        f"models/components/resource{n}.md": _model(f"Resource{n}", {"id": f"The id of resource {n}."})
        for n in range(20)
    },
    "models/components/domainschema.md": _model(
        "DomainSchema", {"id": "The unique identifier of the domain.", "slug": "The domain name."}
    ),
    "models/components/linkschema.md": _model(
        "LinkSchema", {"id": "The unique identifier of the link.", "domain": "The domain of the link."}
    ),
    "models/errors/notfound.md": _model("NotFound", {"error": "The error's code and message."}),
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SearchEngine]:
    with opened(build_pages(tmp_path_factory, "types", PAGES)) as engine:
        yield engine


@pytest.mark.parametrize(
    ("query", "wanted"),
    [
        ("components.DomainSchema", "models/components/domainschema.md#domainschema/fields"),
        ("components.LinkSchema", "models/components/linkschema.md#linkschema/fields"),
        ("errors.NotFound", "models/errors/notfound.md#notfound/fields"),
    ],
)
def test_a_named_type_finds_its_fields(engine: SearchEngine, query: str, wanted: str) -> None:
    assert engine.search(query, limit=3).hits[0].chunk_id == wanted


def test_without_the_signal_the_title_or_the_example_ranks_first(engine: SearchEngine) -> None:
    with ranking_weights(engine, type_definition=0.0):
        firsts = [
            engine.search(q, limit=1).hits[0].chunk_id for q in ("components.DomainSchema", "errors.NotFound")
        ]
    assert not all(f.endswith("/fields") for f in firsts)


def test_type_names_are_dotted_capitalised_parts_and_camel_case_words() -> None:
    assert type_names("operations.TrackLeadRequestBody clickId eventName") == {"trackleadrequestbody"}
    assert type_names("components.Agent instructions") == {"agent"}
    assert type_names("DomainSchema id slug") == {"domainschema"}
    assert type_names("Agent instructions in Python") == frozenset()  # one capitalised word is prose
    assert type_names("links.create") == frozenset()  # a method, not a type


def test_only_the_fields_section_of_the_named_types_page_gains() -> None:
    ids = [
        "models/components/domainschema.md#domainschema/fields",
        "models/components/domainschema.md#domainschema/example-usage",
        "models/components/linkschema.md#linkschema/fields",
        "models/components/domain_schema.md#domain-schema/properties",
    ]
    assert definition_factors(ids, frozenset({"domainschema"}), 0.25).tolist() == [1.25, 1.0, 1.0, 1.25]
