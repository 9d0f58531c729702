-- Migration 0030 gives two queries an index whose leading columns are
-- their equality conditions, so that PostgreSQL plans them well without
-- statistics (a database created or filled minutes ago): it then takes
-- any index whose columns a query fixes for as selective as any other.
--
-- A user's read ranges in a channel: (realm_id, stream_id) gives way to
-- (realm_id, stream_id, user_id). The planner read (realm, channel), every
-- subscriber's ranges of the channel, where the primary key (realm, user,
-- channel, first ID) holds exactly the user's; with the user in both,
-- either is a lookup of the user's ranges. The index still serves the
-- channel's ranges (its foreign key, ON DELETE CASCADE).
--
-- The missed-message notifications a deliverer claims, of one kind, due
-- first: (kind, due_at, id), whose order is the claim's. The planner read
-- the whole (user_id, kind) index for the kind and sorted. The index of
-- every kind by due time stays for the next due time.

CREATE INDEX read_ranges_stream_user_idx ON read_ranges (realm_id, stream_id, user_id);

--bun:split

DROP INDEX read_ranges_stream_idx;

--bun:split

CREATE INDEX pending_notifications_kind_due_idx ON pending_notifications (kind, due_at, id);
