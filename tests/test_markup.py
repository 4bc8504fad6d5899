"""``ra.text.markup``: the dialects of real documentation read for their text, construct by
construct (the golden trees of ``test_dialects.py`` show them on whole documents)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ra.query.snippets import strip_markdown
from ra.text.document import parse_document, slugify
from ra.text.markup import (
    comment_anchor,
    heading_anchor,
    indented_code,
    inline_tags,
    mask_comments,
    plain_text,
    plain_text_aside,
    set_code_aside,
    set_code_aside_before,
)


@pytest.mark.parametrize("title, expected", [
    ("Use CORSMiddleware { #use-corsmiddleware }", ("Use CORSMiddleware", "use-corsmiddleware")),
    ("Settings {#settings-asciidoc}", ("Settings", "settings-asciidoc")),
    ("Using the Git Repository {: #git }", ("Using the Git Repository", "git")),
    ("Styled { .big #x data-a=1 }", ("Styled", "x")),
    ("Classes only { .wide }", ("Classes only", None)),
    ("Version {#v1.2/beta}", ("Version", "v1-2-beta")),  # what an id cannot hold becomes -
    ("Use {braces} in text", ("Use {braces} in text", None)),
    ("Set {key}", ("Set {key}", None)),
    # Python-Markdown's attr_list (Material for MkDocs): bare keys in a list set off by
    # blanks, an id as a key
    ("Changes to `*.html` files { data-search-exclude }", ("Changes to `*.html` files", None)),
    ("4.6.1 { id=\"4.6.1\" }", ("4.6.1", "4-6-1")),
    ("Table {: id='tab' .wide }", ("Table", "tab")),
    ("Set {key }", ("Set {key }", None)),
    ("Set { a, b }", ("Set { a, b }", None)),
    # docsify's heading options
    ("themeColor ⚠️ :id=themecolor", ("themeColor ⚠️", "themecolor")),
    ("Both :id=both :docsify-ignore", ("Both", "both")),
    ("Heading 2 {docsify-ignore}", ("Heading 2", None)),
    ("Getting Started :docsify-ignore-all", ("Getting Started", None)),
    ("Set a:id=x stays", ("Set a:id=x stays", None)),
])
def test_heading_anchor(title, expected):
    assert heading_anchor(title) == expected


@pytest.mark.parametrize("line, anchor", [
    ("## Reference {/*reference*/}\n", "reference"),  # react.dev
    ("### `useState(initialState)` {/*usestate*/}", "usestate"),
    ("### Heading IDs {/* #heading-ids */}", "heading-ids"),  # Docusaurus 3.10
    ("## Title {/* #my-id kept in sync by write-heading-ids */}", "my-id"),
    ("## Title {/*#v1.2*/} ##", "v1-2"),  # a closing sequence; what an id cannot hold
    ("## Title {/* TODO */}", None),  # an upper-case word is a comment, not a slug
    ("## Title {/* two words */}", None),  # Docusaurus wants the #; react.dev one slug
    ("## Title {/*x*/} and more", None),  # not at the end
    ("## Title {#plain-id}", None),  # heading_anchor's business
])
def test_comment_anchor(line, anchor):
    assert comment_anchor(line) == anchor


def test_a_heading_id_in_an_mdx_comment_is_the_chunk_id():
    doc = parse_document("# Page\n\n## Reference {/*reference*/}\n\nx\n\n### `f(x)` {/*f*/}\n\n"
                         "y\n\n## IDs {/* #ids */}\n\nz\n\n## Note {/* TODO */}\n\nw\n\n"
                         "Setext {/*set*/}\n---\n\nv\n", "t", "a.md")
    assert [(n.slug, n.title) for n in doc.nodes[2:]] == [
        ("reference", "Reference"), ("f", "f(x)"), ("ids", "IDs"), ("note", "Note"),
        ("set", "Setext")]


def test_a_kramdown_attribute_list_after_a_heading_gives_its_id():
    """Jekyll's changelog: ``## 4.0.0 / 2019-08-19`` then ``{: #v4-0-0}``, and a
    ``### Bug Fixes`` per release, each ``{: #bug-fixes-v4-0-0}``: the ids links use."""
    doc = parse_document("# History\n\n## 4.0.0 / 2019-08-19\n{: #v4-0-0}\n\n### Bug Fixes\n"
                         "{: #bug-fixes-v4-0-0}\n\n* x\n\n### Bug Fixes\n\n* y\n\n"
                         "Setext\n------\n{:.c #s}\n\n## Styled\n{: .no_toc }\n\n"
                         "## Later\n\n{: #not-its-id}\n", "t", "h.md")
    assert [n.slug for n in doc.nodes[2:]] == [
        "v4-0-0", "bug-fixes-v4-0-0", "bug-fixes", "s", "styled", "later"]
    assert "{:" not in strip_markdown(doc.nodes[3].body)


def test_template_markup_leaves_a_heading_with_code_and_the_code_stays():
    """Jekyll's version badges: ``### Binary operators in `where_exp` filter {%- include
    docs_version_badge.html version="4.0" -%}`` was that title and its slug; a heading
    that shows template markup in code keeps it."""
    doc = parse_document('# F\n\n### Binary operators in `where_exp` filter {%- include '
                         'docs_version_badge.html version="4.0" -%}\n\nx\n\n'
                         "## The `{{ x }}` tag\n\ny\n", "t", "a.md")
    assert [(n.slug, n.title) for n in doc.nodes[2:]] == [
        ("binary-operators-in-where_exp-filter", "Binary operators in where_exp filter"),
        ("the-x-tag", "The {{ x }} tag")]


def test_a_heading_inside_a_kramdown_comment_is_no_heading():
    doc = parse_document("# Real\n\n{::comment}\n# Draft\n{:/comment}\n\nMore\n", "t", "n.md")
    assert [n.title for n in doc.nodes] == ["Real", "Real"]


def test_declared_ids_become_slugs_and_repeat_like_slugs():
    doc = parse_document("# Intro\n\nx\n\n## Origin\n\na\n\n## Other {#origin}\n\nb\n\n"
                         "## Again {#origin}\n\nc\n", "t", "a.md")
    # the declared id is reserved first: the auto slug of "Origin" steps aside
    assert [n.slug for n in doc.nodes[1:]] == ["intro", "origin-1", "origin", "origin-2"]
    assert [n.title for n in doc.nodes[2:]] == ["Origin", "Other", "Again"]


