package chat

import (
	"context"
	"sync"
	"time"

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
type presenceTimes struct {
	active, connected *int64
}

// presenceChange is what a report does to a user's presence.
type presenceChange struct {
	next                   presenceTimes
	changed, creating      bool
	becameOnline           bool
	connectedMoved, active bool
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
		c.next.connected = &now
		if active {
			c.next.active = &now
		}
		return c
	}
	const day = 86400
	sinceActive, sinceConnected := int64(day), int64(day)
	if cur.active != nil {
		sinceActive = now - *cur.active
	}
	if cur.connected != nil {
		sinceConnected = now - *cur.connected
	}
	c := presenceChange{next: cur}
	c.becameOnline = active && sinceActive > presenceOfflineThresholdSeconds-presencePingIntervalSeconds-10
	if sinceConnected > presenceUpdateMinFreqSeconds {
		c.next.connected, c.changed = &now, true
	}
	if active && sinceActive > presenceUpdateMinFreqSeconds {
		c.next.active, c.changed = &now, true
		if c.next.connected == nil || now > *c.next.connected {
			c.next.connected = &now
		}
	}
	return c
}

// later returns the later of two optional times.
func later(a, b *int64) *int64 {
	switch {
	case a == nil:
		return b
	case b == nil || *a >= *b:
		return a
	}
	return b
}

// merge is the later of each time of p and q.
func (p presenceTimes) merge(q presenceTimes) presenceTimes {
	return presenceTimes{active: later(p.active, q.active), connected: later(p.connected, q.connected)}
}

func (p presenceTimes) equal(q presenceTimes) bool {
	eq := func(a, b *int64) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }
	return eq(p.active, q.active) && eq(p.connected, q.connected)
}

type presenceKey struct{ realm, user int64 }

// presenceBuffer holds the presence of the users who reported it to this
// server, and which of them changed since the last flush.
type presenceBuffer struct {
	mu    sync.Mutex
	known map[presenceKey]presenceTimes
	dirty map[presenceKey]bool

	flushMu sync.Mutex // one flush at a time
}

func newPresenceBuffer() *presenceBuffer {
	return &presenceBuffer{known: map[presenceKey]presenceTimes{}, dirty: map[presenceKey]bool{}}
}

// reportPresence records a report of me's presence at now.
func (s *Service) reportPresence(ctx context.Context, realm *storage.Realm, me *storage.User, active bool, now int64) error {
	b := s.shared.presence
	key := presenceKey{realm.ID, me.ID}
	b.mu.Lock()
	cur, ok := b.known[key]
	b.mu.Unlock()
	if !ok {
		rows, err := s.store.GetPresences(ctx, realm.ID, []int64{me.ID})
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			// No row: the write path creates it (and says so).
			return s.writePresence(ctx, realm, me, active, now, false)
		}
		cur = presenceTimes{active: rows[0].LastActive, connected: rows[0].LastConnected}
	}
	b.mu.Lock()
	if known, ok := b.known[key]; ok {
		cur = cur.merge(known)
	}
	c := applyPresenceReport(cur, true, active, now)
	if !c.becameOnline {
		if c.changed {
			b.known[key], b.dirty[key] = c.next, true
		} else if !ok {
			b.known[key] = cur
		}
		b.mu.Unlock()
		return nil
	}
	b.mu.Unlock()
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
	s.shared.presence.settle(presenceKey{realm.ID, me.ID}, written)
	return nil
}

// settle records that written is stored for key: what the server held
// is clean unless it is newer.
func (b *presenceBuffer) settle(key presenceKey, written presenceTimes) {
	b.mu.Lock()
	defer b.mu.Unlock()
	known, ok := b.known[key]
	merged := written
	if ok {
		merged = known.merge(written)
	}
	b.known[key] = merged
	if merged.equal(written) {
		delete(b.dirty, key)
	}
}

