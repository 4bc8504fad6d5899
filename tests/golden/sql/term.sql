WITH term_hits AS (WITH q(clause, term_id, weight, idf, mask) AS (VALUES (0, $p0, $p1, $p2, 15)) SELECT q.clause, p.ord, p.field, p.tf, q.weight, q.idf, q.term_id AS alt FROM postings p JOIN q ON p.term_id = q.term_id WHERE p.term_id IN ($p3) AND (q.mask >> p.field) & 1 = 1),
hits AS (SELECT * FROM term_hits),
norm AS (SELECT h.clause, h.alt, h.ord, any_value(h.weight) AS weight, any_value(h.idf) AS idf, sum(h.tf * CASE h.field WHEN 0 THEN $p6 / (1 - $p4 + $p4 * m.len_title / $p5) WHEN 1 THEN $p8 / (1 - $p4 + $p4 * m.len_tags / $p7) WHEN 2 THEN $p10 / (1 - $p4 + $p4 * m.len_path / $p9) WHEN 3 THEN $p12 / (1 - $p4 + $p4 * m.len_body / $p11) END) AS tfn FROM hits h JOIN meta m ON m.ord = h.ord GROUP BY h.clause, h.alt, h.ord),
clause_scores AS (SELECT clause, ord, max(weight * idf * tfn * ($p13 + 1) / ($p13 + tfn)) AS s FROM norm GROUP BY clause, ord),
per_chunk AS (SELECT ord, sum(s) FILTER (WHERE clause = 0) AS c0 FROM clause_scores GROUP BY ord),
tainted AS (SELECT NULL::INTEGER AS ord WHERE false),
cand AS (SELECT pc.ord, m.id, m.doc_id, m.parent_id, m.tree, m.path, m.depth, m.sibling_count, m.descendants, m.title, m.breadcrumb, m.is_global, m.tokens, m.line, m.mtime_ns, (coalesce(c0, 0)) * CASE WHEN m.is_global THEN 1.0 ELSE $p14 END AS score, (c0 IS NOT NULL)::INTEGER AS matched, (c0 IS NOT NULL) AS ok, (true) AND true AS neg_ok FROM per_chunk pc JOIN meta m ON m.ord = pc.ord WHERE true AND m.status IS DISTINCT FROM 'archived'),
flagged AS (SELECT *, bool_or(ok) OVER () AS any_ok FROM cand)
SELECT CASE WHEN any_ok THEN score ELSE score * pow(matched / 1, $p15) END AS score, matched, any_ok AS complete, count(*) OVER () AS total, (SELECT list(ord) FROM tainted) AS tainted, ord, id, doc_id, parent_id, tree, path, depth, sibling_count, descendants, title, breadcrumb, is_global, tokens, line, mtime_ns
FROM flagged
WHERE CASE WHEN any_ok THEN ok ELSE neg_ok AND matched > 0 END
ORDER BY 1 DESC, id
LIMIT $p16