@pytest.mark.parametrize("source, shown", [
    ('!!! note "Phew"\n    Body text.', "Phew Body text."),
    ("??? tip\n    Hidden tip.", "Tip Hidden tip."),
    ('!!! warning ""\n    No title.', "No title."),
    ('=== "Tab one"\n    In a tab.', "Tab one In a tab."),
    ("/// note | Technical Details\nInside.\n///", "Technical Details Inside."),
    (":::tip[Use tabs]\nText.\n:::", "Use tabs Text."),
    (":::note Your Title\n\nText.\n\n:::", "Your Title Text."),
    (":::danger\nCareful.\n:::", "Danger Careful."),
    ("::::{myst-example}\n:::{note}\n:class: dropdown\nInside a note.\n:::\n::::",
     "Note Inside a note."),
    ("```{admonition} My title\n:class: tip\nContent *here*.\n```", "My title Content here."),
    ("```{code-block} python\nx = '<b>'\n```", "x = '<b>'"),  # a code directive stays code
    ("> [!warning]- Don't forget\n> body", "Don't forget body"),
    ("> [!NOTE]\n> An alert.", "Note An alert."),
    ("import Tabs from '@theme/Tabs';\n\nText.", "Text."),
    ("export const meta = {\n  a: 1,\n};\n\nText.", "Text."),
    ('<Tabs groupId="os">\n<TabItem value="mac" label="macOS">Mac text.</TabItem>\n</Tabs>',
     "macOS Mac text."),
    ("{/* an MDX comment */}Text.", "Text."),
    # JSX attributes holding objects, over lines (Mintlify); an API field shows its name
    ('<img\n  src="/a.png"\n  style={{\n    width: \'268px\',\n  }}\n  alt="The bar."\n/>',
     "The bar."),
    ('<Update label="May 2026" tags={["New"]} rss={{ title: "x", description: "y" }}>\n'
     "Shipped.\n</Update>", "May 2026 Shipped."),
    # braces nested deeper (Starlight: an array of objects holding arrays of objects); a
    # card's description is text a reader sees (Starlight's <LinkCard>)
    ("<SidebarPreview\n\tconfig={[\n\t\t{\n\t\t\tlabel: 'stars',\n\t\t\titems: "
     "[{ label: 'Betelgeuse', link: '' }],\n\t\t},\n\t]}\n/>\n\nLearn more.", "Learn more."),
    ('<ThemeDesigner labels={{ presets: { label: "P", ocean: { a: { b: "c" } } } }}>\nX.\n'
     "</ThemeDesigner>", "X."),
    ('<LinkCard\n\ttitle="FeelBack"\n\tdescription="Add a feedback system."\n\thref="x"\n/>',
     "FeelBack Add a feedback system."),
    # a quoted value holding < and > (Fumadocs), over lines (the Rust book's alt texts);
    # an apostrophe is no quote; a JSX fragment shows its content
    ("<auto-type-table type=\"Omit<import('x').Props, keyof React.ComponentProps<'div'>>\" />"
     "\nText.", "Text."),
    ('<img alt="Two tables: s1 on the\nstack." src="img/t.svg" class="center"\n/> After.',
     "Two tables: s1 on the stack. After."),
    ("ssh://<YOUR USER'S EMAIL>@example.com and <>![Nav](/nav.png)</>",
     "ssh:// @example.com and Nav"),
    # rehype-pretty-code (Nextra, Fumadocs): an inline code span's {:lang} is not shown;
    # format specs stay
    ("Set `navigation: true{:js}`, or `<td>{:jsx}`.", "Set navigation: true, or <td>."),
    ("Print `{:x}`, `{:?}`, `x{:>10}`.", "Print {:x}, {:?}, x{:>10}."),
    ('<ParamField path="user_id" type="string" required>\n  The id.\n</ParamField>',
     "user_id The id."),
    ('<ResponseField name="total" type="number">Count.</ResponseField> <input name="q">',
     "total Count."),
    ("{{< figure src=\"a.png\" caption=\"A caption\" >}}\nAfter.", "A caption After."),
    ("{{% note %}}\nNoted.\n{{% /note %}}", "Noted."),
    ("(my-target)=\n## Heading\n\nSee {ref}`the label <my-target>`.", "Heading See the label."),
    ("% a MyST comment\nText.", "Text."),
    ("See [[Path to file|the alias]] and [[Note#Part]].", "See the alias and Note Part."),
    ("An image ![[diagram.png]] here.", "An image here."),
    ("Text %% hidden %% shown.", "Text shown."),
    ("Text <!-- hidden --> shown.", "Text shown."),
    ("Use `%%` and `<!--` in code.", "Use %% and <!-- in code."),
    ("Note[^1].\n\n[^1]: The note.", "Note. The note."),
    ("| a | b |\n|---|:-:|\n| c | d |", "a b c d"),
    ("Title\n=====\n\nText", "Title Text"),
    ("A [link](https://example.com/x) and [ref][r] and [short].\n\n[r]: https://e.com",
     "A link and ref and short."),
    ("Icons :material-alert: and :smile: gone, 10:30:45 kept.",
     "Icons and gone, 10:30:45 kept."),
    ("- [ ] a task\n- [x] done", "a task done"),
    ("Some ==highlighted== text.", "Some highlighted text."),
    ("A &amp; B &lt;tag&gt;", "A & B <tag>"),
    ('<a id="old-heading-name"></a>Text', "old-heading-name Text"),  # a renamed section
    ("{* ../../docs_src/cors/tutorial001.py hl[2] *}\nText.", "Text."),
    # markdown-include (FastAPI's older pages): a file pulled in, in prose or code
    ("{!../../docs_src/templates/templates/item.html!}\nText.", "Text."),
    ('```Python hl_lines="1"\n{!> ../../docs_src/python_types/tutorial009_py310.py!}\nx = 1\n```',
     "x = 1"),
    ("Text with {!inline!} stays.", "Text with {!inline!} stays."),  # not on a line of its own
    # mdBook: a file pulled in, in code or prose, is not its path; a <title> is not shown
    ("```rust\n{{#rustdoc_include ../listings/ch15-smart-pointers/listing-15-01/src/main.rs:here}}"
     "\n```\nText.", "Text."),
    ("```console\n  {{#include ../listings/output.txt:2:10}}\n$ cargo run\n```",
     "$ cargo run"),
    ("{{#title The Title}}\nSee {{#playground example.rs editable}} run.", "See run."),
    ("```hbs\n\\{{#include file.rs}}\n```", "{{#include file.rs}}"),  # escaped: shown
    ("By a \\{{#title …}} line.", "By a {{#title …}} line."),
    ("Helpers like `\\{{#include x.md}}`.", "Helpers like {{#include x.md}}."),
    ("`{{#ff0000}}` stays", "{{#ff0000}} stays"),  # a tldr placeholder, not a directive
    # mdbook-spec (the Rust Reference): a rule's identifier on a line of its own is markup
    ("r[items.fn]\n# Functions\n\nr[items.fn.intro]\nA function.\n  r[type.never.coercion]  "
     "\nNever.", "Functions A function. Never."),
    ("```text\nr[a.b]\n```\nThe r[a.b] rule.", "r[a.b] The r[a.b] rule."),  # in code, in prose
    # DocFX (Microsoft Learn): extension lines are markup, an image's alt text is text
    (':::image type="content" source="media/x.png" alt-text="The Options dialog.":::\nText.',
     "The Options dialog. Text."),
    (':::image type="complex" source="a.gif" alt-text="A diagram.":::\n   Long text.\n'
     ":::image-end:::", "A diagram. Long text."),
    ('::: moniker range=">=msvc-160"\nNew.\n::: moniker-end', "New."),
    (':::row:::\n   :::column span="2":::\n   Cell.\n   :::column-end:::\n:::row-end:::', "Cell."),
    (':::code language="csharp" source="~/../x/Sample.cs" range="11-154":::\nText.', "Text."),
    ("See [!INCLUDE[product](../includes/vs.md)] and [!INCLUDE [v](v.md)].", "See and ."),
    ("   [!code-cpp[NVC_MFCDocView#15](../mfc/codesnippet/cpp/x_1.cpp)]\nText.", "Text."),
    ('> [!div class="nextstepaction"]\n> [Next](x.md)\n\n> [!NOTE]\n> Kept.', "Next Note Kept."),
    (":::note Kept title\nDocusaurus.\n:::", "Kept title Docusaurus."),  # not DocFX
    # mkdocstrings: the object whose API docs render here, and the members it lists
    ("::: fastapi.APIRouter\n    options:\n        members:\n            - websocket\n"
     "            - include_router\n\nAfter.", "fastapi.APIRouter websocket include_router After."),
    ("::: httpx\n    options:\n      show_root_heading: true\n\n::: pydantic.main.BaseModel",
     "httpx pydantic.main.BaseModel"),
    ("::: mkdocstrings\n    options: [broken\n", "mkdocstrings"),
    # pymdownx snippets inside a code block (`;--8<--` is the escaped, shown form)
    ('```yaml\n--8<-- "docs/examples/mkdocs.yml"\n;--8<-- "x.yml"\n```', ';--8<-- "x.yml"'),
    # pandoc fenced divs (Quarto): a callout shows its title, or its kind; other divs nothing
    ("::: {.callout-warning}\nCareful.\n:::", "Warning Careful."),
    ('::: {.callout-tip collapse="true" title="Short cut"}\nText.\n:::', "Short cut Text."),
    ('::: {.callout-note subtitle="x"}\nText.\n:::', "Note Text."),  # not its title
    ("::: callout-important\nText.\n:::", "Important Text."),
    (":::: {.columns}\n::: {.column width=\"40%\"}\nLeft\n:::\n::::", "Left"),
    ("::: {#fig-plots layout-ncol=2}\n![Plot](a.png)\n:::", "Plot"),
    # Liquid tags (GitBook, Jekyll): markup, but a tab's title or a caption is text
    ('{% hint style="warning" %}\nBack up first.\n{% endhint %}', "Back up first."),
    ('{% tabs %}\n{% tab title="Docker" %}\nRun it.\n{% endtab %}\n{% endtabs %}',
     "Docker Run it."),
    ('{% code title="app.yml" overflow="wrap" %}\n```yaml\nkey: "{% raw %}"\n```\n{% endcode %}',
     'app.yml key: "{% raw %}"'),  # code stays as written
    ("See {% include note.html %} and {%- if a -%}this{%- endif -%}: 50% {x}.",
     "See and this : 50% {x}."),
    # Markdoc (Stripe; Starlight's .mdoc): closing tags, variables, annotations are markup
    ('{% callout type="note" title="Heads up" %}\nTags nest.\n{% /callout %}\n\n'
     '{% partial file="header.md" /%} Hi {% $user.name %}, {% .primary #go %} done.',
     "Heads up Tags nest. Hi , done."),
    # what the generator fills in: a table of contents, a VitePress code import
    ("[[toc]]\n\nText.\n\n[TOC]\n${toc}", "Text."),
    # GitLab's and Azure DevOps' table of contents, Azure DevOps' table of subpages
    ("[[_TOC_]]\n[[_TOSP_]]\n\nText.\n\n[[_toc_]]\n", "Text."),
    # a link whose text shows brackets: its text, not its URL (Azure DevOps wikis)
    ("Ask [[Support]](https://ads.example/tfs/Support) (infra).", "Ask Support (infra)."),
    # docsify: a heading's options, the marks of its old callouts
    ("## themeColor :id=themecolor\n\n!> **Time** is money.\n\n?> *TODO* unit test\n\n"
     "## Heading 2 {docsify-ignore}\n\nA a:id=x and x ?> y stay.",
     "themeColor Time is money. TODO unit test Heading 2 A a:id=x and x ?> y stay."),
    # Logseq: the properties its outliner hides, block references (a block elsewhere)
    ("- Text ((61110543-a71f-458d-b42e-b78a4d22f0c0)) here\n  id:: 61110543-a71f-458d-b42e-"
     "b78a4d22f0c0\n  collapsed:: true\n- type:: [[Page]]\n- a valid:: id:: stays",
     "Text here type:: Page a valid:: id:: stays"),
    # kramdown (Jekyll): the list a {:toc} marks is the table of contents (its item a
    # placeholder); attribute lists, their definitions and references, extension tags
    # and comments are markup; a nomarkdown block's text stays
    ("## Contents\n{: .no_toc .text-delta }\n\n1. TOC\n{:toc}\n\n* TOC\n{:toc}\n\nText.",
     "Contents Text."),
    ('{::options toc_levels="2..4" /}\n{::comment}\nHidden *text*.\n{:/comment}\nShown '
     "{::comment}gone{:/}and {::comment /}kept.", "Shown and kept."),
    ("{::nomarkdown}<b>raw</b>{:/nomarkdown} is *red*{: style=\"color: red\"} and "
     "[a button](x.md){: .btn .btn-purple }.", "raw is red and a button."),
    ("{:refdef: .note #id}\n{: refdef}\nA note.\n{:.warning}\nCareful.", "A note. Careful."),
    ("- {:toc} in a list item, and {: .x} inline, stay as a reader sees them",
     "{:toc} in a list item, and inline, stay as a reader sees them"),
    ("Code:\n\n<<< @/snippets/snippet.js{2} [snippet.js]\n\nAfter.", "Code: After."),
    # kramdown-rfc's parts of a draft are markup; a dash run in prose is not
    ("Abstract text.\n\n--- middle\n\nBody.\n\n--- back\n\nEnd. --- back", "Abstract text. "
     "Body. End. --- back"),
    ("A [[toc]] inline stays a wiki link.", "A toc inline stays a wiki link."),
    # a table of contents written out, opening a section's text (a KEP's between
    # markdown-toc's comments; doctoc's, labelled; a Swift proposal's): no text; three
    # links to headings further down, or two at the start, say something and stay
    ("<!-- toc -->\n- [Summary](#summary)\n- [Motivation](#motivation)\n  - [Goals](#goals)"
     "\n<!-- /toc -->\n\nAbout pods.", "About pods."),
    ("<!-- START doctoc -->\n**Table of Contents**  *generated with [DocToc](https://x.io)*"
     "\n\n- [A](#a)\n\n  - [B](#b)\n1. [`c()` [x]](<#c> \"C\")\n<!-- END doctoc -->\nText.",
     "Text."),
    ("Only these support DIB:\n\n- [`GetBits`](#getbits)\n- [`GetPitch`](#getpitch)\n"
     "- [`IsIndexed`](#isindexed)", "Only these support DIB: GetBits GetPitch IsIndexed"),
    ("- [A](#a)\n- [B](#b)\n\nTwo.", "A B Two."),
    # roadmap.sh: a resource's kind before a link's text is a badge, not words
    ("- [@official@Docker Compose](https://docs.docker.com)\n- [@video@Intro](https://y.tu)"
     "\n- [@who@ mentions](x.md) and me@home@x", "Docker Compose Intro @who@ mentions and "
     "me@home@x"),
    ("- [A](#a)\n- [B](other.md#b)\n- [C](#c)", "A B C"),
    # ten or more that close a section's text, after an introduction: the System Design
    # Primer's "Index of system design topics" (82 of them); nine, or text after, stay
    ("> Summaries of topics.\n\n<img src=\"x.png\">\n\n" + "".join(
        f"{'    ' * (k % 2)}* [Topic {k}](#topic-{k})\n" for k in range(10)),
     "Summaries of topics."),
    ("Topics:\n\n" + "".join(f"* [T{k}](#t{k})\n" for k in range(10)),  # announced
     "Topics: " + " ".join(f"T{k}" for k in range(10))),
    ("Topics\n\n" + "".join(f"* [T{k}](#t{k})\n" for k in range(9)),
     "Topics " + " ".join(f"T{k}" for k in range(9))),
    ("Topics\n\n" + "".join(f"* [T{k}](#t{k})\n" for k in range(10)) + "\nAnd more.",
     "Topics " + " ".join(f"T{k}" for k in range(10)) + " And more."),
    # Hugo shortcodes show their text (Kubernetes' glossary tooltips: text, else the term)
    ('A {{< glossary_tooltip text="Pod" term_id="pod" >}} runs on a '
     '{{< glossary_tooltip term_id="kube-node" >}}.', "A Pod runs on a kube node ."),
    # tldr-pages' mnemonics: a bracketed letter inside a word is the word
    ("- E[x]tract an archive [f]ile [v]erbosely, g[z]ipped; Lis[t] file[s].",
     "Extract an archive file verbosely, gzipped; List files."),
    ("shown[1] and a[1] stay; [ab](x) is a link.", "shown[1] and a[1] stay; ab is a link."),
    ("请参阅[API](api.md)和[FAQ][faq]。\n\n[faq]: faq.md", "请参阅API和FAQ。"),  # links, no spaces
    # template calls: Zola's shortcodes, mkdocs-macros (an expression that is no call stays)
    ('See {{ youtube(id="dQw4w9WgXcQ", autoplay=true) }} and {{ button("Go", "x)") | safe }}.',
     "See and ."),
    ("Vue shows {{ count + 1 }} here.", "Vue shows {{ count + 1 }} here."),
    ("{{ site.title }} and <a href=\"{{ '/docs/x/' | relative_url }}\">the page</a> of "
     '{{ page.date | date: "%Y" }}.', "and the page of ."),
    # MDN's macros: a reference link shows its text (the second argument, else the first),
    # a badge its label; the rest (compatibility tables, live samples, sidebars) leave
    ('Call {{jsxref("Array.prototype.map()")}} or {{jsxref("Statements/for...of", "for...of")}}'
     ' on a {{ domxref("NodeList") }}; see {{Glossary("CORS", "cross-origin requests")}}.',
     "Call Array.prototype.map() or for...of on a NodeList; see cross-origin requests."),
    ("The {{HTMLElement('select')}} element, {{cssxref(\"&lt;color&gt;\")}}, {{HTTPStatus(404)}},"
     ' {{domxref("Window.fetch", "", "", "nocode")}} and {{RFC(9110, "HTTP Semantics")}}.',
     "The select element, <color>, 404, Window.fetch and RFC 9110 HTTP Semantics."),
    ("- `thisArg` {{optional_inline}}\n  - : The `this`.\n- `size` {{ReadOnlyInline}}"
     " {{Deprecated_Inline}}\n\n{{Compat}}\n{{EmbedLiveSample(\"Examples\", \"100%\", 200)}}",
     "thisArg Optional : The this. size Read only Deprecated"),
    # MDC (Nuxt Content): block components show an admonition's kind or their title/label
    # props, nothing else; their `::` ends, props blocks and slots leave; inline
    # components show their content
    ("::note\nDrafts stay in the browser.\n::", "Note Drafts stay in the browser."),
    ('::card{title="The card" icon="i-lucide-x"}\nBody.\n::', "The card Body."),
    ("::u-page-hero\n---\norientation: horizontal\ntitle: Mountains\n---\n#title\nWelcome."
     "\n\n#description{unwrap=\"p\"}\nA site.\n::", "Mountains Welcome. A site."),
    ("#right\n  :::template-features\n  ---\n  features:\n    - label: Fast\n"
     "      content: It is quick.\n    - icon: i-x\n  ---\n  :::\n::", "Fast It is quick."),
    ('::code-group\n```bash [pnpm]\npnpm add x\n```\n::', "pnpm add x"),
    ('Watch :video{controls src="x.mp4"}, see :badge[Soon]{color="red"} and '
     ':icon{name="mdi:home" label="Home"}.', "Watch , see Soon and Home ."),
    ("std::vector, e.g. :root, and a::b stay.", "std::vector, e.g. :root, and a::b stay."),
    # Tailwind classes in a span's attributes (Nuxt UI); a kubectl jsonpath is no class
    ("Markdown meets [Vue]{.text-(--ui-primary)} and [it]{.w-1/2 .hover:underline}.",
     "Markdown meets Vue and it."),
    ("kubectl get svc -o jsonpath='{.status.loadBalancer.ingress[0].ip}'",
     "kubectl get svc -o jsonpath='{.status.loadBalancer.ingress[0].ip}'"),
    ("Some text\n#rust\nmore", "Some text #rust more"),  # no MDC: an Obsidian tag line
    # Obsidian: a block's id, which its pages do not show; an image's size; an alias
    # separator escaped in a table
    ("A network of knowledge. ^b15695\n\n- an item ^li-1\n\n^table-id\n\nx^2, a ^b c",
     "A network of knowledge. an item x^2, a ^b c"),
    ("| Photo | ![[Engelbart.jpg\\|200]] ![[map.png|the map]] [[Highlighter\\|highlights]] |",
     "Photo the map highlights"),
    # an option's name in a shortcode (opentelemetry.io), a filter's object (Eleventy)
    ('Set {{% config_option name="otel.javaagent.extensions" %}} a jar. {{% /config_option %}}',
     "Set otel.javaagent.extensions a jar."),
    ('See {{ "Filters" | nav | eleventyNavigationToHtml({ showExcerpt: true }) | safe }} now.',
     "See now."),
])
def test_plain_text_shows_what_a_reader_sees(source, shown):
    assert strip_markdown(source) == shown


