"""ADF and Confluence storage format to text, with the references they carry."""

from __future__ import annotations

from connectors.sources.adf import adf_content, adf_to_text, storage_content


def test_adf_paragraphs_lists_mentions_and_links() -> None:
    doc = {
        "type": "doc",
        "version": 1,
        "content": [
            {"type": "heading", "attrs": {"level": 2}, "content": [{"type": "text", "text": "Plan"}]},
            {
                "type": "paragraph",
                "content": [
                    {"type": "mention", "attrs": {"id": "acc-1", "text": "@Ann"}},
                    {"type": "text", "text": " see "},
                    {
                        "type": "text",
                        "text": "runbook",
                        "marks": [{"type": "link", "attrs": {"href": "https://w/x"}}],
                    },
                    {"type": "hardBreak"},
                    {"type": "inlineCard", "attrs": {"url": "https://w/y"}},
                ],
            },
            {
                "type": "bulletList",
                "content": [
                    {
                        "type": "listItem",
                        "content": [{"type": "paragraph", "content": [{"type": "text", "text": "one"}]}],
                    },
                    {
                        "type": "listItem",
                        "content": [{"type": "paragraph", "content": [{"type": "text", "text": "two"}]}],
                    },
                ],
            },
        ],
    }
    content = adf_content(doc)
    assert content.text.splitlines()[0] == "Plan"
    assert "@Ann see runbook" in content.text and "https://w/y" in content.text
    assert "- one" in content.text and "- two" in content.text
    assert content.urls == ["https://w/x", "https://w/y"]


def test_adf_tolerates_missing_and_odd_input() -> None:
    assert adf_to_text(None) == ""
    assert adf_to_text("plain  text") == "plain text"
    assert adf_to_text({"type": "doc", "content": [{"type": "paragraph", "content": "oops"}, 3]}) == ""


def test_storage_format_text_links_and_jira_macros() -> None:
    xhtml = (
        '<h1>Title</h1><p>See <ac:link><ri:page ri:content-title="Deploy guide" /></ac:link> and '
        '<a href="https://x/wiki/spaces/E/pages/5">this</a>.</p>'
        '<ac:structured-macro ac:name="jira"><ac:parameter ac:name="key">ENG-1</ac:parameter>'
        '</ac:structured-macro><ac:structured-macro ac:name="code"><ac:parameter ac:name="language">py'
        "</ac:parameter><ac:plain-text-body><![CDATA[print(1)]]></ac:plain-text-body></ac:structured-macro>"
        "<table><tr><th>a</th><td>b &amp; c</td></tr></table>"
    )
    content = storage_content(xhtml)
    assert content.page_titles == ["Deploy guide"]
    assert content.jira_keys == ["ENG-1"]
    assert content.urls == ["https://x/wiki/spaces/E/pages/5"]
    assert "print(1)" in content.text and "b & c" in content.text and "Deploy guide" in content.text
    assert "language" not in content.text and "py\n" not in content.text
