"""The query language: a lexer, a recursive-descent parser and the AST they produce.

``parse(text)`` turns a query string into an AST (``ra.query.ast``) or ``None`` for an empty
query, raising ``ra.errors.QueryError`` with a character position for anything it cannot
read. Planning (analysis, fuzzy expansion, SQL) happens later and only reads the AST.
"""