@pytest.mark.parametrize("heading, title", [
    ('## {{% heading "prerequisites" %}}', "Prerequisites"),  # Kubernetes: from a translation
    ('## Scheduling {{< glossary_tooltip text="Pods" term_id="pod" >}}', "Scheduling Pods"),
    ('## The {{< glossary_tooltip term_id="control-plane" >}}', "The control plane"),
    ("## Using `{{ site.title }}`", "Using {{ site.title }}"),  # code: what the page explains
    ('#### The {{HTTPHeader("Sec-WebSocket-Key")}} header', "The Sec-WebSocket-Key header"),  # MDN
])
def test_a_heading_written_with_template_markup_is_its_text(heading, title):
    doc = parse_document(f"# Page\n\n{heading}\n\nText.\n", "docs", "page.md")
    assert doc.nodes[-1].title == title


@pytest.mark.parametrize("heading", ["# {% $markdoc.frontmatter.title %}", "# {{ page.title }}",
                                     "# {{ $frontmatter.title }}", "# {{- title -}}"])
@pytest.mark.parametrize("frontmatter, title", [("---\ntitle: Tags\n---\n", "Tags"),
                                                ("", "tags-guide")])
def test_a_heading_that_prints_the_page_title_is_that_title(heading, frontmatter, title):
    """Markdoc, Jekyll, VitePress and Eleventy pages print their front matter's title in
    their heading; without one, the generators take the file's name."""
    doc = parse_document(f"{frontmatter}{heading}\n\nText.\n\n## Built-in\n\nMore.\n",
                         "docs", "tags-guide.md")
    assert doc.title == title
    assert [(n.title, n.id.rsplit("#", 1)[-1]) for n in doc.nodes[1:]] == [
        (title, title.lower()), ("Built-in", "built-in")]


