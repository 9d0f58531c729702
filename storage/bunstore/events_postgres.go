package bunstore

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/teamchat/chat/storage"
)

// notifyLimit is the largest payload sent inline: PostgreSQL refuses
// NOTIFY payloads of 8000 bytes or more. Larger ones are stored in
// event_payloads and the notification carries their row ID.
const notifyLimit = 7900

// eventPayloadTTL is how long a stored payload is kept for listeners.
const eventPayloadTTL = 10 * time.Minute

// eventChannel names the NOTIFY channel of the Store's schema, so that
// Stores on different schemas of one database (tests) don't hear each
// other.
func eventChannel(schema string) string {
	var b strings.Builder
	b.WriteString("teamchat_events_")
	for _, r := range strings.ToLower(schema) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' {
			b.WriteRune(r)
		}
	}
	name := b.String()
	if len(name) > 63 {
		name = name[:63]
	}
	return name
}

// notifyPostgres sends payload from the current transaction: inline, or
// through event_payloads when it is too large. Either way the
// notification text starts with the transaction ID (the batch's token).
func (s *Store) notifyPostgres(ctx context.Context, payload []byte) error {
	if xid := s.pending.xid; xid != "" && len(payload)+len(xid)+1 < notifyLimit {
		// The transaction's ID is known (a lock statement read it): a
		// NOTIFY statement, which returns nothing, goes out with the
		// commit.
		_, err := s.w.NewRaw("NOTIFY ?, ?", bun.Ident(s.channel), xid+" "+string(payload)).Exec(deferrable(ctx))
		return wrapErr("notify", err)
	}
	if len(payload) < notifyLimit {
		_, err := s.w.ExecContext(ctx, "SELECT pg_notify(?, pg_current_xact_id()::text || ' ' || ?)", s.channel, string(payload))
		return wrapErr("notify", err)
	}
	_, err := s.w.ExecContext(ctx, `WITH ins AS (INSERT INTO event_payloads (created_at, payload) VALUES (?, ?) RETURNING id)
		SELECT pg_notify(?, pg_current_xact_id()::text || ' #' || id) FROM ins`,
		time.Now().Unix(), string(payload), s.channel)
	return wrapErr("notify", err)
}

// listenPostgres listens on the schema's channel on a dedicated
// connection. Notifications of one transaction arrive one by one; since a
// Service publishes one payload per transaction, each becomes a batch.
// When the connection breaks, the listener reconnects and reports a Gap.
func (s *Store) listenPostgres(ctx context.Context, fn func(storage.EventBatch)) error {
	ln := pgdriver.NewListener(s.writer)
	if err := ln.Listen(ctx, s.channel); err != nil {
		_ = ln.Close()
		return wrapErr("listen", err)
	}
	if err := s.awaitListening(ctx, ln); err != nil {
		_ = ln.Close()
		return err
	}
	go func() {
		<-ctx.Done()
		_ = ln.Close()
	}()
	go func() {
		gap, broken := false, false
		defer s.listenerUp(&broken) // a listener that stopped is not down
		lastSweep := time.Now()
		for ctx.Err() == nil {
			_, text, err := ln.ReceiveTimeout(ctx, 5*time.Second)
			if err != nil {
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					s.listenerUp(&broken) // it waited on a connection
					if time.Since(lastSweep) > time.Minute {
						lastSweep = time.Now()
						_, _ = s.writer.ExecContext(ctx, "DELETE FROM event_payloads WHERE created_at < ?",
							time.Now().Add(-eventPayloadTTL).Unix())
					}
					continue
				}
				if ctx.Err() != nil {
					return
				}
				// The listener reconnects (and listens again) on the next
				// receive; what was sent meanwhile is lost.
				if !broken {
					broken = true
					s.listenDown.Add(1)
				}
				gap = true
				time.Sleep(200 * time.Millisecond)
				continue
			}
			s.listenerUp(&broken)
			if strings.HasPrefix(text, listenMarker) {
				continue // another listener making sure it listens
			}
			if gap {
				gap = false
				fn(storage.EventBatch{Gap: true})
			}
			b, ok := s.decodeNotification(ctx, text)
			if !ok {
				fn(storage.EventBatch{Gap: true})
				continue
			}
			fn(b)
		}
	}()
	return nil
}

// listenMarker starts the notifications a new listener sends itself.
const listenMarker = "listening "

// awaitListening returns once the listener's LISTEN is in effect. The
// driver sends LISTEN without waiting for the server to run it, so a
// commit right after Listen returns could go unheard: the listener
// notifies itself until it hears its own marker. Notifications heard
// before the marker belong to commits made before ListenEvents returns,
// which it does not promise to deliver.
func (s *Store) awaitListening(ctx context.Context, ln *pgdriver.Listener) error {
	marker := listenMarker + strconv.FormatInt(time.Now().UnixNano(), 36)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := s.writer.ExecContext(ctx, "SELECT pg_notify(?, ?)", s.channel, marker); err != nil {
			return wrapErr("listen: notify self", err)
		}
		wait := time.Now().Add(time.Second)
		for time.Now().Before(wait) {
			_, text, err := ln.ReceiveTimeout(ctx, time.Until(wait))
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				break
			}
			if err != nil {
				return wrapErr("listen: receive", err)
			}
			if text == marker {
				return nil
			}
		}
	}
	return errors.New("bunstore: listen: LISTEN did not take effect within 30 s")
}

// decodeNotification reads "token payload" or "token #id".
func (s *Store) decodeNotification(ctx context.Context, text string) (storage.EventBatch, bool) {
	tok, rest, ok := strings.Cut(text, " ")
	if !ok {
		return storage.EventBatch{}, false
	}
	token, err := strconv.ParseUint(tok, 10, 64)
	if err != nil {
		return storage.EventBatch{}, false
	}
	if ref, ok := strings.CutPrefix(rest, "#"); ok {
		id, err := strconv.ParseInt(ref, 10, 64)
		if err != nil {
			return storage.EventBatch{}, false
		}
		var payload string
		if err := s.writer.NewSelect().Table("event_payloads").Column("payload").
			Where("id = ?", id).Scan(ctx, &payload); err != nil {
			return storage.EventBatch{}, false
		}
		rest = payload
	}
	return storage.EventBatch{Token: token, Payloads: [][]byte{[]byte(rest)}}, true
}
