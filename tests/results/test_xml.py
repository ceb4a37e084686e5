"""XML builder: escaping, cleaning, names, well-formedness and the tree-level size cap."""

from __future__ import annotations

import xml.dom.minidom
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit.results import XML_NOTE_MAX, cap_xml, clean_xml_chars, to_wire, validate_result, xml_result
from mcpkit.results._xml import DECLARATION, Element, escape_attr, escape_text, parse_xml, render

# Any code point, lone surrogates and controls included.
any_text = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=()))
tag_names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,9}", fullmatch=True)


def parse_both(document: str) -> ET.Element:
    """Parse with both standard parsers (each raises on malformed input); return the etree root."""
    xml.dom.minidom.parseString(document)
    return ET.fromstring(document)


def expected_after_parse(text: str) -> str:
    """What a parser gives back: the text minus the characters XML cannot carry."""
    return clean_xml_chars(text)


def test_declaration_and_escaping() -> None:
    root = Element("issue", {"subject": "a & b < c > d \"e\" 'f'"}, text="x & <y> \"z\" 'w'")
    doc = render(root)
    assert doc.startswith(DECLARATION + "\n")
    assert '"a &amp; b &lt; c &gt; d &quot;e&quot; &apos;f&apos;"' in doc
    assert ">x &amp; &lt;y&gt; &quot;z&quot; &apos;w&apos;</issue>" in doc
    parsed = parse_both(doc)
    assert parsed.get("subject") == "a & b < c > d \"e\" 'f'"
    assert parsed.text == "x & <y> \"z\" 'w'"


def test_forbidden_characters_are_removed() -> None:
    bad = "a\x00b\x01c\x08d\x0be\x0cf\x1fg\ud800h\udfffi\ufffej\uffffk"
    assert clean_xml_chars(bad) == "abcdefghijk"
    assert clean_xml_chars("tab\tlf\ncr\r\U0001f600\ue000\ufffd") == "tab\tlf\ncr\r\U0001f600\ue000\ufffd"
    doc = render(Element("r", {"a": bad}, bad))
    parsed = parse_both(doc)
    assert parsed.text == "abcdefghijk" and parsed.get("a") == "abcdefghijk"


def test_whitespace_in_attributes_and_carriage_returns_survive() -> None:
    assert escape_attr("a\tb\nc\rd") == "a&#9;b&#10;c&#13;d"
    assert escape_text("a\r\nb") == "a&#13;\nb"
    parsed = parse_both(render(Element("r", {"v": "1\t2\n3\r4"}, "x\r\ny")))
    assert parsed.get("v") == "1\t2\n3\r4"
    assert parsed.text == "x\r\ny"


def test_values_are_converted() -> None:
    root = Element("r", {"yes": True, "no": False, "n": 3, "f": 1.5, "gone": None}, text=7)
    assert root.attrs == {"yes": "true", "no": "false", "n": "3", "f": "1.5"}
    assert root.text == "7"
    assert Element("r", text=None).text is None
    assert root.set("n", None).attrs.get("n") is None


@pytest.mark.parametrize("name", ["", "1abc", "a b", "a:b", "a<b", "-x", ".x", "a&b", "x\x00", "é\u0300:"])
def test_invalid_names_are_refused_at_build_time(name: str) -> None:
    with pytest.raises(ValueError, match="invalid XML tag name"):
        Element(name)
    with pytest.raises(ValueError, match="invalid XML attribute name"):
        Element("ok", {name: "v"})


def test_xmlns_attribute_is_refused() -> None:
    with pytest.raises(ValueError, match="namespaces"):
        Element("r", {"xmlns": "urn:x"})


def test_unicode_names_are_allowed_when_parsers_accept_them() -> None:
    root = Element("課題", {"名前": "値"}, "本文")
    parsed = parse_both(render(root))
    assert parsed.tag == "課題" and parsed.get("名前") == "値" and parsed.text == "本文"