def test_a_heading_printing_another_variable_keeps_its_markup():
    doc = parse_document("---\ntitle: Tags\n---\n# {{ site.title }}\n\nText.\n", "d", "p.md")
    assert doc.nodes[1].title == "{{ site.title }}"


@pytest.mark.parametrize("heading, title", [
    ("## Nuxt Studio Integration :badge[Soon]", "Nuxt Studio Integration Soon"),
    ("## A real [Nuxt]{.text-primary} app", "A real Nuxt app"),  # a span (MDC, pandoc)
    ("## `:badge[x]` syntax", ":badge[x] syntax"),  # code: what the page explains
    # mkdocs-material's icons and emoji shortcodes are no words (gtfs.org's headings)
    ("## :material-transit-detour: Flexible Services", "Flexible Services"),
    ("## :fontawesome-brands-github: GitHub :octicons-link-external-16:", "GitHub"),
    ("## Done :white_check_mark:", "Done"),
    ("## std::vector and 10:30:45", "std::vector and 10:30:45"),  # no shortcodes
])
def test_a_heading_with_mdc_inline_markup_is_its_text(heading, title):
    doc = parse_document(f"# Page\n\n{heading}\n\nText.\n", "docs", "page.md")
    assert doc.nodes[-1].title == title
    assert doc.nodes[-1].id.rsplit("#", 1)[-1] == slugify(title)  # mkdocs' anchor too


