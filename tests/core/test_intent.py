"""The intent signals' mechanisms: verb groups, operation headings, page names, topic keys, model pages."""

from __future__ import annotations

import numpy as np

from docs_mcp_core.search.intent import VERB_GROUPS, IntentIndex, describes, heading_verbs, query_verbs
from docs_mcp_core.search.introductions import first_sections, lead_text
from docs_mcp_core.search.topics import TOPIC_QUALIFIERS, page_names, topic_key


def bit(word: str) -> int:
    return next(1 << i for i, group in enumerate(VERB_GROUPS) if word in group)


def test_query_words_name_the_group_of_their_action() -> None:
    assert query_verbs(["remove", "a", "webhook"]) == bit("delete")
    assert query_verbs(["disconnect", "the", "credentials"]) == bit("delete")
    assert query_verbs(["check", "whether", "a", "route", "exists"]) == bit("has")
    assert query_verbs(["fetch", "the", "invoice"]) == bit("get")
    assert query_verbs(["invoices", "overview"]) == 0


def test_how_many_asks_for_a_count_not_a_batch() -> None:
    assert query_verbs(["how", "many", "links"]) == bit("count")
    assert query_verbs(["create", "many", "links"]) == bit("create") | bit("batch")


def test_issuing_booking_enrolling_submitting_and_placing_create() -> None:
    for verb in ("issue", "book", "enroll", "submit", "place"):
        assert query_verbs([verb, "a", "thing"]) == bit("create"), verb


def test_a_question_that_starts_with_things_in_the_plural_asks_for_a_list() -> None:
    from docs_mcp_core.search.intent import lists_things

    assert lists_things(["comments", "on", "a", "task", "in", "asana"], []) == bit("list")
    assert lists_things(["which", "topics", "does", "a", "user", "belong", "to"], []) == bit("list")
    # filter values, language names and qualifiers are passed over; the first thing counts
    assert lists_things(["ts", "sdk", "comments", "on", "a", "task"], ["typescript"]) == bit("list")
    assert lists_things(["python", "invoices", "of", "a", "customer"], ["python"]) == bit("list")
    assert lists_things(["a", "customer", "and", "their", "invoices"], []) == 0
    assert lists_things(["status", "of", "a", "job"], []) == 0  # not a plural
    assert lists_things(["the", "", "of"], []) == 0


def test_replacing_updates() -> None:
    assert query_verbs(["replace", "the", "default", "error", "handler"]) == bit("update")


def test_a_two_word_verb_names_its_own_action_not_its_first_words() -> None:
    assert query_verbs(["set", "up", "an", "sms", "provider"]) == bit("create")  # not update
    assert query_verbs(["get", "rid", "of", "a", "webhook"]) == bit("delete")  # not get
    assert query_verbs(["shut", "down", "the", "worker"]) == bit("cancel")
    assert query_verbs(["set", "the", "name"]) == bit("update")


def test_getting_back_what_an_action_returns_is_no_action_of_its_own() -> None:
    # after another action: what it returns ("and get back the execution id")
    words = ["trigger", "a", "workflow", "and", "get", "back", "the", "execution", "id"]
    assert query_verbs(words) == bit("trigger")  # not get, not undo
    assert query_verbs(["create", "a", "job", "and", "get", "back", "its", "id"]) == bit("create")
    # first: it restores
    assert query_verbs(["get", "back", "a", "deleted", "link"]) == bit("restore")


def test_reading_all_or_every_of_something_lists_it() -> None:
    assert query_verbs(["get", "all", "links"]) == bit("list")  # not get
    assert query_verbs(["show", "every", "tag"]) == bit("list")
    assert query_verbs(["fetch", "all", "my", "customers"]) == bit("list")
    # ... unless what follows is an aspect of one thing
    assert query_verbs(["get", "all", "the", "details", "of", "a", "link"]) == bit("get")
    assert query_verbs(["get", "all", "fields", "of", "a", "link"]) == bit("get")
    assert query_verbs(["delete", "all", "links"]) == bit("delete") | bit(
        "list"
    )  # unchanged: not a reading verb


