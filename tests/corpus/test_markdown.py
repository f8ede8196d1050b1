from ratio_bench.corpus.markdown import looks_like_markdown, parse_markdown, parse_plain
from ratio_bench.corpus.sections import SectionCategory as C


def _by_category(parsed):
    out = {}
    for p in parsed.paragraphs:
        out.setdefault(p.category, []).append(p.text)
    return out


def test_nougat_sections_and_removals(nougat_text):
    parsed = parse_markdown(nougat_text)
    cats = _by_category(parsed)
    text = " ".join(p.text for p in parsed.paragraphs)
    # front matter (title, authors, affiliations, e-mail) is gone; abstract and body are kept and tagged
    assert "Alice Example" not in text and "alice@example.org" not in text
    assert parsed.title == "Gated Residual Message Passing for Deep Graph Networks"
    assert cats[C.ABSTRACT][0].startswith("Deep graph networks")
    assert any("To address this issue" in t for t in cats[C.INTRODUCTION])
    # an unrecognised numbered section is its own top-level section; its subsection inherits
    assert any("represen" in t for t in cats[C.OTHER])
    assert any(p.section == "3.1 Gate Parameterisation" and p.category is C.OTHER for p in parsed.paragraphs)
    # hard-wrapped, hyphenated line joined
    assert any("representation of each node" in t for t in cats[C.OTHER])
    # run-in bold heading stripped; footnote, tables, display math, captions removed
    assert any(t.startswith("We introduce the gate") for t in cats[C.INTRODUCTION])
    for gone in ("Footnote", "\\begin{table}", "| GCN", "h_{v}", "Table 1:", "Figure 2:"):
        assert gone not in text
    # non-prose sections are categorised (so the reader can drop them), appendix is sticky, checklist recognised
    assert cats[C.ACKNOWLEDGMENTS] and cats[C.REFERENCES] and cats[C.CHECKLIST]
    assert len(cats[C.APPENDIX]) == 2
    assert parsed.dropped["front_matter"] >= 3
    assert parsed.dropped["caption"] == 2 and parsed.dropped["footnote"] >= 1 and parsed.dropped["table"] == 1


def test_docling_entities_footnotes_and_images(docling_text):
    parsed = parse_markdown(docling_text)
    cats = _by_category(parsed)
    text = " ".join(p.text for p in parsed.paragraphs)
    assert "noisy & inconsistent" in text  # HTML entity unescaped
    assert "Carol Fixture" not in text and "carol@example.org" not in text
    assert parsed.title == "Label Reweighting with a Clean Anchor Set"
    assert "Work done during" not in text  # ∗ footnote
    assert "anchor set is sampled once" not in text  # numbered footnote debris
    assert "<!--" not in text and "Figure 1" not in text
    assert [p.category for p in parsed.paragraphs] == [C.ABSTRACT, C.INTRODUCTION, C.METHOD, C.CONCLUSION]
    assert cats[C.CONCLUSION][0].startswith("Reweighting against")


def test_plain_paragraphs_have_no_sections():
    text = "First paragraph of prose.\nIt wraps here.\n\nTable 3: A caption.\n\nSecond paragraph."
    parsed = parse_plain(text)
    assert [p.text for p in parsed.paragraphs] == [
        "First paragraph of prose. It wraps here.",
        "Second paragraph.",
    ]
    assert {p.category for p in parsed.paragraphs} == {C.OTHER}
    assert parsed.dropped["caption"] == 1


def test_markdown_detection(nougat_text):
    assert looks_like_markdown(nougat_text)
    assert not looks_like_markdown("No headings here.\n\nJust prose. #hashtag")
