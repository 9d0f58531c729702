package chat

import (
	"context"
	"time"

	"github.com/teamchat/chat/internal/loop"
	"github.com/teamchat/chat/internal/presencebuf"
	"github.com/teamchat/chat/storage"
)

// Presence writes are cheap: a ping that only moves an online user's
// timestamps forward is recorded in memory and written with the others
// by the next flush (one statement per batch of users, every
// presenceFlushInterval), so a ping every minute from every client of a
// large organization costs each user at most one row write per flush
// interval, and usually one per minute (the reference's 55-second rule
// keeps the timestamps from moving more often). Pings that change what
// others must be told now — a user's first presence, or coming back
// online — are written at once, with their event. Reads come from the
// database: every server agrees through it, and what a server has not
// flushed yet is at most one flush interval old (a restart loses at most
// that much, and Close flushes).

// Presence constants (facts §9).
const (
	presenceOfflineThresholdSeconds = 200
	presencePingIntervalSeconds     = 60
	presenceUpdateMinFreqSeconds    = 55
	presenceLegacyActivitySeconds   = 70
	// presenceEventUserLimit: organizations with more active users get no
	// presence events (clients poll); the reference's
	// USER_LIMIT_FOR_SENDING_PRESENCE_UPDATE_EVENTS.
	presenceEventUserLimit = 100
	// presenceFlushBatch is the most rows one flush statement writes.
	presenceFlushBatch = 1000
)

const defaultPresenceFlushInterval = 15 * time.Second

// WithPresenceFlushInterval sets how often Run writes the presence pings
// held in memory (default 15 s; at most the ping interval, 60 s, is
// sensible, since that is what a crash may lose).
func WithPresenceFlushInterval(d time.Duration) Option {
	return func(s *Service) { s.presenceFlushEvery = d }
}

// presenceTimes is a user's presence as this server knows it.
type presenceTimes = presencebuf.Times

// presenceChange is what a report does to a user's presence.
type presenceChange struct {
	next              presenceTimes
	changed, creating bool
	becameOnline      bool
}

// applyPresenceReport is the reference's update rule for one report at
// now: a new row is connected now (and active now for an active
// report); otherwise each time moves only when the report is more than
// presenceUpdateMinFreqSeconds newer, and an active report raises the
// connected time with it. The user became online when the report is
// active and they were not active for longer than the offline threshold
// less one ping interval and 10 s.
func applyPresenceReport(cur presenceTimes, exists, active bool, now int64) presenceChange {
	if !exists {
		c := presenceChange{changed: true, creating: true, becameOnline: active}
		c.next.Connected = &now
		if active {
			c.next.Active = &now
		}
		return c
	}
	const day = 86400
	sinceActive, sinceConnected := int64(day), int64(day)
	if cur.Active != nil {
		sinceActive = now - *cur.Active
	}
	if cur.Connected != nil {
		sinceConnected = now - *cur.Connected
	}
	c := presenceChange{next: cur}
	c.becameOnline = active && sinceActive > presenceOfflineThresholdSeconds-presencePingIntervalSeconds-10
	if sinceConnected > presenceUpdateMinFreqSeconds {
		c.next.Connected, c.changed = &now, true
	}
	if active && sinceActive > presenceUpdateMinFreqSeconds {
		c.next.Active, c.changed = &now, true
		if c.next.Connected == nil || now > *c.next.Connected {
			c.next.Connected = &now
		}
	}
	return c
}

// storedPresence is the user's stored presence, and whether there is one.
func (r reads) storedPresence(ctx context.Context, realmID, userID int64) (presenceTimes, bool, error) {
	rows, err := r.st.GetPresences(ctx, realmID, []int64{userID})
	if err != nil || len(rows) == 0 {
		return presenceTimes{}, false, err
	}
	return presenceTimes{Active: rows[0].LastActive, Connected: rows[0].LastConnected}, true, nil
}