def test_an_operation_heading_names_its_verb_first_in_any_naming_convention() -> None:
    assert heading_verbs("deleteByTransactionId") == bit("delete")
    assert heading_verbs("delete_by_transaction_id") == bit("delete")
    assert heading_verbs("retrieve") == bit("get")
    assert heading_verbs("hasRoute") == bit("has")


def test_batch_words_count_anywhere_in_an_operation_name() -> None:
    assert heading_verbs("createBulk") == bit("create") | bit("batch")
    assert heading_verbs("bulk_update") & bit("batch")


def test_prose_and_noun_headings_name_no_operation() -> None:
    assert heading_verbs("Run different examples") == 0
    assert heading_verbs("Fields") == 0
    assert heading_verbs("") == 0


def test_page_names_come_from_the_file_the_folder_of_a_readme_and_the_title() -> None:
    names = page_names(
        "sdks/python/docs/sdks/environmentvariables/README.md", "x > EnvironmentVariables > Overview"
    )
    assert "environmentvariable" in names
    crumb = "docs/sdks/preferences/README.md > Subscribers.Preferences > list"
    assert page_names("docs/sdks/preferences/README.md", crumb) >= {"preference", "subscriberspreference"}
    assert page_names("guides/vision.md", "guides/vision.md") == {"vision"}


def test_a_topic_key_is_the_short_query_joined_without_stop_words_named_values_or_plural() -> None:
    assert topic_key(["environment", "variables"], []) == "environmentvariable"
    assert topic_key(["the", "webhooks", "in", "python"], ["python"]) == "webhook"
    assert topic_key(["node", "webhooks"], ["typescript"]) == "webhook"  # an alias of a named value
    qualifier = TOPIC_QUALIFIERS.__contains__
    assert topic_key(["webhooks", "sdk"], ["python"], qualifier) == "webhook"  # "SDK" names no page
    assert topic_key(["the", "hooks", "page"], [], qualifier) == "hook"
    assert topic_key(["about", "hooks"], [], qualifier) == "hook"
    assert topic_key(["how", "does", "caching", "work"], [], qualifier) == "caching"
    assert topic_key(["workspaces", "explained"], [], qualifier) == "workspace"
    assert topic_key(["python", "sdk"], ["python"], qualifier) == "sdk"  # ... unless it is all there is
    assert topic_key(["webhooks", "docs"], []) == "webhooksdoc"  # read whole first: a page may be so named
    assert topic_key(["tools", "in", "uv"], [], lambda w: w == "uv") == "tool"  # the product's name
    assert topic_key(["uv"], [], lambda w: w == "uv") == "uv"
    assert topic_key(["how", "do", "i", "create", "a", "new", "link", "for", "a", "partner"], []) is None
    assert topic_key(["the"], []) is None


def test_topic_key_meets_the_name_of_a_page_written_as_one_compound() -> None:
    names = page_names("docs/sdks/qrcodes/README.md", "docs/sdks/qrcodes/README.md > QR Codes > Overview")
    assert topic_key(["qr", "codes"], []) in names


def test_a_lead_section_says_words_of_its_own() -> None:
    assert not lead_text("", "docs/subscribers.md", "Subscribers")
    assert lead_text("Overview", "x > Subscribers > Overview", "Overview A subscriber receives messages")


def test_model_pages_have_only_generic_non_verb_headings() -> None:
    headings = ["", "Fields"] * 30 + ["", "create", "list"] * 30 + ["Overview", "createBulk"]
    files = np.concatenate([np.repeat(np.arange(30), 2), np.repeat(np.arange(30, 60), 3), [60, 60]])
    n = len(headings)
    index = IntentIndex.build(headings, [""] * n, ["f.md"] * n, files, np.zeros(n, dtype=bool))
    assert index.model[:60].all()  # "Fields" is generic and no verb: type pages
    assert not index.model[60:].any()  # "create"/"list" are generic but operations


def test_topic_rows_are_the_lead_sections_of_pages_so_named() -> None:
    paths = ["docs/sdks/topics/README.md"] * 3 + ["docs/sdks/workflows/README.md"] * 2
    crumbs = [f"{p} > T > s" for p in paths]
    heads = ["", "Overview", "list", "Overview", "get"]
    lead = np.array([False, True, False, True, False])
    index = IntentIndex.build(heads, crumbs, paths, np.array([0, 0, 0, 1, 1]), lead)
    assert index.topic_rows("topic").tolist() == [1]
    assert index.topic_rows("workflow").tolist() == [3]
    assert index.topic_rows(None).tolist() == []


