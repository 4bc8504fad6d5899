"""Links between chunks, resolved when the index is read.

The ``links`` artifact (``ra.pipeline.links``) holds each link's target normalised from
its source document alone: candidate paths, a wiki link's file name, candidate anchors.
``links_sql`` resolves them against the chunks of the generation being read, so a
changed file's headings are what links from unchanged files meet:

1. a target path is the first candidate that is an indexed document (``../install`` is
   ``install.md`` or ``install/index.md``); a wiki link's name is the document of that
   file name anywhere in its tree, the shortest path first (Obsidian's rule), and a wiki
   link's path (``[[Plugins/Templates]]``) that names no file from the tree's root or
   the linking file's folder is the document whose path ends with it, the shortest
   first (Obsidian's "shortest unique path", from a vault's root below the tree's), and
   a site-absolute URL (``/guide/migration``) that names no file from the tree's root is
   the page at that path below the deepest folder holding the linking file (a site's
   root below the tree's: Vite's ``docs/``; a URL of one name, ``/team``, only below a
   folder of the tree's root: Microsoft Learn's ``/sql/`` is another site); a target
   that is no file is the page a site serves at its URL (ordering prefixes such as
   ``1.getting-started/`` dropped, the site's mount such as ``/docs/4.x/`` before it);
2. the anchor is the first candidate slug that names a chunk of that document, as its
   heading's id or else as an id the document gives it (an HTML anchor in it or alone
   above its heading, an Obsidian block's ``^id``: the links artifact's ``anchor`` rows,
   as its ``page`` rows hold the addresses front matter gives a page); a link whose
   anchor names no indexed chunk (a dropped heading, a typo) points to the document;
3. external links and targets outside the index have no ``target_id``.

The same SQL is the ``links`` view of ``ra sql`` (``where`` empty) and what ``ra get
--links`` asks for the links of one chunk's subtree (``where`` limits the ords).
"""

from __future__ import annotations

from dataclasses import dataclass

from ra.store.layout import ANCHOR_SEQ
from ra.text import MARKDOWN_SUFFIXES

#: The relation the links artifact is read as (the view ``links`` is the resolved one).
RAW = "link_rows"


#: The markdown suffixes a wiki link's page name may leave out (``ra.text.MARKDOWN_SUFFIXES``)
_SUFFIXES = "|".join(s.lstrip(".") for s in MARKDOWN_SUFFIXES)


def _page(path: str) -> str:
    """SQL: the page a site serves from the file at ``path`` (a candidate target too),
    lowercase: no suffix, a folder's page (index, README, _index) as its folder, and no
    ordering prefix on a name (``4.api/2.composables/use-fetch.md`` is Nuxt Content's
    ``api/composables/use-fetch``, ``01-intro.md`` Docusaurus' ``intro``; a date's
    ``2024-01-02`` keeps its digits)."""
    bare = f"regexp_replace(lower({path}), '\\.(?:{_SUFFIXES}|html|htm)$', '')"
    folder = f"regexp_replace({bare}, '(^|/)(?:index|readme|_index)$', '')"
    return f"regexp_replace({folder}, '(^|/)\\d+[-_.]([^\\d/])', '\\1\\2', 'g')"


#: A post's file named for its date, ``2016-07-27-jest-14.md``: served at
#: ``/2016/07/27/jest-14`` below the blog's address (Jekyll's ``/:year/:month/:day/:title``,
#: Docusaurus' ``/blog/2016/07/27/jest-14``)
_DATED = r"^(\d{4})-(\d{2})-(\d{2})-(.+)$"


