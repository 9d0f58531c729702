package chat

import (
	"context"
	"sync"

	"github.com/teamchat/chat/storage"
)

// max_message_id (GET /users/me, POST /register) is the newest message a
// user received: a direct message or any message they have a row for, one
// they sent, or a channel message sent while they were subscribed. At
// register it is read from the registration's snapshot (one statement,
// exact as the reference requires). GET /users/me answers it from memory:
//
//   - each channel's newest message ID, loaded once and raised by every
//     send to the channel;
//   - each user's newest message outside their open subscription periods
//     (their rows, what they sent, their closed periods), loaded once per
//     generation of the organization's records (a subscription change
//     starts a new one) and raised by every send, reaction, flag change
//     or edit that gives them a row;
//
// and the answer is the greater of the user's own value and the newest
// message of each channel they are subscribed to, when it came after
// their subscription began. Deletions and moves to another channel
// lower what was newest: they empty the organization's values, which
// load again as they are asked for.
//
// The write path records what each transaction raises (receivedChanges)
// and applies it after the commit, before the write returns, so a reader
// on this server sees its own send; other servers apply it when the event
// bus brings the write (a few milliseconds later). A value loaded while
// a write commits misses nothing: the changes applied since the load
// began are kept in a short log and replayed onto it (when more arrived
// than the log holds, the loaded value is used once and not kept).

// receivedLog is how many recent changes an organization keeps for
// replaying onto values loaded while they were applied.
const receivedLog = 512

// receivedIndex holds, per organization, the values max_message_id is
// answered from.
type receivedIndex struct {
	mu   sync.Mutex
	orgs map[int64]*orgReceived
}

type orgReceived struct {
	// epoch counts the resets (deletions, moves): a load that began in an
	// earlier epoch is not kept.
	epoch uint64
	// seq numbers the changes applied; log keeps the last receivedLog.
	seq      uint64
	log      [receivedLog]receivedChange
	channels map[int64]int64
	users    map[int64]userReceived
}

// userReceived is a user's newest message outside their open periods,
// valid for one generation of the organization's records.
type userReceived struct {
	newest int64
	gen    uint64
}

type receivedChange struct {
	seq  uint64
	user bool // key is a user (else a channel)
	key  int64
	id   int64
}

// receivedChanges is what one write raises or resets.
type receivedChanges struct {
	// Channels: the newest message ID the write added to each channel.
	Channels map[int64]int64 `json:"c,omitempty"`
	// Users: the newest message ID each user got a row for, or sent.
	Users map[int64]int64 `json:"u,omitempty"`
	// Reset: the write deleted messages or moved them to another channel.
	Reset bool `json:"x,omitempty"`
}

func (c *receivedChanges) empty() bool {
	return c == nil || !c.Reset && len(c.Channels) == 0 && len(c.Users) == 0
}

func raise(m *map[int64]int64, key, id int64) {
	if *m == nil {
		*m = map[int64]int64{}
	}
	if id > (*m)[key] {
		(*m)[key] = id
	}
}

// org returns the organization's values, made on first use; x.mu held.
func (x *receivedIndex) org(realmID int64) *orgReceived {
	if x.orgs == nil {
		x.orgs = map[int64]*orgReceived{}
	}
	o := x.orgs[realmID]
	if o == nil {
		o = &orgReceived{channels: map[int64]int64{}, users: map[int64]userReceived{}}
		x.orgs[realmID] = o
	}
	return o
}

// reset forgets the organization's values (InvalidateCaches: the store
// was changed behind the Service's back).
func (x *receivedIndex) reset(realmID int64) { x.apply(realmID, &receivedChanges{Reset: true}) }