def test_first_sections_take_the_first_chunks_of_every_file_in_order() -> None:
    files = np.array([1, 0, 1, 0, 1])
    chunk_index = np.array([2, 1, 0, 0, 1])
    assert first_sections(files, chunk_index, 2).tolist() == [3, 1, 2, 4]


def test_a_description_is_three_words_of_the_readers_own_without_an_identifier() -> None:
    assert describes(["checkout", "report", "sale", "customer"], names_identifier=False)
    assert not describes(["payment", "link"], names_identifier=False)  # a topic, not a description
    assert not describes(["fields", "sale", "event"], names_identifier=True)  # names a type from code


def test_a_topic_key_names_the_one_page_whose_name_starts_with_it() -> None:
    intent = IntentIndex(
        verbs=np.zeros(3, dtype=np.int32),
        model=np.zeros(3, dtype=bool),
        lead=np.ones(3, dtype=bool),
        topics={
            "ingestionpipelineconfiguration": np.array([0]),
            "webhookendpoint": np.array([1]),
            "webhookevent": np.array([2]),
        },
    )
    assert intent.topic_rows("ingestionpipeline").tolist() == [0]
    assert intent.topic_rows("webhookendpoint").tolist() == [1]
    assert intent.topic_rows("webhook").tolist() == []  # two names start with it, and it is short
    assert intent.topic_rows("webhookeve").tolist() == [2]
    assert intent.topic_rows("ingest").tolist() == []  # shorter than TOPIC_PREFIX_MIN_CHARS
    assert intent.topic_rows(None).tolist() == []


def test_a_topic_key_derived_from_a_page_name_names_that_page() -> None:
    intent = IntentIndex(
        verbs=np.zeros(4, dtype=np.int32),
        model=np.zeros(4, dtype=bool),
        lead=np.ones(4, dtype=bool),
        topics={
            "enrich": np.array([0]),
            "schedule": np.array([1]),
            "installation": np.array([2]),
            "company": np.array([3]),
        },
    )
    assert intent.topic_rows("enrichment").tolist() == [0]
    assert intent.topic_rows("scheduling").tolist() == [1]
    assert intent.topic_rows("companie").tolist() == [3]  # a stem that ends otherwise (compani)
    assert intent.topic_rows("install").tolist() == []  # an action: a shorter word of a longer name
    assert intent.topic_rows("schedul").tolist() == []


def test_one_thing_is_the_single_form_and_in_one_call_the_batch_form() -> None:
    from docs_mcp_core.search.intent import SINGLE

    assert query_verbs(["delete", "a", "single", "short", "link"]) == bit("delete") | SINGLE
    assert query_verbs(["get", "one", "workflow"]) == bit("get") | SINGLE
    assert query_verbs(["fire", "several", "events", "in", "a", "single", "request"]) == bit("fire") | bit(
        "bulk"
    )
    assert query_verbs(["mark", "them", "paid", "in", "one", "request"]) == bit("bulk")
    assert query_verbs(["a", "single", "tag"]) == 0  # no action: nothing to prefer


def test_a_query_about_one_thing_damps_the_batch_operations() -> None:
    from docs_mcp_core.search.intent import SINGLE, verb_factors

    verbs = np.array([heading_verbs("delete"), heading_verbs("deleteMany"), heading_verbs("list")])
    single = verb_factors(verbs, bit("delete") | SINGLE, 0.3).tolist()
    assert single == [1.3, 1.0, 1.0]
    assert verb_factors(verbs, bit("delete"), 0.3).tolist() == [1.3, 1.3, 1.0]


def test_the_single_mark_is_no_group_of_the_verb_table() -> None:
    from docs_mcp_core.search.intent import SINGLE, UNDO_GROUP

    every_group = sum(1 << bit for bit in range(len(VERB_GROUPS)))
    assert not SINGLE & every_group
    assert UNDO_GROUP & every_group  # the undo group is a group of the table
