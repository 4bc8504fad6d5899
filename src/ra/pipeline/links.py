"""The links artifact: every chunk's outgoing links, their targets normalised, the
addresses a document's front matter gives it (``kind`` "page") and the ids its HTML
anchors give a chunk (``kind`` "anchor"; neither is a link). Pure.

Written by the chunk stage beside the chunk table, from the same parsed documents, with
the same chunk numbers (``ord``): the chunks of a document are numbered in node order
from ``first_ord``. What a link's target is in the index (a chunk id, or nothing) is not
stored: the ``links`` view works it out when the index is read (``ra.index.links``),
so that updating only the changed files keeps every link right, including links from
unchanged files to a file that changed.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from ra.store.artifacts import LINKS
from ra.store.layout import ANCHOR_SEQ
from ra.text.document import Document
from ra.text.links import declared_pages, document_links, section_anchors, target_of
from ra.text.markup import anchor_ids


def links_table(parsed: Sequence[Document], first_ord: int = 0,
                asides: Sequence | None = None) -> pa.Table:
    """One row per link of each node of ``parsed`` (schema ``ra.store.artifacts.LINKS``).
    ``asides``: ``ra.text.markup.set_code_aside`` of the body of every node of
    ``parsed``, in order, when the caller has them (None for a document not markdown)."""
    cols: dict[str, list] = {f.name: [] for f in LINKS}
    ord_ = first_ord

    def add(row: dict) -> None:
        for name, value in row.items():
            cols[name].append(value)

    for doc in parsed:
        mine = None if asides is None else asides[ord_ - first_ord:
                                                  ord_ - first_ord + len(doc.nodes)]
        for seq, (page, moved) in enumerate(declared_pages(doc), start=1):  # no link
            add({"ord": ord_, "tree": doc.tree, "path": doc.path, "seq": -seq,
                 "kind": "page", "text": "moved" if moved else "", "target": page,
                 "external": False,
                 "target_paths": [page], "target_name": None, "target_anchors": []})
        for node_ord, (node, (body, above)) in enumerate(
                zip(doc.nodes, section_anchors(doc), strict=True), start=ord_):
            # the anchors above its heading, in it (ESLint's migration guides: "## <a
            # name="flat-config"></a> New default config format", 77 of their 110 links
            # within a page had reached the page only) and in its text
            ids = (above + anchor_ids(node.heading) + anchor_ids(body)
                   if doc.kind == "markdown" else above)
            for seq, anchor in enumerate(dict.fromkeys(ids), start=ANCHOR_SEQ):
                add({"ord": node_ord, "tree": doc.tree, "path": doc.path, "seq": -seq,
                     "kind": "anchor", "text": "", "target": anchor, "external": False,
                     "target_paths": [], "target_name": None, "target_anchors": [anchor]})
        for links in document_links(doc, mine if mine and mine[0] is not None else None):
            for seq, link in enumerate(links):
                target = target_of(doc.path, link)
                add({"ord": ord_, "tree": doc.tree, "path": doc.path, "seq": seq,
                     "kind": link.kind, "text": link.text, "target": link.target,
                     "external": target.external, "target_paths": list(target.paths),
                     "target_name": target.name, "target_anchors": list(target.anchors)})
            ord_ += 1
    return pa.table(cols, schema=LINKS)
