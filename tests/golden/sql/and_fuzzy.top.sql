WITH alts AS (SELECT unnest($p0::INTEGER[]) AS clause, unnest($p1::INTEGER[]) AS term_id, unnest($p2::DOUBLE[]) AS factor),
per_chunk AS (SELECT ord, bool_or(is_global) AS is_global, max(s) FILTER (WHERE clause = 0) AS c0, max(s) FILTER (WHERE clause = 1) AS c1 FROM (SELECT a.clause, p.ord, p.is_global, a.factor * p.impact AS s FROM impacts p JOIN alts a ON p.term_id = a.term_id WHERE NOT p.archived) GROUP BY ord),
cand AS (SELECT ord, (coalesce(c0, 0) + coalesce(c1, 0)) * CASE WHEN is_global THEN 1.0 ELSE $p3 END AS score, (c0 IS NOT NULL)::INTEGER * $p5 + (c1 IS NOT NULL)::INTEGER * $p6 AS matched, ((c0 IS NOT NULL) AND (c1 IS NOT NULL)) AS ok FROM per_chunk),
totals AS (SELECT bool_or(ok) AS any_ok, count(*) FILTER (WHERE ok) AS n_ok, count(*) AS n_partial FROM cand),
ranked AS (SELECT c.ord, CASE WHEN t.any_ok THEN c.score ELSE c.score * pow(c.matched / $p7, $p8) END AS score, c.matched, t.any_ok AS complete, CASE WHEN t.any_ok THEN t.n_ok ELSE t.n_partial END AS total FROM cand c, totals t WHERE c.ok OR NOT t.any_ok)
SELECT score, matched, complete, total, NULL::INTEGER[] AS tainted, ord FROM ranked QUALIFY rank() OVER (ORDER BY score DESC) <= $p4
