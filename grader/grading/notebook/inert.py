"""Make the autograded notebook inert before an instructor's browser shows it.

formgrader shows the autograded notebook through nbconvert, which puts a markdown
cell's HTML, a ``text/html`` or ``image/svg+xml`` output and a ``text/markdown``
output into the page as they are, and runs ``application/javascript`` outputs. All of
them are the student's: the markdown cells are their text, the outputs what their
code displayed while it was graded. So before the notebook is written:

* a markdown or raw cell is rendered as nbconvert renders it, and the HTML read with a
  parser that follows the HTML standard (html5lib's, which bleach ships). If it holds
  anything outside a list of formatting elements, attributes and link schemes
  (``<script>``, an ``on...=`` attribute, a ``javascript:`` link, an ``<iframe>``,
  ``<object>`` or ``<embed>``, inline SVG or MathML, a ``<style>``), or its text holds
  one of a few words that are never in honest work (``javascript:``, ``\\href``,
  ``<script``), the cell is cleaned with bleach and checked again; a cell still not
  inert is shown as its literal text in a code block. Either way a line says so.
* an output keeps ``text/plain``, ``text/latex``, ``application/json`` and images whose
  data is base64; ``text/html`` and ``text/markdown`` are treated as cells are; an
  ``image/svg+xml`` that holds a script, an event handler, a link or ``foreignObject``
  is removed (a plain figure stays); a widget view must be a plain model reference;
  every other kind (``application/javascript`` among them) is removed.

A cell or output with nothing active stays exactly as it was. :func:`notebook` returns
what was removed, for an integrity note.
"""
from __future__ import annotations

import base64
import binascii
import re

import bleach
from bleach import html5lib_shim
from bleach.css_sanitizer import CSSSanitizer

HTML_NS = "http://www.w3.org/1999/xhtml"
TAGS = frozenset({
    "a", "abbr", "acronym", "b", "bdi", "bdo", "blockquote", "br", "caption", "center", "cite",
    "code", "col", "colgroup", "dd", "del", "details", "dfn", "div", "dl", "dt", "em", "figcaption",
    "figure", "font", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "ins", "kbd", "li",
    "mark", "ol", "p", "pre", "q", "rp", "rt", "ruby", "s", "samp", "small", "span", "strike",
    "strong", "sub", "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "tt",
    "u", "ul", "var", "wbr"})
COMMON = {"class", "title", "style", "align", "dir", "lang"}
ATTRIBUTES = {
    "a": {"href", "name"}, "img": {"src", "alt", "width", "height"}, "td": {"colspan", "rowspan", "valign"},
    "th": {"colspan", "rowspan", "valign", "scope"}, "col": {"span", "width"}, "colgroup": {"span"},
    "ol": {"start", "type", "reversed"}, "li": {"value"}, "details": {"open"}, "font": {"color", "size"},
    "table": {"border", "cellpadding", "cellspacing", "width"}, "q": {"cite"}, "blockquote": {"cite"},
    "del": {"cite", "datetime"}, "ins": {"cite", "datetime"},
    # nbconvert gives every heading an id for its anchor link
    **{f"h{n}": {"id"} for n in range(1, 7)}}
URL_ATTRIBUTES = {"href", "src", "cite"}
PROTOCOLS = frozenset({"http", "https", "mailto", "attachment"})
# Words that do not occur in honest answers or outputs of this course, checked in the
# text itself as well, in case a browser reads some markup otherwise than the parser.
TRIPWIRE = re.compile(r"j\s*a\s*v\s*a\s*s\s*c\s*r\s*i\s*p\s*t\s*:|vbscript\s*:|data\s*:\s*text/html|"
                      r"<\s*/?\s*(script|iframe|object|embed|frame|frameset|base|meta|link|svg|math|style|"
                      r"form|template|noscript)\b|\\(href|url|unicode)\b|srcdoc", re.I)