@pytest.mark.parametrize("cell", ["{r}", "{python}", "{julia}", "{ojs}", "{R}"])
def test_an_executable_cell_is_code_not_a_directive(cell):
    """Quarto's and knitr's ```{r} cells hold code (a MyST ```{note} holds markdown)."""
    code = "x <- df |> filter(a[1] > 2)  # [not](a-link)\n"
    assert plain_text(f"```{cell}\n{code}```\n\nText.") == f"{code}\n\nText."


@pytest.mark.parametrize("cell, shown", [
    # MyST-NB (Jupyter Book) kept ":tags: [hide-input]"; Quarto kept "#| label: fig-plot"
    ("```{code-cell} ipython3\n:tags: [hide-input]\nx = 1\n```", "x = 1\n"),
    ("```{code-cell} ipython3\n---\ntags: [remove-cell]\n---\nx = 1\n```", "x = 1\n"),
    ("```{math}\n:label: euler\ne^{i\\pi} + 1 = 0\n```", "e^{i\\pi} + 1 = 0\n"),
    ("```{code-block} python\n:caption: The loop\n:linenos:\nfor x in y: pass\n```",
     "The loop\nfor x in y: pass\n"),
    ('```{r}\n#| label: fig-plot\n#| fig-cap: "Plot"\n\nplot(cars)\n```', "Plot\n\nplot(cars)\n"),
    # not a cell's options: a comment line later in the code, a plain fence's lines
    ("```{python}\nx = 1\n#| not: an option\n```", "x = 1\n#| not: an option\n"),
    ("```python\n#| label: kept\nx = 1\n```", "#| label: kept\nx = 1\n"),
    ("```yaml\n:key: value\n```", ":key: value\n"),
])
def test_a_cells_options_leave_and_its_caption_stays(cell, shown):
    assert plain_text(cell) == shown


def test_code_is_kept_exactly():
    code = "```md\n!!! note \"x\"\n    <b>%% not a comment %%</b> [[w|x]] {{< s >}}\n```"
    assert plain_text(code) == '!!! note "x"\n    <b>%% not a comment %%</b> [[w|x]] {{< s >}}\n'


@pytest.mark.parametrize(("text", "code"), [
    # Go's design documents: a tab
    ("Loops:\n\n\tsum := Sum[int]([]int{1,2,3})\n\t#include <x.h>\n\n\tx := F[a](b)\n\nText.",
     ["\tsum := Sum[int]([]int{1,2,3})\n\t#include <x.h>\n\n\tx := F[a](b)"]),
    ("    first line of a section's text", ["    first line of a section's text"]),
    # in a list item: four past its content (Google Cloud's tutorials), else the item's
    ("1.  Update:\n\n        sudo apt-get update\n\n    Then [go](x.md).",
     ["        sudo apt-get update"]),
    ("- item\n\n    more of the item, [a link](x.md) #tag\n", []),
    ("1.  a\n\n    ```\n    f\n    ```\n\n        code\n", ["        code"]),
    # Python-Markdown: four spaces go on with an item whose text starts further in
    ("  1.  __All__: text\n      more\n\n    ```\n    excerpt\n    ```\n", []),
    # not after a paragraph (a lazy line), nor after markup: MDX, JSX, templates
    ("Text\n    not code\n", []),
    ("<Tabs>\n\n    text in a tab\n", []),
    ("Intro.\n\n<Steps>\n\nStep.\n\n    still MDX, no code\n", []),
    ("A List<T> in a sentence.\n\n    code\n", ["    code"]),
    ("{{< tab >}}\n\n    ### Run\n\n    text in a shortcode\n", []),
    ("Text\n\n    {{% note %}}\n", []),
    # Python-Markdown's blocks, MDC's components (Nuxt), MyST's fields: containers
    ("!!! note\n\n    Content.\n\n=== \"Tab\"\n\n    Tab text.\n\n  [^1]:\n    Note.\n\n"
     "Term\n:   Definition.\n\n    More.\n", []),
    ("!!! note\n\n    Content:\n\n        code in a note\n", ["        code in a note"]),
    ("::u-page-grid\n  ::::u-page-feature\n    #title\n    Files\n\n    #description\n", []),
    (":param arg2: A longer description,\n    with lines.\n\n    - And bullet points\n", []),
    # fences, HTML that blank lines do not end, a template's capture
    ("```\nx\n\n    in a fence\n```\n<script>\n\n    var a;\n</script>\n"
     "{% set c %}\nx\n\n    captured\n{% endset %}", []),
    # after an indented fence: a container not seen, whose text may go on
    ("- a\n\n      ```\n      f\n      ```\n\n    after the fence\n", []),
])
def test_indented_code_is_code(text, code):
    """An indented code block is code, as a fenced one: shown as written (dedented), no
    link (Go's generics design read ``[]int{1,2,3}`` as one) and no tag in it; only where
    every dialect reads code."""
    assert [text[a:b] for a, b in indented_code(text)] == code
    shown = plain_text(text)
    assert all(line.strip() in shown for block in code for line in block.split("\n"))