def test_child_and_add_build_nested_documents() -> None:
    root = Element("issues", {"total": 2})
    first = root.child("issue", {"id": 1}, "one")
    second = Element("issue", {"id": 2})
    second.child("note", text="n")
    assert root.add(second) is root
    assert first.text == "one"
    with pytest.raises(TypeError):
        root.add("not an element")  # type: ignore[arg-type]
    parsed = parse_both(render(root))
    assert [c.get("id") for c in parsed] == ["1", "2"]
    assert parsed[1][0].text == "n"
    assert render(root, declaration=False).startswith("<issues")


def test_deep_trees_render_without_recursion() -> None:
    root = node = Element("d")
    for _ in range(3000):
        node = node.child("d")
    doc = render(root)
    assert doc.count("<d") == 3001


def test_parse_xml_round_trips_and_refuses_bad_input() -> None:
    tree = parse_xml('<a x="1"><b>t &amp; u</b>  <c/>tail</a>')
    assert tree.children[1].tail == "tail"
    assert parse_both(render(tree)).find("b").text == "t & u"  # type: ignore[union-attr]
    for bad in ["<a>", "<a></b>", "text", '<!DOCTYPE a [<!ENTITY e "x">]><a>&e;</a>', "<a:b/>"]:
        with pytest.raises(ValueError):
            parse_xml(bad)


def test_xml_result_is_valid_and_accepts_text() -> None:
    result = xml_result('<r><i n="1"/></r>')
    raw = to_wire(result)
    assert validate_result(raw) == []
    assert raw["content"][0]["text"].startswith(DECLARATION)
    with pytest.raises(ValueError):
        xml_result("<r>")


def test_cap_drops_trailing_children_and_says_so() -> None:
    root = Element("issues")
    for i in range(100):
        root.child("issue", {"id": i}, "subject " * 5)
    before = render(root)
    capped = cap_xml(root, 2000)
    assert render(root) == before, "the caller's tree must not change"
    assert len(capped) <= 2000 + XML_NOTE_MAX
    parsed = parse_both(capped)
    assert parsed.get("truncated") == "true"
    kept = len(parsed)
    assert 0 < kept < 100
    assert [c.get("id") for c in parsed] == [str(i) for i in range(kept)]
    assert f"{100 - kept} of 100 child elements omitted" in capped
    assert cap_xml(root, len(before)) == before


def test_cap_shortens_a_single_huge_child() -> None:
    root = Element("issue")
    root.child("description", {"by": "x" * 3000}, "y" * 20000)
    capped = cap_xml(root, 1000)
    assert len(capped) <= 1000 + XML_NOTE_MAX
    parsed = parse_both(capped)
    description = parsed.find("description")
    assert description is not None and description.text is not None
    assert description.text.startswith("yyyy") and "[cut " in description.text
    assert "[cut 19960 of 20000 characters]" in description.text, "the marker says how much went"


@settings(max_examples=300, deadline=None)
@given(text=any_text, value=any_text)
def test_any_text_round_trips_through_the_builder(text: str, value: str) -> None:
    doc = render(Element("r", {"v": value}, text))
    root = parse_both(doc)
    assert (root.text or "") == expected_after_parse(text)
    assert root.get("v") == expected_after_parse(value)
    again = parse_xml(doc)
    assert (again.text or "") == expected_after_parse(text)


@st.composite
def trees(draw: st.DrawFn) -> Element:
    root = Element(draw(tag_names), {draw(tag_names): draw(st.text(max_size=60))}, draw(st.text(max_size=80)))
    for _ in range(draw(st.integers(0, 25))):
        child = root.child(draw(tag_names), {"k": draw(any_text)}, draw(any_text))
        for _ in range(draw(st.integers(0, 3))):
            child.child(draw(tag_names), text=draw(st.text(max_size=300)))
    return root


@settings(max_examples=150, deadline=None)
@given(root=trees(), limit=st.integers(500, 5000))
def test_cap_never_exceeds_limit_plus_note_and_stays_well_formed(root: Element, limit: int) -> None:
    capped = cap_xml(root, limit)
    assert len(capped) <= limit + XML_NOTE_MAX
    parsed = parse_both(capped)
    assert parsed.tag == root.tag
    full = render(root)
    if len(full) <= limit:
        assert capped == full
    else:
        assert parsed.get("truncated") == "true"
        assert validate_result(to_wire(xml_result(root, limit=limit))) == []
