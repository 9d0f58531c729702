-- Migration 0030 lets a user's read ranges in a channel be found by
-- either index that starts with the realm: (realm_id, stream_id) gives
-- way to (realm_id, stream_id, user_id). Without planner statistics
-- PostgreSQL takes any index whose columns the query fixes for as
-- selective as any other, and read (realm, channel) for a user's ranges
-- there, every subscriber's ranges of the channel, when the primary key
-- (realm, user, channel, first ID) holds exactly the user's. With the
-- user in both, either is a lookup of the user's ranges. The index
-- still serves the channel's ranges (its foreign key, ON DELETE
-- CASCADE).

CREATE INDEX read_ranges_stream_user_idx ON read_ranges (realm_id, stream_id, user_id);

--bun:split

DROP INDEX read_ranges_stream_idx;