def test_indented_code_is_shown_without_its_indentation_and_as_written_within_lines():
    assert plain_text("Go:\n\n\tx\t:= 1 // aligned\n\t\tnested\n\nText.") == (
        "Go:\n\nx\t:= 1 // aligned\n    nested\n\nText.")


def test_indented_code_holds_no_links_or_tags():
    text = "See:\n\n\tx := F[a](b)\n\t#include <stdio.h>\n\nand [this](y.md) #real"
    assert inline_tags(text) == ["real"]
    assert "x := F[a](b)\n#include <stdio.h>" in plain_text(text)
    from ra.text.links import document_links
    doc = parse_document(f"# T\n\n{text}\n", "kb", "t.md")
    assert [link.target for links in document_links(doc) for link in links] == ["y.md"]


def test_a_comment_may_hold_a_code_fence():
    text = "Before\n%% kanban:settings\n```\n{\"a\": 1}\n```\n%%\nAfter"
    assert plain_text(text).split() == ["Before", "After"]


def test_an_unclosed_comment_opener_is_text():
    assert plain_text("100%% sure, and <!-- never closed") == "100%% sure, and <!-- never closed"


def test_an_indented_fence_does_not_close_the_outer_one():
    text = '``` title="tabs"\n=== "C"\n\n    ``` c\n    int x;\n    ```\n```\n\nAfter.'
    assert strip_markdown(text) == '=== "C" int x; After.'


@pytest.mark.parametrize("text, tags", [
    ("Notes #meeting and #project/alpha.", ["meeting", "project/alpha"]),
    # numbers and colours are no tags: hex digits with a digit, or letters that repeat
    # as a colour's (Electron's pages list "#fff", "#ffff", "#ffffff", "#ffffffff"), not
    # as a word's
    ("Issue #929, colour #FF0000, #fff, #FFFF, #fafafa, #ffeedd.", []),
    ("#facade #add #decade #cafe #beef #bad", ["facade", "add", "decade", "cafe", "beef",
                                               "bad"]),
    ("`#code` and ```\n#fenced\n```\nand %% #hidden %% <!-- #gone -->", []),
    ("[x](#anchor) and [r]: #ref\n\n## Heading {#id}", []),
    ("# Heading\n\n#tag-at-start of a line", ["tag-at-start"]),
    ("Emoji #🏢/companyA and C# and a#b", ["🏢/companyA"]),
])
def test_inline_tags(text, tags):
    assert inline_tags(text) == tags


def test_mdc_slots_and_props_are_neither_tags_nor_sections():
    """Nuxt Content: ``#title`` in a component is a slot, not an Obsidian tag, and a
    component's ``---`` props block is no setext heading (it made a section titled
    "label: Get Started size: lg to: /docs…")."""
    text = ("# Page\n\n::u-page-hero\n#title\nWelcome.\n\n  :::u-button\n  ---\n"
            "  label: Get Started\n  size: lg\n  ---\n  :::\n::\n\n#right\n"
            "  :::features\n  ---\n  title: x\n  ---\n  :::\n\n## Real\n\nText #tag.\n")
    doc = parse_document(text, "docs", "page.md")
    assert [n.title for n in doc.nodes[1:]] == ["Page", "Real"]  # the h1, then h2
    assert doc.tags == ("tag",)


def test_mdc_props_aliases_are_read_once():
    """A props block that nests YAML aliases (``b: [*a, *a, …]``) shows each value once:
    walked as a tree, six levels made 8,192 copies, and a few more would never end."""
    levels = "".join(f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, "
                     f"*{chr(97 + i)}, *{chr(97 + i)}]\n" for i in range(6))
    text = f"::x\n---\na: &a [{{title: Hi}}, {{title: Ho}}]\n{levels}---\nBody.\n::\n"
    assert strip_markdown(text) == "Hi Ho Body."


def test_inline_tags_join_the_frontmatter_tags():
    doc = parse_document("---\ntags: [a]\n---\n\n# T\n\nText #b and #a.\n", "t", "x.md")
    assert doc.tags == ("a", "b")


@given(st.lists(st.sampled_from(["%%", "{/*", "*/}", "<!--", "-->", "`", "```", "\n", "# h",
                                 "x", " ", "é", "~~~"]), max_size=40))
def test_mask_comments_keeps_every_offset(parts):
    text = "".join(parts)
    masked = mask_comments(text)
    assert len(masked) == len(text)
    assert [i for i, c in enumerate(masked) if c == "\n"] == \
        [i for i, c in enumerate(text) if c == "\n"]


def test_a_heading_inside_an_obsidian_comment_is_no_heading():
    doc = parse_document("# Real\n\nText\n\n%%\n# Commented out\n%%\n\nMore\n", "t", "n.md")
    assert [n.title for n in doc.nodes] == ["Real", "Real"]


def test_toml_frontmatter():
    doc = parse_document('+++\ntitle = "Hello"\ntags = ["a", "b"]\ndate = 2024-05-26\n+++\n\n'
                         "Body\n", "t", "post.md")
    assert (doc.title, doc.tags) == ("Hello", ("a", "b"))
    assert doc.nodes[0].body == "Body\n"
    broken = parse_document('+++\ntitle = \n+++\n\nBody\n', "t", "post.md")
    assert broken.problems == ("frontmatter: invalid TOML (line 2)",)
    # Zola reads TOML front matter after blank lines (its theme pages, 129 of its docs'
    # 180 files, open with one; their titles were "index"); YAML's must open the file
    for text in ('\n+++\ntitle = "Ergo"\n+++\n\nBody\n',
                 '\r\n  \r\n+++\r\ntitle = "Ergo"\r\n+++\r\n'):
        assert parse_document(text, "t", "themes/Ergo/index.md").title == "Ergo"
    assert parse_document('\n---\ntitle: Ergo\n---\n\nBody\n', "t", "a.md").title != "Ergo"


@pytest.mark.parametrize(("path", "title"), [
    ("documentation/_index.md", "documentation"), ("guide/index.md", "guide"),
    ("packages/snap/README.md", "snap"), ("README.md", "README"), ("index.md", "index"),
    ("guide/setup.md", "setup"), ("Getting-Started.md", "Getting Started"),
])
def test_a_page_without_a_title_is_named_for_its_file_or_folder(path, title):
    """Zola's ``documentation/_index.md`` (front matter without a title, no heading) was
    titled "_index" in every list of results; a folder's page is named for its folder."""
    assert parse_document("Some text.\n", "t", path).title == title