// apply applies a committed write's changes.
func (x *receivedIndex) apply(realmID int64, c *receivedChanges) {
	if c.empty() {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	o := x.org(realmID)
	if c.Reset {
		o.epoch++
		clear(o.channels)
		clear(o.users)
		return
	}
	for ch, id := range c.Channels {
		o.note(false, ch, id)
		if have, ok := o.channels[ch]; ok && id > have {
			o.channels[ch] = id
		}
	}
	for u, id := range c.Users {
		o.note(true, u, id)
		if have, ok := o.users[u]; ok && id > have.newest {
			o.users[u] = userReceived{newest: id, gen: have.gen}
		}
	}
}

func (o *orgReceived) note(user bool, key, id int64) {
	o.seq++
	o.log[o.seq%receivedLog] = receivedChange{seq: o.seq, user: user, key: key, id: id}
}

// loadMark is where a load began: the values it reads from the store are
// kept only with the changes applied since.
type loadMark struct{ epoch, seq uint64 }

func (x *receivedIndex) mark(realmID int64) loadMark {
	x.mu.Lock()
	defer x.mu.Unlock()
	o := x.org(realmID)
	return loadMark{o.epoch, o.seq}
}

// replay raises id by the changes of key applied since m; ok is false
// when they are no longer all in the log (or a reset came between), and
// the value must not be kept. x.mu held.
func (o *orgReceived) replay(m loadMark, user bool, key, id int64) (int64, bool) {
	if o.epoch != m.epoch || o.seq-m.seq >= receivedLog {
		return id, false
	}
	for s := m.seq + 1; s <= o.seq; s++ {
		if c := o.log[s%receivedLog]; c.user == user && c.key == key && c.id > id {
			id = c.id
		}
	}
	return id, true
}

// channel is the channel's newest message ID, if known.
func (x *receivedIndex) channel(realmID, streamID int64) (int64, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	id, ok := x.org(realmID).channels[streamID]
	return id, ok
}

// keepChannel keeps a channel's newest ID loaded since m; it returns the
// value raised by what was applied meanwhile.
func (x *receivedIndex) keepChannel(realmID, streamID, id int64, m loadMark) int64 {
	x.mu.Lock()
	defer x.mu.Unlock()
	o := x.org(realmID)
	id, ok := o.replay(m, false, streamID, id)
	if ok {
		o.channels[streamID] = id
	}
	return id
}

// user is the user's newest message outside open periods, if known for
// generation gen.
func (x *receivedIndex) user(realmID, userID int64, gen uint64) (int64, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	u, ok := x.org(realmID).users[userID]
	return u.newest, ok && u.gen == gen
}

// keepUser is keepChannel for a user's value of generation gen.
func (x *receivedIndex) keepUser(realmID, userID, id int64, gen uint64, m loadMark) int64 {
	x.mu.Lock()
	defer x.mu.Unlock()
	o := x.org(realmID)
	id, ok := o.replay(m, true, userID, id)
	if ok {
		o.users[userID] = userReceived{newest: id, gen: gen}
	}
	return id
}

// maxMessageID is the ID of the newest message the user received, or -1
// when there is none: from memory on the Service's own reads (see
// above), else (a snapshot, a transaction) one statement of index seeks
// over the user's subscription periods.
func (r reads) maxMessageID(ctx context.Context, realmID, userID int64) (int64, error) {
	gen := r.c.generation(realmID)
	periods, err := r.userPeriods(ctx, realmID, userID)
	if err != nil {
		return 0, err
	}
	if r.recv == nil {
		id, err := r.st.NewestReceivedMessage(ctx, realmID, userID, spansOf(periods))
		return orNone(id), err
	}
	newest, ok := r.recv.user(realmID, userID, gen)
	if !ok {
		m := r.recv.mark(realmID)
		var closed []storage.ChannelSpan
		for _, sp := range spansOf(periods) {
			if sp.Through != nil {
				closed = append(closed, sp)
			}
		}
		if newest, err = r.st.NewestReceivedMessage(ctx, realmID, userID, closed); err != nil {
			return 0, err
		}
		newest = r.recv.keepUser(realmID, userID, newest, gen, m)
	}
	for _, p := range periods {
		if p.EndMessageID != nil {
			continue
		}
		id, err := r.channelNewest(ctx, realmID, p.StreamID)
		if err != nil {
			return 0, err
		}
		if id > p.StartMessageID && id > newest {
			newest = id
		}
	}
	return orNone(newest), nil
}

// channelNewest is the channel's newest message ID (0 when it has none),
// from memory when known.
func (r reads) channelNewest(ctx context.Context, realmID, streamID int64) (int64, error) {
	if id, ok := r.recv.channel(realmID, streamID); ok {
		return id, nil
	}
	m := r.recv.mark(realmID)
	// No user has the ID 0: the statement reads the channel alone.
	id, err := r.st.NewestReceivedMessage(ctx, realmID, 0, []storage.ChannelSpan{{StreamID: streamID}})
	if err != nil {
		return 0, err
	}
	return r.recv.keepChannel(realmID, streamID, id, m), nil
}

func orNone(id int64) int64 {
	if id == 0 {
		return -1
	}
	return id
}

// CreateMessage is the store's, and notes what the message raises: its
// channel's newest message, and the sender's and row holders' newest.
func (w *writeTx) CreateMessage(ctx context.Context, m *storage.Message, readers []storage.UserMessage) error {
	if err := w.Store.CreateMessage(ctx, m, readers); err != nil {
		return err
	}
	if m.StreamID != nil {
		raise(&w.received.Channels, *m.StreamID, m.ID)
	}
	raise(&w.received.Users, m.SenderID, m.ID)
	for _, r := range readers {
		raise(&w.received.Users, r.UserID, r.MessageID)
	}
	return nil
}

// InsertUserMessages is the store's, and notes the rows' users' newest.
func (w *writeTx) InsertUserMessages(ctx context.Context, rows []storage.UserMessage) error {
	if err := w.Store.InsertUserMessages(ctx, rows); err != nil {
		return err
	}
	for _, r := range rows {
		raise(&w.received.Users, r.UserID, r.MessageID)
	}
	return nil
}

// DeleteMessages is the store's; what was newest may be gone.
func (w *writeTx) DeleteMessages(ctx context.Context, realmID int64, ids []int64) error {
	if err := w.Store.DeleteMessages(ctx, realmID, ids); err != nil {
		return err
	}
	w.received.Reset = true
	return nil
}

// EditMessages is the store's; a move to another channel changes what
// both channels' newest messages are.
func (w *writeTx) EditMessages(ctx context.Context, realmID int64, ids []int64, e storage.MessageEdit) error {
	if err := w.Store.EditMessages(ctx, realmID, ids, e); err != nil {
		return err
	}
	if e.StreamID != nil {
		w.received.Reset = true
	}
	return nil
}