// presenceKey names a user in the presence buffer.
func presenceKey(realmID, userID int64) presencebuf.Key {
	return presencebuf.Key{Realm: realmID, User: userID}
}

// reportPresence records a report of me's presence at now: in the buffer,
// unless it must be written (and told) at once.
func (s *Service) reportPresence(ctx context.Context, realm *storage.Realm, me *storage.User, active bool, now int64) error {
	b := s.presence
	key := presenceKey(realm.ID, me.ID)
	cur, ok := b.Held(key)
	if !ok {
		stored, exists, err := s.reads().storedPresence(ctx, realm.ID, me.ID)
		if err != nil {
			return err
		}
		if !exists {
			// No row: the write path creates it (and says so).
			return s.writePresence(ctx, realm, me, active, now, false)
		}
		cur = stored
	}
	writeNow := false
	b.Update(key, cur, func(cur presenceTimes) (presenceTimes, bool, bool) {
		c := applyPresenceReport(cur, true, active, now)
		if c.becameOnline {
			writeNow = true
			return cur, false, false
		}
		return c.next, c.changed, true
	})
	if !writeNow {
		return nil
	}
	return s.writePresence(ctx, realm, me, active, now, false)
}

// writePresence applies a report in a write transaction, against the
// stored row merged with what this server holds, and tells who may see
// the user when they are new or came back online (or always, with
// force: a change of their presence_enabled setting).
func (s *Service) writePresence(ctx context.Context, realm *storage.Realm, me *storage.User, active bool, now int64, force bool) error {
	var written presenceTimes
	err := s.write(ctx, realm.ID, func(w *writeTx) error {
		var err error
		written, err = s.writePresenceTx(ctx, w, realm, me, active, now, force)
		return err
	})
	if err != nil {
		return err
	}
	s.presence.Settle(presenceKey(realm.ID, me.ID), written)
	return nil
}

func (s *Service) writePresenceTx(ctx context.Context, w *writeTx, realm *storage.Realm, me *storage.User, active bool, now int64, force bool) (presenceTimes, error) {
	w.keepCallers()
	cur, exists, err := w.reads().storedPresence(ctx, realm.ID, me.ID)
	if err != nil {
		return presenceTimes{}, err
	}
	if held, ok := s.presence.Held(presenceKey(realm.ID, me.ID)); ok && exists {
		cur = cur.Merge(held)
	}
	c := applyPresenceReport(cur, exists, active, now)
	if !c.changed {
		return cur, nil
	}
	if err := w.SavePresences(ctx, realm.ID, []storage.Presence{{UserID: me.ID, LastActive: c.next.Active, LastConnected: c.next.Connected}}); err != nil {
		return presenceTimes{}, err
	}
	if force || !realm.PresenceDisabled && (c.creating || c.becameOnline) {
		if err := s.emitPresence(ctx, w, realm, me, c.next, force); err != nil {
			return presenceTimes{}, err
		}
	}
	return c.next, nil
}

// presenceEnabledChanged follows a change of me's presence_enabled
// setting inside its write, as the reference does: turning it off
// replaces their presence by one old enough to show them offline,
// turning it on reports them active now; either way everyone is told.
func (s *Service) presenceEnabledChanged(ctx context.Context, w *writeTx, realm *storage.Realm, me *storage.User, enabled bool) error {
	now := s.nowUnix()
	key := presenceKey(realm.ID, me.ID)
	if enabled {
		written, err := s.writePresenceTx(ctx, w, realm, me, true, now, true)
		if err != nil {
			return err
		}
		w.afterCommit(func() { s.presence.Settle(key, written) })
		return nil
	}
	// Forget what this server holds (it must not be flushed over the
	// hidden presence), then store the hidden one.
	s.presence.Forget(key)
	if err := w.DeletePresence(ctx, realm.ID, me.ID); err != nil {
		return err
	}
	hidden := now - presenceOfflineThresholdSeconds - 120
	times := presenceTimes{Connected: &hidden}
	if err := w.SavePresences(ctx, realm.ID, []storage.Presence{{UserID: me.ID, LastConnected: times.Connected}}); err != nil {
		return err
	}
	w.afterCommit(func() { s.presence.Settle(key, times) })
	return s.emitPresence(ctx, w, realm, me, times, true)
}