@pytest.mark.parametrize(("front", "body", "title"), [
    ("pageTitle: Collections API\neleventyNavigation:\n  key: Coll", "Text.", "Collections API"),
    ("tiptitle: Zero Maintenance Tag Pages", "Text.", "Zero Maintenance Tag Pages"),
    ("linkTitle: Short", "Text.", "Short"),  # Hugo
    ("eleventyNavigation:\n  parent: Docs\n  key: Importing Content", "Text.",
     "Importing Content"),
    ("navigation:\n  title: Nav Title", "Text.", "Nav Title"),  # Nuxt Content
    ("relatedTitle: Template Filters", "# Filters\n\nText.", "Filters"),  # the h1 first
    ("subtitle: Not a title", "Text.", "page"),
])
def test_a_title_under_another_key_names_a_page_without_one(front, body, title):
    """Eleventy's site titles its pages by ``pageTitle``, ``tiptitle``, ``newstitle`` or
    its navigation's ``key``: 124 of its 231 pages were titled by their files' names."""
    assert parse_document(f"---\n{front}\n---\n\n{body}\n", "t", "dir/page.md").title == title


def test_eleventy_front_matter_in_javascript_and_captured_examples_hold_no_headings():
    """Eleventy's ``---js`` front matter is code (its ``---`` closing line made a setext
    heading of the last line), ``---json`` is data; an example captured in ``{%- set
    codeBlock %}{% raw %}`` … ``{% endraw %}{%- endset %}`` and printed highlighted holds
    no headings (its ``---`` lines made 62 chunks of code on Eleventy's site)."""
    js = parse_document('---js\nlet title = "T";\nlet x = {\n  a: 1,\n};\n---\n\n# Page\n',
                        "t", "a.md")
    assert js.title == "Page" and {n.title for n in js.nodes} == {"Page"}
    assert parse_document('---json\n{"title": "J"}\n---\n\nText\n', "t", "a.md").title == "J"
    text = ("# Data\n\n## JavaScript Front Matter\n\n{%- set codeBlock %}{% raw %}\n---js\n"
            "const title = 1;\n---\n\n<h1>{{ title }}</h1>\n{% endraw %}{%- endset %}\n"
            "{{ codeBlock | highlight(\"jinja2\") | safe }}\n\n## Next\n\nMore.\n")
    assert [n.title for n in parse_document(text, "t", "b.md").nodes] == [
        "Data", "Data", "JavaScript Front Matter", "Next"]


def test_a_heading_that_prints_a_front_matter_value_is_that_value():
    text = ("---\neleventyNavigation:\n  key: Importing Content\n---\n\n"
            "# {{ eleventyNavigation.key }}\n\n## Tools\n\nx\n\n## {{ missing.key }}\n\ny\n")
    doc = parse_document(text, "t", "docs/migrate.md")
    assert [n.title for n in doc.nodes] == [
        "Importing Content", "Importing Content", "Tools", "{{ missing.key }}"]


@pytest.mark.parametrize("text, titles", [
    ("---\n# a YAML comment, not a heading\ntitle: T\n---\n\nText\n", ["T"]),
    ("+++\n# a TOML comment\ntitle = \"T\"\n+++\n\n# H\n\nx\n", ["T", "H"]),
    ("---\r\ntitle: T\r\n---\r\n\r\n# H\r\n\r\nx\r\n", ["T", "H"]),
    ("---\ntitle: never closed\n\n# H\n\nx\n", ["H", "H"]),  # no frontmatter at all
])
def test_frontmatter_lines_are_never_headings(text, titles):
    assert [n.title for n in parse_document(text, "t", "n.md").nodes] == titles


@pytest.mark.parametrize("text, title", [
    ("title: Release Notes\nauthor: Someone\n\nText\n", "Release Notes"),
    ("Title:  Spaced\n    continued\n\n# H\n\nx\n", "Spaced continued"),
    ("Note: this is prose, not metadata\n\n# H\n\nx\n", "H"),
    ("title: x\nthen prose that is no key\n\nText\n", "n"),  # not every line is a key
    # a Logseq page's properties: `key:: value` (its title was ": Community/…")
    ("title:: Community/Query Sprint\ntype:: [[Page]]\n\n- # About\n\t- x\n",
     "Community/Query Sprint"),
])
def test_multimarkdown_metadata(text, title):
    assert parse_document(text, "t", "n.md").title == title


def test_logseq_page_tags_are_the_pages_they_link():
    doc = parse_document("tags:: [[embed]], #[[multi word]], plain\n\n- x\n", "g", "p.md")
    assert doc.tags == ("embed", "multi word", "plain")


def test_mdx_is_markdown():
    doc = parse_document("import X from 'x';\n\n# Title\n\nText\n", "t", "page.mdx")
    assert doc.kind == "markdown" and doc.title == "Title"


QUARTO = """---
title: Profiles
---

## Profile groups

Before.

::: {.callout-warning}
## `metadata-files` are not resolved

Copy them instead.
:::

After the callout.

::: callout-tip

### A tip's title
Tip.
:::

:::: {.columns}
::: {.column}
## A section in a column
Text.
:::
::::
"""


def test_a_quarto_callout_heading_is_its_title_not_a_section():
    doc = parse_document(QUARTO, "t", "profiles.qmd")
    assert doc.kind == "markdown" and doc.title == "Profiles"
    assert [(n.depth, n.title) for n in doc.nodes] == [
        (0, "Profiles"), (2, "Profile groups"), (2, "A section in a column")]
    groups = strip_markdown(doc.nodes[1].body)
    assert groups.startswith("Before. Warning metadata-files are not resolved Copy them")
    assert "After the callout. Tip A tip's title Tip." in groups


def test_r_markdown_is_markdown():
    doc = parse_document("---\ntitle: Report\n---\n\n# Data\n\n```{r}\nx <- 1\n```\n",
                         "t", "analysis.Rmd")
    assert doc.kind == "markdown" and [n.title for n in doc.nodes] == ["Report", "Data"]


_MARKUP = ["%", "%%", "{/", "{/*", "*/}", "<!-", "<!--", "-->", "`", "``", "```", "~", "~~~",
           "\n", "\n\n", "## h", "{ref}", "{note}", " ", "x", "}", "{", "é", "[a](b)",
           "mdx-code-block"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_MARKUP), max_size=12),
       st.lists(st.sampled_from(_MARKUP), max_size=30))
def test_a_body_set_aside_once_serves_its_heading_and_body(head, body):
    """A build sets each chunk's body aside once, for its plain text and for the links
    of its heading and body: the same as setting the two aside together, whatever
    markers either holds (a head that could change the body is prepared with it)."""
    head, body = "".join(head), "".join(body)
    aside = set_code_aside(body)
    assert set_code_aside_before(head, body, aside) == set_code_aside(head + body)
    assert plain_text_aside(*aside) == plain_text(body)


def test_a_heading_with_code_is_set_aside_with_its_body():
    head, body = "## `a\n", "b` c\n"
    assert set_code_aside_before(head, body, set_code_aside(body)) == (
        "## \ue0000\ue001 c\n", ["a\nb"])


def test_a_liquid_highlight_block_is_code():
    """Jekyll's ``{% highlight %}`` blocks hold code: a ``#`` comment in one is no
    heading and no tag, and its text stays."""
    text = ("# Install\n\n{% highlight bash %}\n# install the gem\ngem install jekyll #fast\n"
            "{% endhighlight %}\n\n## Next\n\nText #real-tag.\n")
    doc = parse_document(text, "t", "install.md")
    assert [(n.depth, n.title) for n in doc.nodes] == [(0, "Install"), (1, "Install"),
                                                       (2, "Next")]
    assert doc.tags == ("real-tag",)
    assert strip_markdown(doc.nodes[1].body) == "install the gem gem install jekyll #fast"


