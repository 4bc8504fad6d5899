WITH fb AS (SELECT unnest($p0::INTEGER[]) AS ord, unnest($p1::DOUBLE[]) AS w),
tf AS (SELECT p.ord, p.term_id, sum(p.tf) AS tf FROM tf_postings p WHERE p.ord IN (SELECT ord FROM fb) GROUP BY p.ord, p.term_id),
len AS (SELECT ord, sum(tf) AS n FROM tf GROUP BY ord)
SELECT tf.term_id, sum(fb.w * tf.tf / len.n) AS weight FROM tf JOIN len ON len.ord = tf.ord JOIN fb ON fb.ord = tf.ord GROUP BY tf.term_id ORDER BY weight DESC, tf.term_id LIMIT $p2