STYLE_DANGER = re.compile(r"url\s*\(|expression|javascript|@import|behavior|-moz-binding|position\s*:", re.I)
SAFE_MIME = {"text/plain", "text/latex", "application/json"}
IMAGES = {"image/png", "image/jpeg", "image/gif"}
WIDGET = "application/vnd.jupyter.widget-view+json"
SVG_DANGER = re.compile(r"<\s*(script|foreignObject|iframe|object|embed|handler|listener|set|animate)\b|"
                        r"\bon[a-z]+\s*=|href\s*=|javascript|<!ENTITY|<\s*style\b", re.I)
NOTE = "*[The grader removed active markup (scripts, event handlers, script links or embedded frames) " \
       "from this cell.]*"
_CLEANER = bleach.Cleaner(tags=TAGS, attributes=lambda tag, name, value: _attribute_ok(tag, name, value),
                          protocols=PROTOCOLS, strip=True, strip_comments=True,
                          css_sanitizer=CSSSanitizer())


def _scheme(value: str) -> str:
    """A URL's scheme as a browser reads it ("" for a relative URL)."""
    value = re.sub(r"[\t\n\r]", "", value).strip("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0c\x0e"
                                                  "\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a"
                                                  "\x1b\x1c\x1d\x1e\x1f ")
    match = re.match(r"([a-zA-Z][a-zA-Z0-9+.\-]*):", value)
    return match.group(1).lower() if match else ""


def _attribute_ok(tag: str, name: str, value: str) -> bool:
    name = name.lower()
    if name not in COMMON and name not in ATTRIBUTES.get(tag, ()):
        return False
    if name in URL_ATTRIBUTES and _scheme(value) not in ("", *PROTOCOLS):
        return False
    return not (name == "style" and STYLE_DANGER.search(value))


def findings(html: str) -> list[str]:
    """What in ``html`` is not inert, as a browser would parse it (empty: nothing)."""
    dom = html5lib_shim.HTMLParser(namespaceHTMLElements=True).parseFragment(html)
    found = []
    for token in html5lib_shim.getTreeWalker("etree")(dom):
        if token["type"] not in ("StartTag", "EmptyTag"):
            continue
        tag, namespace = token["name"].lower(), token.get("namespace")
        allowed = tag in TAGS and namespace in (None, HTML_NS)
        if not allowed:
            found.append(f"<{tag}>")
        for (_, name), value in token["data"].items():
            name = name.lower()
            if name.startswith("on"):
                found.append(f"{name}=")
            elif not allowed:
                continue  # the element goes, and its attributes with it
            elif name in URL_ATTRIBUTES and _scheme(value) not in ("", *PROTOCOLS):
                found.append(f"a {_scheme(value)}: link")
            elif not _attribute_ok(tag, name, value):
                found.append(f"{name}= on <{tag}>")
    return list(dict.fromkeys(found))


def _tripwire(text: str) -> list[str]:
    return [f"{m.group(0).strip()!r} in the text" for m in TRIPWIRE.finditer(text)][:5]


def _markdown_html(source: str) -> str:
    """The HTML nbconvert makes of a markdown cell; when it cannot make any (a reference
    to an attachment the cell does not have), the text itself, read as HTML."""
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    try:
        return markdown2html_mistune(source)
    except Exception:  # noqa: BLE001 (nbconvert raises InvalidNotebook and parser errors)
        return source


def _literal(text: str) -> str:
    fence = "`" * max(3, max((len(r) for r in re.findall(r"`+", text)), default=0) + 1)
    return f"{fence}text\n{text}\n{fence}"


def markdown(source: str) -> tuple[str, list[str]]:
    """A markdown cell's source made inert, and what was found ("" and [] : unchanged)."""
    found = findings(_markdown_html(source)) or _tripwire(source)
    if not found:
        return source, []
    cleaned = _CLEANER.clean(source)
    if not findings(_markdown_html(cleaned)) and not _tripwire(cleaned):
        return f"{NOTE}\n\n{cleaned}", found
    return f"{NOTE} It is shown as text.\n\n{_literal(source)}", found