# --- brackets inside brackets, and markup that opens nothing ----------------------------

@pytest.mark.parametrize(("text", "plain"), [
    ("[![Crates.io](https://img.shields.io/x.svg)](https://crates.io/x) ok", "Crates.io ok"),
    ("[x [y](u.md) z", "[x y z"),
    ("[a [b] c](u.md)", "a [b] c"),
    ("![a [b] c](i.png)", "a [b] c"),
    # an unclosed shortcode does not swallow the text up to the next one's end
    ('{{< a\n\nkept words {{< figure caption="Cap" >}}', "{{< a\n\nkept words  Cap "),
    ("<!-- open\n\ntext <!-- and again", "<!-- open\n\ntext <!-- and again"),
    ("%% a %% b %% c", " b %% c"),
])
def test_brackets_and_openers_that_close_nothing(text, plain):
    assert plain_text(text) == plain


@pytest.mark.parametrize("written, shown", [
    # d2l: emphasis and attribute lists were read inside math
    (r"The loss $\sum_{i=1}^n l^{(i)}(\mathbf{w}, b)$ over all.",
     r"The loss \sum_{i=1}^n l^{(i)}(\mathbf{w}, b) over all."),
    (r"Weights $w_{\textrm{area}}$ and $\mathbf{w}^*, b^*$.",
     r"Weights w_{\textrm{area}} and \mathbf{w}^*, b^*."),
    ("$$\\hat{y} = \\mathbf{w}^\\top \\mathbf{x} + b.$$\n\nNext.",
     "\\hat{y} = \\mathbf{w}^\\top \\mathbf{x} + b.\n\nNext."),
    # dollars around no LaTeX are text, both of them, and code between them is code
    ("It costs $5 or $10, and $HOME is set.", "It costs $5 or $10, and $HOME is set."),
    (r"the set $e_G$, because otherwise $\exists a$",
     r"the set $e_G$, because otherwise \exists a"),
    ("$ConsoleFileName has no value (`$null`).", "$ConsoleFileName has no value ($null)."),
    ("Call this $`T`$. Take ${HOME} and $semid = sem_get($key);",
     "Call this $T$. Take ${HOME} and $semid = sem_get($key);"),
])
def test_math_is_read_as_written(written, shown):
    assert plain_text(written) == shown


def test_logseq_hidden_block_properties_are_no_text():
    """Logseq shows none of a block's built-in properties (``collapsed:: true``, ``id::
    6380a818-…``, a flashcard's ``card-repeats:: 1``); they were text, and on Logseq's own
    docs "what does the collapsed property do" gave the page on built-in properties 6th
    (3rd now, with the sections under list items read as text). A property of the user's
    own (``type:: book``) is shown, and stays; so does C++'s ``std::vector``."""
    text = ("- The block is folded\n  collapsed:: true\n  id:: 6380a818-1a69-4b0e-9e6c\n"
            "- Card question #card\n  card-last-interval:: 4.14\n  card-repeats:: 1\n"
            "- A book\n  type:: book\n- Use std::vector here\n")
    plain = plain_text(text)
    assert "collapsed" not in plain and "6380a818" not in plain and "card-" not in plain
    assert "type:: book" in plain and "std::vector" in plain
    assert "The block is folded" in plain and "Card question" in plain


def test_a_section_under_a_heading_that_is_a_list_item_goes_on_with_the_item():
    """Logseq writes a page as blocks: ``- ## Usage``, then the section's blocks indented
    by a tab under it. Read on its own, the section opened with a tab-indented line and was
    an indented code block: on Logseq's own docs every such section was code (the links of
    ``contents.md``'s Basics, 0 of 6 found; 32 chunks kept hidden block properties as
    text, 10 now). After its heading's list item it is that item's content."""
    from ra.text.links import document_links
    from ra.text.markup import indented_code, list_lead

    text = ("- ## Usage\n\t- Property naming rules:\n\t  collapsed:: true\n"
            "\t\t- See [[Start here]] and [[Queries]]\n")
    doc = parse_document(text, "docs", "pages/Properties.md")
    usage = next(n for n in doc.nodes if n.title == "Usage")
    assert list_lead(usage.heading) == "- ## Usage" and list_lead("## Usage\n") == ""
    assert indented_code(usage.body) != [] and indented_code(usage.body, "- ## Usage") == []
    plain = plain_text(usage.body, list_lead(usage.heading))
    assert "collapsed" not in plain and "Property naming rules" in plain
    links = document_links(doc)[doc.nodes.index(usage)]
    assert [link.target for link in links] == ["Start here", "Queries"]
    # a heading that is no list item: an indented block after it is code, as before
    assert indented_code("Intro.\n\n    code here\n", list_lead("## Example\n")) != []


@pytest.mark.parametrize(("info", "label"), [
    ('js title="src/app.js"', "src/app.js"),  # Docusaurus, Starlight: the file's name
    ("bash Windows", "Windows"),  # Mintlify: a <CodeGroup>'s tab
    ('javascript index.js icon="square-js"', "index.js"),
    ("python {1,3-5} showLineNumbers", ""),  # options only
    ("rust,ignore", ""), ("bash", ""), ("{r} echo=FALSE", ""),
])
def test_a_fence_s_label_is_text_before_its_code(info, label):
    """Sites show a fenced block under its label: Mintlify's tabs of a <CodeGroup>
    (```` ```bash Mac ````, ```` ```bash Windows ````: "set OPENAI_API_KEY on windows" found
    Agno's section 10th), Docusaurus' ``title="src/app.js"``."""
    text = plain_text(f"Intro.\n\n```{info}\nexport X=1\n```\n")
    assert text == f"Intro.\n\n{label}{chr(10) if label else ''}export X=1\n\n"


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(
    ["\n", " ", "\t", "#", "## ", ">", "> ", "-", "+ ", "* ", "1. ", "2) ", "```", "~~~", "~~",
     "`", "``", "*", "**", "_", "__", "[", "]", "![", "(", ")", "a", "word", "\\", "\\*",
     "\\_", "\\[", "é", "[a](b)", "![a](b.png)", "[a][b]", "**b**", "`c`"]),
    max_size=30).map("".join))
def test_syntax_is_stripped_as_by_every_pattern(text):
    """``_stripped`` runs a pattern of ``_SYNTAX`` only on a text holding one of its
    needles; every pattern run on every text must give the same line."""
    import ra.text.markup as markup

    def every_pattern(text: str) -> str:
        escaped = "\\" in text
        if escaped:
            text = markup.BACKSLASH_ESCAPE.sub(
                lambda m: chr(markup._HELD + ord(m.group(1))), text)
        text = "\n" + text
        for _, pattern, replacement in markup._SYNTAX:
            text = pattern.sub(replacement, text)
        return text.translate(markup._RELEASED) if escaped else text

    assert markup._stripped(text) == every_pattern(text)