def links_sql(where: str = "") -> str:
    """The links of ``link_rows`` (filtered by ``where``), resolved: the columns of
    ``ra.store.artifacts.LINKS_VIEW``. A wiki link's page name matches a file's name with
    spaces and dashes alike (``[[Getting Started]]`` is ``Getting-Started.md`` in a GitHub
    wiki, ``Getting Started.md`` in an Obsidian vault, which is preferred when both are
    there); ``[[a|b]]`` names page ``a`` (Obsidian, MediaWiki), else page ``b`` (GitHub's
    wikis, Gollum: ``[[Link text|Page-Name]]``; Dendron: ``[[Details|note.name#details]]``,
    its heading among the link's anchors).

    A link that names no file is a page of the site (``_page``): the page it names, or
    the longest of two folders or more its URL ends with, under the site's mount
    (Nuxt's ``/docs/4.x/api/composables/use-fetch`` is ``4.api/2.composables/use-fetch.md``
    of the tree ``docs``; Jest's ``/docs/configuration`` is ``docs/Configuration.md`` of
    the tree ``.``). A page of one name is not taken at the end of a longer URL: a
    site's ``/blog/intro`` is not the tree's ``intro.md``. A bare name (no ``/``, no
    suffix) that is no file beside the linking one is the page of that name in any
    folder, the shortest path first, but a folder's page (Svelte serves every page at
    ``/docs/svelte/NAME`` and links ``[each](each#Keyed-each-blocks)`` across folders)."""
    return f"""\
WITH l AS (SELECT * FROM (SELECT * FROM {RAW} {where}) WHERE seq >= 0),  -- the links
own AS MATERIALIZED (  -- the rows of pages and anchors (row groups of links only are skipped)
  SELECT * FROM {RAW} WHERE seq < 0),
named AS (
  SELECT tree, path, id,
         regexp_extract(lower(path), '([^/]*?)(?:\\.(?:{_SUFFIXES}))?$', 1) AS stem
  FROM meta WHERE depth = 0),
docs AS (SELECT *, replace(stem, ' ', '-') AS name FROM named),
cand AS (
  SELECT ord, seq, tree, unnest(target_paths) AS path, target_paths
  FROM l WHERE NOT external),
by_path AS (
  SELECT c.ord, c.seq, arg_min(d.id, list_position(c.target_paths, c.path)) AS doc_id
  FROM cand c JOIN docs d ON d.tree = c.tree AND d.path = c.path
  GROUP BY c.ord, c.seq),
by_name AS (
  SELECT l.ord, l.seq,
         arg_min(d.id, (d.stem <> l.target_name)::INTEGER * 1000000 + length(d.path)) AS doc_id
  FROM l JOIN docs d ON d.tree = l.tree AND d.name = replace(l.target_name, ' ', '-')
  GROUP BY l.ord, l.seq),
by_text AS (
  SELECT l.ord, l.seq, arg_min(d.id, length(d.path)) AS doc_id
  FROM l JOIN docs d ON d.tree = l.tree
   AND d.name = replace(regexp_replace(lower(trim(split_part(l.text, '#', 1))),
                                       '\\.(?:{_SUFFIXES})$', ''), ' ', '-')
  WHERE l.kind = 'wiki' AND l.target_name IS NOT NULL AND l.text <> l.target
  GROUP BY l.ord, l.seq),
named_or_found AS (
  SELECT l.*, coalesce(p.doc_id, n.doc_id, t.doc_id) AS doc_id
  FROM l LEFT JOIN by_path p ON p.ord = l.ord AND p.seq = l.seq
  LEFT JOIN by_name n ON n.ord = l.ord AND n.seq = l.seq
  LEFT JOIN by_text t ON t.ord = l.ord AND t.seq = l.seq),
wanted AS (
  SELECT ord, seq, tree, page, regexp_extract(page, '[^/]*$') AS leaf,
         NOT regexp_matches(regexp_extract(target, '^[^#?]*'), '[/.]') AS bare,
         kind <> 'link' AS wiki, starts_with(target, '/') AS rooted, lower(path) AS source
  FROM (SELECT ord, seq, tree, path, target, kind, {_page("target_paths[1]")} AS page
        FROM named_or_found
        WHERE doc_id IS NULL AND NOT external AND len(target_paths) > 0)),
paths AS MATERIALIZED (
  SELECT *, regexp_extract(page, '[^/]*$') AS leaf
  FROM (SELECT tree, id, {_page("path")} AS page,
               regexp_matches(lower(path), '(^|/)(index|readme|_index)\\.[^/]*$') AS folder,
               false AS moved
        FROM named
        UNION ALL  -- the addresses front matter gives (ra.text.links.declared_pages)
        SELECT d.tree, d.id, {_page("r.target_paths[1]")}, false, r.text = 'moved'
        FROM own r JOIN named d ON d.tree = r.tree AND d.path = r.path
        WHERE r.seq > -{ANCHOR_SEQ})),
pages AS (  -- a dated post's page is its date's folders too: Jekyll's and Docusaurus' blogs
  SELECT tree, id, page, leaf, folder, moved FROM paths WHERE page <> ''
  UNION ALL
  SELECT tree, id, regexp_replace(leaf, '{_DATED}', '\\1/\\2/\\3/\\4') AS page,
         regexp_extract(leaf, '{_DATED}', 4) AS leaf, folder, moved
  FROM paths WHERE leaf[1] BETWEEN '0' AND '9' AND regexp_matches(leaf, '{_DATED}')),
at_page AS (
  SELECT w.ord, w.seq, w.bare AND NOT d.folder AS bare, d.id, d.page, d.moved,
         w.page = d.page OR (contains(d.page, '/') AND ends_with(w.page, '/' || d.page))
           AS served,
         w.wiki AND ends_with(d.page, '/' || w.page) AS within,
         w.rooted AND ends_with(d.page, '/' || w.page) AND starts_with(w.source, root)
           AND (contains(w.page, '/') OR NOT contains(rtrim(root, '/'), '/')) AS below
  FROM wanted w JOIN pages d ON d.tree = w.tree AND d.leaf = w.leaf,
  LATERAL (SELECT left(d.page, length(d.page) - length(w.page)) AS root)),
by_page AS (  -- the page it is served at, the longest; else the shortest that ends with
              -- a wiki link's path; else the page below the deepest folder holding the
              -- linking file that a site-absolute URL names (one name: below a folder of
              -- the tree's root); else the page that moved from there; else, for a name,
              -- the shortest
  SELECT ord, seq, arg_max(id, CASE WHEN served AND NOT moved THEN 4000000 + length(page)
                                    WHEN within THEN 3000000 - length(page)
                                    WHEN below THEN 2000000 + length(page)
                                    WHEN served THEN 1000000 + length(page)
                                    ELSE -length(page) END) AS doc_id
  FROM at_page WHERE served OR within OR below OR bare GROUP BY ord, seq),
resolved AS (
  SELECT f.* REPLACE (coalesce(f.doc_id, b.doc_id) AS doc_id)
  FROM named_or_found f LEFT JOIN by_page b ON b.ord = f.ord AND b.seq = f.seq),
anchors AS (
  SELECT ord, seq, doc_id, unnest(target_anchors) AS anchor, target_anchors
  FROM resolved WHERE doc_id IS NOT NULL),
declared AS (  -- the ids HTML anchors give chunks (rows of kind anchor)
  SELECT d.id AS doc_id, o.target AS anchor, m.id AS chunk_id
  FROM own o JOIN named d ON d.tree = o.tree AND d.path = o.path JOIN meta m ON m.ord = o.ord
  WHERE o.seq <= -{ANCHOR_SEQ}),
by_anchor AS (  -- a heading's id first, then an id an anchor gives, then a heading's id
              -- as another site's slugger spells it (VuePress: `markdown.anchor` is
              -- #markdown-anchor, ra's #markdownanchor): the same but for its dashes
  SELECT ord, seq, arg_min(chunk_id, rank) AS chunk_id
  FROM (SELECT a.ord, a.seq, m.id AS chunk_id,
               list_position(a.target_anchors, a.anchor) * 3 AS rank
        FROM anchors a JOIN meta m ON m.id = a.doc_id || '#' || a.anchor
        UNION ALL
        SELECT a.ord, a.seq, x.chunk_id, list_position(a.target_anchors, a.anchor) * 3 + 1
        FROM anchors a JOIN declared x ON x.doc_id = a.doc_id AND x.anchor = a.anchor
        UNION ALL
        SELECT a.ord, a.seq, m.id, list_position(a.target_anchors, a.anchor) * 3 + 2
        FROM anchors a JOIN meta m ON m.doc_id = a.doc_id AND m.id <> m.doc_id
         AND replace(split_part(m.id, '#', 2), '-', '') = replace(a.anchor, '-', ''))
  GROUP BY ord, seq)
SELECT s.id AS source_id, r.ord AS source_ord, r.seq, r.kind, r.text, r.target,
       r.external, coalesce(b.chunk_id, r.doc_id) AS target_id
FROM resolved r JOIN meta s ON s.ord = r.ord
LEFT JOIN by_anchor b ON b.ord = r.ord AND b.seq = r.seq"""


#: The links out of one chunk's subtree (``$lo .. $hi``), in reading order.
SUBTREE_LINKS_SQL = (links_sql("WHERE ord BETWEEN $lo AND $hi")
                     + "\nORDER BY source_ord, seq")


@dataclass(frozen=True)
class OutLink:
    """A link out of a chunk: its text, its target as written, the chunk it reaches."""

    text: str
    target: str
    id: str | None  # the indexed chunk it points to, None when none

    def to_dict(self) -> dict:
        return {"text": self.text, "target": self.target, "id": self.id}


def out_links(reader, ord_: int, descendants: int) -> list[OutLink]:
    """The links of the chunk at ``ord_`` and its subsections, in reading order."""
    rows = reader.query(SUBTREE_LINKS_SQL, {"lo": ord_, "hi": ord_ + descendants})
    return [OutLink(text, target, target_id)
            for _s, _o, _q, _k, text, target, _e, target_id in rows]