def html(text: str) -> tuple[str | None, list[str]]:
    """An HTML output made inert (None: it has to go), and what was found."""
    found = findings(text) or _tripwire(text)
    if not found:
        return text, []
    cleaned = _CLEANER.clean(text)
    return (cleaned if not findings(cleaned) and not _tripwire(cleaned) else None), found


def _text(value) -> str | None:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "".join(value)
    return value if isinstance(value, str) else None


def _base64(value) -> bool:
    text = _text(value)
    if text is None:
        return False
    try:
        base64.b64decode(re.sub(r"\s", "", text), validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _plain_metadata(value, depth: int = 0) -> bool:
    """Output metadata that nbconvert may put into an attribute: numbers, booleans and
    short words only."""
    if depth > 4:
        return False
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain_metadata(v, depth + 1) for k, v in value.items())
    if isinstance(value, list):
        return all(_plain_metadata(v, depth + 1) for v in value)
    if isinstance(value, str):
        return re.fullmatch(r"[\w .,:/+-]{0,80}", value) is not None
    return value is None or isinstance(value, (bool, int, float))


def _widget_view(value) -> bool:
    return isinstance(value, dict) and set(value) <= {"model_id", "version_major", "version_minor"} \
        and isinstance(value.get("model_id"), str) and re.fullmatch(r"[0-9a-f]{32}", value["model_id"]) \
        is not None and all(isinstance(value.get(k, 0), int) for k in ("version_major", "version_minor"))


def output(out: dict) -> list[str]:
    """Make one output of a code cell inert, in place; return what was removed."""
    if out.get("output_type") not in ("display_data", "execute_result"):
        return []  # stream and error text is escaped wherever it is shown
    removed = []
    data = out.get("data") if isinstance(out.get("data"), dict) else {}
    for mime in list(data):
        value = data[mime]
        if mime in SAFE_MIME:
            text = _text(value)
            if mime == "text/latex" and (text is None or _tripwire(text)):
                removed.append("a text/latex output with a link")
                del data[mime]
            continue
        if mime in IMAGES:
            if not _base64(value):
                removed.append(f"an {mime} output that is not an image")
                del data[mime]
            continue
        if mime == "image/svg+xml":
            text = _text(value)
            if text is None or SVG_DANGER.search(text):
                removed.append("an SVG output with a script, event handler or link")
                del data[mime]
            continue
        if mime in ("text/html", "text/markdown"):
            text = _text(value)
            new, found = (None, ["not text"]) if text is None else (
                html(text) if mime == "text/html" else markdown(text))
            if found:
                removed.append(f"from a {mime} output: {', '.join(found)}")
                if new is None:
                    del data[mime]
                else:
                    data[mime] = new
            continue
        if mime == WIDGET and _widget_view(value):
            continue
        removed.append(f"a {mime} output")
        del data[mime]
    if not _plain_metadata(out.get("metadata", {})):
        removed.append("output metadata that is not plain")
        out["metadata"] = {}
    if removed and not data:
        data["text/plain"] = "[output removed by the grader: it was active markup]"
    out["data"] = data
    return removed


def notebook(nb: dict) -> list[str]:
    """Make the notebook ``nb`` inert, in place; return one line per cell changed."""
    notes = []
    for i, cell in enumerate(nb.get("cells", [])):
        where = f"cell `{cell.get('id') or i}`"
        if cell.get("cell_type") in ("markdown", "raw"):
            source = _text(cell.get("source")) or ""
            new, found = markdown(source) if cell["cell_type"] == "markdown" else html(source)
            if found:
                cell["source"] = new if new is not None else ""
                notes.append(f"{where}: active markup was removed before formgrader shows it "
                             f"({', '.join(found)}).")
        elif cell.get("cell_type") == "code":
            removed = [r for out in cell.get("outputs", []) if isinstance(out, dict) for r in output(out)]
            if removed:
                notes.append(f"{where}: its output held active markup, removed before formgrader "
                             f"shows it ({'; '.join(dict.fromkeys(removed))}).")
    return notes