// emitPresence tells everyone who may see me of their presence: in an
// organization of at most presenceEventUserLimit active users (or with
// force). The event has the legacy form (the reference's, for every
// client).
func (s *Service) emitPresence(ctx context.Context, w *writeTx, realm *storage.Realm, me *storage.User, t presenceTimes, force bool) error {
	if !force {
		small, err := w.ActiveUsersAtMost(ctx, realm.ID, presenceEventUserLimit)
		if err != nil || !small {
			return err
		}
	}
	active, connected := presenceDefaults(t, me.DateJoined)
	serverTime := float64(s.now().UnixMicro()) / 1e6
	w.emit(everyone, PresenceEvent{UserID: me.ID, Email: apiEmail(realm, me), ServerTimestamp: serverTime,
		Presence: map[string]LegacyPresence{"website": legacyPresence(active, connected)}})
	return nil
}

// flushPresence writes what this server holds and has not stored yet, in
// batches; failed batches stay for the next flush. Then it forgets the
// clean entries of users offline for a while (their next report reads
// their row again).
func (s *Service) flushPresence(ctx context.Context) {
	s.presence.Flush(presenceFlushBatch, func(realmID int64, batch []presencebuf.Entry) error {
		err := s.flushPresenceBatch(ctx, realmID, batch)
		if err != nil {
			_ = s.internal(ctx, "flush presence", err)
		}
		return err
	})
	s.presence.Evict(s.nowUnix() - presenceOfflineThresholdSeconds)
}

// flushPresenceBatch stores the entries, each merged with the stored row
// (another server may have stored a later time). An entry that changed in
// the buffer since the flush took it is left out: a newer report marked
// it for the next flush, or a switch to invisible mode replaced it (which
// the old times must not overwrite).
func (s *Service) flushPresenceBatch(ctx context.Context, realmID int64, batch []presencebuf.Entry) error {
	return s.write(ctx, realmID, func(w *writeTx) error {
		w.keepCallers()
		ids := make([]int64, len(batch))
		for i, e := range batch {
			ids[i] = e.User
		}
		stored, err := w.GetPresences(ctx, realmID, ids)
		if err != nil {
			return err
		}
		byUser := make(map[int64]presenceTimes, len(stored))
		for _, p := range stored {
			byUser[p.UserID] = presenceTimes{Active: p.LastActive, Connected: p.LastConnected}
		}
		rows := make([]storage.Presence, 0, len(batch))
		for _, e := range batch {
			mine := e.Times
			if !s.presence.Current(presenceKey(realmID, e.User), mine) {
				continue
			}
			theirs, ok := byUser[e.User]
			if ok && theirs.Merge(mine).Equal(theirs) {
				continue // nothing newer than what is stored
			}
			if ok {
				mine = theirs.Merge(mine)
			}
			rows = append(rows, storage.Presence{UserID: e.User, LastActive: mine.Active, LastConnected: mine.Connected})
		}
		return w.SavePresences(ctx, realmID, rows)
	})
}

// runPresenceFlusher flushes every presenceFlushEvery until ctx ends, and
// once more then.
func (s *Service) runPresenceFlusher(ctx context.Context) {
	l := loop.Loop{Every: s.presenceFlushEvery}
	_ = l.Run(ctx, defaultPresenceFlushInterval, func(ctx context.Context) time.Duration {
		s.flushPresence(ctx)
		return loop.NoSooner
	})
	s.flushPresence(context.WithoutCancel(ctx))
}

// FlushPresence writes the presence reports this Service holds in memory
// now (Run does it periodically and Close at the end); tests and hosts
// that do not call Run use it.
func (s *Service) FlushPresence(ctx context.Context) { s.flushPresence(ctx) }