func (s *Service) writePresenceTx(ctx context.Context, w *writeTx, realm *storage.Realm, me *storage.User, active bool, now int64, force bool) (presenceTimes, error) {
	w.keepCallers()
	rows, err := w.GetPresences(ctx, realm.ID, []int64{me.ID})
	if err != nil {
		return presenceTimes{}, err
	}
	cur, exists := presenceTimes{}, len(rows) > 0
	if exists {
		cur = presenceTimes{active: rows[0].LastActive, connected: rows[0].LastConnected}
	}
	b := s.shared.presence
	b.mu.Lock()
	if known, ok := b.known[presenceKey{realm.ID, me.ID}]; ok && exists {
		cur = cur.merge(known)
	}
	b.mu.Unlock()
	c := applyPresenceReport(cur, exists, active, now)
	if !c.changed {
		return cur, nil
	}
	if err := w.SavePresences(ctx, realm.ID, []storage.Presence{{UserID: me.ID, LastActive: c.next.active, LastConnected: c.next.connected}}); err != nil {
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
	key := presenceKey{realm.ID, me.ID}
	if enabled {
		written, err := s.writePresenceTx(ctx, w, realm, me, true, now, true)
		if err != nil {
			return err
		}
		w.afterCommit(func() { s.shared.presence.settle(key, written) })
		return nil
	}
	// Forget what this server holds (it must not be flushed over the
	// hidden presence), then store the hidden one.
	b := s.shared.presence
	b.mu.Lock()
	delete(b.known, key)
	delete(b.dirty, key)
	b.mu.Unlock()
	if err := w.DeletePresence(ctx, realm.ID, me.ID); err != nil {
		return err
	}
	hidden := now - presenceOfflineThresholdSeconds - 120
	times := presenceTimes{connected: &hidden}
	if err := w.SavePresences(ctx, realm.ID, []storage.Presence{{UserID: me.ID, LastConnected: times.connected}}); err != nil {
		return err
	}
	w.afterCommit(func() { s.shared.presence.settle(key, times) })
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
// batches; failed batches stay for the next flush.
func (s *Service) flushPresence(ctx context.Context) {
	b := s.shared.presence
	b.flushMu.Lock()
	defer b.flushMu.Unlock()
	b.mu.Lock()
	byRealm := map[int64][]storage.Presence{}
	for key := range b.dirty {
		t := b.known[key]
		byRealm[key.realm] = append(byRealm[key.realm], storage.Presence{UserID: key.user, LastActive: t.active, LastConnected: t.connected})
	}
	clear(b.dirty)
	b.mu.Unlock()
	for realmID, rows := range byRealm {
		for start := 0; start < len(rows); start += presenceFlushBatch {
			batch := rows[start:min(start+presenceFlushBatch, len(rows))]
			if err := s.flushPresenceBatch(ctx, realmID, batch); err != nil {
				_ = s.internal(ctx, "flush presence", err)
				b.mu.Lock()
				for _, p := range batch {
					b.dirty[presenceKey{realmID, p.UserID}] = true
				}
				b.mu.Unlock()
			}
		}
	}
	s.evictPresence()
}

// flushPresenceBatch stores the rows, each merged with the stored one
// (another server may have stored a later time). A row whose user's entry
// changed since the flush took it is left out: a newer report marked it
// for the next flush, or a switch to invisible mode replaced it (which
// the old times must not overwrite).
func (s *Service) flushPresenceBatch(ctx context.Context, realmID int64, batch []storage.Presence) error {
	return s.write(ctx, realmID, func(w *writeTx) error {
		w.keepCallers()
		ids := make([]int64, len(batch))
		for i, p := range batch {
			ids[i] = p.UserID
		}
		stored, err := w.GetPresences(ctx, realmID, ids)
		if err != nil {
			return err
		}
		byUser := make(map[int64]presenceTimes, len(stored))
		for _, p := range stored {
			byUser[p.UserID] = presenceTimes{active: p.LastActive, connected: p.LastConnected}
		}
		rows := make([]storage.Presence, 0, len(batch))
		b := s.shared.presence
		for _, p := range batch {
			mine := presenceTimes{active: p.LastActive, connected: p.LastConnected}
			b.mu.Lock()
			now, ok := b.known[presenceKey{realmID, p.UserID}]
			b.mu.Unlock()
			if !ok || !now.equal(mine) {
				continue
			}
			theirs, ok := byUser[p.UserID]
			if ok && theirs.merge(mine).equal(theirs) {
				continue // nothing newer than what is stored
			}
			if ok {
				mine = theirs.merge(mine)
			}
			rows = append(rows, storage.Presence{UserID: p.UserID, LastActive: mine.active, LastConnected: mine.connected})
		}
		return w.SavePresences(ctx, realmID, rows)
	})
}

// evictPresence forgets the clean entries of users offline for a while
// (their next report reads their row again), so the buffer holds about
// the users online on this server.
func (s *Service) evictPresence() {
	b := s.shared.presence
	cutoff := s.nowUnix() - presenceOfflineThresholdSeconds
	b.mu.Lock()
	defer b.mu.Unlock()
	for key, t := range b.known {
		if !b.dirty[key] && (t.connected == nil || *t.connected < cutoff) {
			delete(b.known, key)
		}
	}
}

// runPresenceFlusher flushes every presenceFlushEvery until ctx ends, and
// once more then.
func (s *Service) runPresenceFlusher(ctx context.Context) {
	every := s.presenceFlushEvery
	if every <= 0 {
		every = defaultPresenceFlushInterval
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			s.flushPresence(context.WithoutCancel(ctx))
			return
		case <-tick.C:
			s.flushPresence(ctx)
		}
	}
}

// FlushPresence writes the presence reports this Service holds in memory
// now (Run does it periodically and Close at the end); tests and hosts
// that do not call Run use it.
func (s *Service) FlushPresence(ctx context.Context) { s.flushPresence(ctx) }
