-- Migration 0007 adds full-text search over messages (topic and the text
-- of the rendered content), built on what each database offers without
-- extra build tags: on SQLite an FTS4 table (messages_fts, docid = the
-- message ID, porter stemming), on PostgreSQL a tsvector column with a
-- GIN index (english configuration). The store writes the index with the
-- message; the index_messages step indexes the messages already there.
-- The text indexed is folded (storage.Fold), so matching ignores case on
-- both, non-ASCII letters included.

{{SEARCH_SETUP}}

--bun:split

{{SEARCH_SETUP_INDEX}}

--bun:split

--step:index_messages
