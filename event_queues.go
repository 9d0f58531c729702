package chat

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	mrand "math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/teamchat/chat/narrow"
	"github.com/teamchat/chat/storage"
)

// QueueLimits bound the event queues of a Service (see WithQueueLimits).
// The zero value of a field means its default.
type QueueLimits struct {
	// IdleTimeout: a queue nobody polls for this long is collected
	// (default 10 minutes, the reference's); queue_lifespan_secs at
	// registration may ask for longer, up to MaxLifespan (7 days).
	IdleTimeout time.Duration
	MaxLifespan time.Duration
	// A long poll that sees no event ends with a heartbeat after a random
	// time between HeartbeatMin and HeartbeatMax (45 s and 55 s).
	HeartbeatMin, HeartbeatMax time.Duration
	// CollectEvery is how often idle queues are collected (1 minute).
	CollectEvery time.Duration
	// A queue whose client falls behind by more than MaxQueueEvents
	// events (default 100,000) or MaxQueueBytes bytes (32 MiB) is dropped:
	// its client re-registers, as with the reference. When all queues
	// together hold more than MaxTotalBytes (1 GiB), the largest is dropped.
	MaxQueueEvents int
	MaxQueueBytes  int
	MaxTotalBytes  int64
}

func (l QueueLimits) withDefaults() QueueLimits {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.IdleTimeout, 10*time.Minute)
	def(&l.MaxLifespan, 7*24*time.Hour)
	def(&l.HeartbeatMin, 45*time.Second)
	def(&l.HeartbeatMax, 55*time.Second)
	def(&l.CollectEvery, time.Minute)
	if l.HeartbeatMax < l.HeartbeatMin {
		l.HeartbeatMax = l.HeartbeatMin
	}
	if l.MaxQueueEvents <= 0 {
		l.MaxQueueEvents = 100_000
	}
	if l.MaxQueueBytes <= 0 {
		l.MaxQueueBytes = 32 << 20
	}
	if l.MaxTotalBytes <= 0 {
		l.MaxTotalBytes = 1 << 30
	}
	return l
}

// WithQueueLimits sets the event queues' timeouts and memory bounds.
func WithQueueLimits(l QueueLimits) Option { return func(s *Service) { s.queueLimit = l } }

// eventHub holds a Service's event queues and feeds them from the event
// bus. One mutex guards every queue: a delivery touches many queues
// briefly, a poll one.
type eventHub struct {
	s      *Service
	origin string

	startMu sync.Mutex
	cancel  context.CancelFunc // stops the listener; nil until listening
	closed  bool

	// mu guards the maps; each queue has its own lock (taken after mu
	// when both are held), so polls of different queues do not contend.
	mu     sync.RWMutex
	queues map[string]*eventQueue
	realms map[int64]map[*eventQueue]struct{}
	bytes  atomic.Int64 // the events held by all queues
}

func newEventHub(s *Service) *eventHub {
	return &eventHub{s: s, origin: randomHex(8),
		queues: map[string]*eventQueue{}, realms: map[int64]map[*eventQueue]struct{}{}}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// newQueueID returns a UUID4 string, the reference's queue ID form.
func newQueueID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// stop ends listening and every pending poll.
func (h *eventHub) stop() {
	h.startMu.Lock()
	h.closed = true
	if h.cancel != nil {
		h.cancel()
	}
	h.startMu.Unlock()
	h.dropAll()
}

// queueOptions are a queue's registration choices.
type queueOptions struct {
	eventTypes       map[string]bool // nil: every type
	narrow           []narrow.Term
	applyMarkdown    bool
	clientGravatar   bool
	allPublicStreams bool

	bulkMessageDeletion      bool
	userSettingsObject       bool
	streamTyping             bool
	includeDeactivatedGroups bool
	emptyTopicName           bool
	linkifierURLTemplate     bool

	lifespan time.Duration
}

// variantKey names the form of a message event this queue shows.
func (o *queueOptions) variantKey(gravatarNull bool, local bool) uint8 {
	var k uint8
	if o.applyMarkdown {
		k |= 1
	}
	if o.clientGravatar && gravatarNull {
		k |= 2
	}
	if o.emptyTopicName {
		k |= 4
	}
	if local {
		k |= 8
	}
	return k
}

// eventQueue is one client's queue of events. Its fields after opts are
// guarded by mu.
type eventQueue struct {
	mu      sync.Mutex
	id      string
	realmID int64
	userID  int64
	opts    queueOptions

	// The queue's replica of its user's standing, from the registration
	// snapshot and kept current by the events it sees.
	role       int
	subscribed subscribedSet

	// Until ready, the registration snapshot is being read: events are
	// kept in buffered, and those the snapshot turns out to include are
	// dropped (snap stays to drop late arrivals).
	ready    bool
	buffered []bufferedEvent
	snap     *storage.Snapshot

	events   []queuedEvent
	nextID   int64 // the ID the next event gets
	prunedID int64 // the newest pruned event's ID (-1: none)
	bytes    int

	touched time.Time // the last poll's end (or the creation)
	poll    *pendingPoll
	dropped bool
}

type bufferedEvent struct {
	token uint64
	ev    *busEvent
	d     *delivery
}

// queuedEvent is an event waiting in a queue: its JSON without "id"
// (shared with other queues that show it the same way), or, for a
// compressed update_message_flags run, the run.
type queuedEvent struct {
	id   int64
	body []byte
	run  *flagsRun
}

// flagsRun is the reference's "virtual event": undelivered
// update_message_flags events of one op and flag, merged.
type flagsRun struct {
	op, flag string
	messages []int64
}

func (r *flagsRun) body() []byte {
	b, _ := json.Marshal(map[string]any{"type": "update_message_flags", "op": r.op, "operation": r.op,
		"flag": r.flag, "messages": r.messages, "all": false})
	return b
}

type pendingPoll struct {
	wake chan struct{} // closed when the poll should look again
	// superseded: a newer poll took over; this one ends empty.
	superseded bool
}

func (p *pendingPoll) signal() {
	select {
	case <-p.wake:
	default:
		close(p.wake)
	}
}

// size estimates the memory a queued event holds.
func (e *queuedEvent) size() int {
	if e.run != nil {
		return 64 + 8*len(e.run.messages)
	}
	return 48 + len(e.body)
}

// push appends an event; run is set for compressible flag events.
func (q *eventQueue) push(h *eventHub, body []byte, run *flagsRun) {
	if run != nil {
		for i := range q.events {
			old := q.events[i].run
			if old != nil && old.op == run.op && old.flag == run.flag {
				before := q.events[i].size()
				merged := &flagsRun{op: run.op, flag: run.flag, messages: append(slices.Clip(old.messages), run.messages...)}
				q.events = slices.Delete(q.events, i, i+1)
				e := queuedEvent{id: q.nextID, run: merged}
				q.nextID++
				q.events = append(q.events, e)
				q.account(h, e.size()-before)
				return
			}
		}
	}
	e := queuedEvent{id: q.nextID, body: body, run: run}
	q.nextID++
	q.events = append(q.events, e)
	q.account(h, e.size())
}

func (q *eventQueue) account(h *eventHub, delta int) {
	q.bytes += delta
	h.bytes.Add(int64(delta))
}

// prune drops the events up to and including id.
func (q *eventQueue) prune(h *eventHub, id int64) {
	n := 0
	for n < len(q.events) && q.events[n].id <= id {
		q.prunedID = q.events[n].id
		q.account(h, -q.events[n].size())
		n++
	}
	if n > 0 {
		q.events = slices.Delete(q.events, 0, n)
	}
}

// contents is the queue's events as JSON objects with their IDs. A
// merged flags run that goes out becomes an ordinary event, as the
// reference's virtual events do: the client will acknowledge its ID with
// its next poll, so later flag changes must not merge into it (and take
// that ID away).
func (q *eventQueue) contents(h *eventHub) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(q.events))
	for i := range q.events {
		e := &q.events[i]
		if e.run != nil {
			before := e.size()
			e.body, e.run = e.run.body(), nil
			q.account(h, e.size()-before)
		}
		out = append(out, withEventID(e.id, e.body))
	}
	return out
}

// withEventID writes {"id":N,...body} for body {...}.
func withEventID(id int64, body []byte) json.RawMessage {
	out := make([]byte, 0, len(body)+24)
	out = append(out, `{"id":`...)
	out = strconv.AppendInt(out, id, 10)
	if len(body) > 2 {
		out = append(out, ',')
	}
	return append(out, body[1:]...)
}

// addQueue registers a queue that buffers events until ready.
func (h *eventHub) addQueue(q *eventQueue) {
	q.touched = time.Now()
	q.prunedID = -1
	h.mu.Lock()
	defer h.mu.Unlock()
	h.queues[q.id] = q
	rs := h.realms[q.realmID]
	if rs == nil {
		rs = map[*eventQueue]struct{}{}
		h.realms[q.realmID] = rs
	}
	rs[q] = struct{}{}
}

// ready ends a queue's registration: its replica of the user's standing
// is the snapshot's, and the events the snapshot already contains are
// dropped from the buffer (and later).
func (h *eventHub) ready(q *eventQueue, snap storage.Snapshot, role int, subscribed subscribedSet) {
	q.mu.Lock()
	q.snap, q.role, q.subscribed, q.ready = &snap, role, subscribed, true
	buffered := q.buffered
	q.buffered = nil
	for _, b := range buffered {
		if q.dropped {
			break
		}
		if !snap.Includes(b.token) {
			h.offer(q, b.ev, b.d)
		}
	}
	h.unlockDelivered(q)
	h.enforceTotal()
}

// unlockDelivered ends a delivery to q: it wakes q's poll (or drops q if
// it is over its bound), releases q.mu, and forgets q if it was dropped.
func (h *eventHub) unlockDelivered(q *eventQueue) {
	h.afterDelivery(q)
	dropped := q.dropped
	q.mu.Unlock()
	if dropped {
		h.forget(q)
	}
}

// drop ends q (under q.mu): its poll ends, its events are freed; forget
// must follow once q.mu is released.
func (h *eventHub) drop(q *eventQueue) {
	if q.dropped {
		return
	}
	q.dropped = true
	h.bytes.Add(-int64(q.bytes))
	q.events, q.bytes, q.buffered = nil, 0, nil
	if q.poll != nil {
		q.poll.signal()
	}
}

// forget removes a dropped queue from the hub's maps.
func (h *eventHub) forget(q *eventQueue) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.queues[q.id] == q {
		delete(h.queues, q.id)
	}
	if rs := h.realms[q.realmID]; rs != nil {
		delete(rs, q)
		if len(rs) == 0 {
			delete(h.realms, q.realmID)
		}
	}
}

// remove drops and forgets q.
func (h *eventHub) remove(q *eventQueue) {
	q.mu.Lock()
	h.drop(q)
	q.mu.Unlock()
	h.forget(q)
}

// list returns the queues (of one realm, or all for realmID 0).
func (h *eventHub) list(realmID int64) []*eventQueue {
	h.mu.RLock()
	defer h.mu.RUnlock()
	var out []*eventQueue
	if realmID != 0 {
		out = make([]*eventQueue, 0, len(h.realms[realmID]))
		for q := range h.realms[realmID] {
			out = append(out, q)
		}
		return out
	}
	out = make([]*eventQueue, 0, len(h.queues))
	for _, q := range h.queues {
		out = append(out, q)
	}
	return out
}

func (h *eventHub) dropAll() {
	for _, q := range h.list(0) {
		h.remove(q)
	}
}

// delivery is one event on its way to a realm's queues, with what is
// worked out once for all of them.
type delivery struct {
	groupMembers map[int64]bool // members of the audience's groups
	bodies       map[uint8][]byte
	split        [][]byte // delete_message for queues without bulk deletion
	displayTopic []byte   // the body with the empty topic as "general chat"
}

// deliver hands a committed write's events to the realm's queues.
func (h *eventHub) deliver(token uint64, realmID int64, events []*busEvent) {
	qs := h.list(realmID)
	if len(qs) == 0 {
		return
	}
	ds := make([]*delivery, len(events))
	for i, ev := range events {
		ds[i] = &delivery{}
		if len(ev.Audience.Groups) > 0 {
			ds[i].groupMembers = h.groupMembers(realmID, ev.Audience.Groups)
		}
	}
	for _, q := range qs {
		q.mu.Lock()
		if q.dropped {
			q.mu.Unlock()
			continue
		}
		if !q.ready {
			for i, ev := range events {
				q.buffered = append(q.buffered, bufferedEvent{token, ev, ds[i]})
			}
			q.mu.Unlock()
			continue
		}
		if q.snap.Includes(token) {
			q.mu.Unlock()
			continue
		}
		for i, ev := range events {
			if !q.dropped {
				h.offer(q, ev, ds[i])
			}
		}
		h.unlockDelivered(q)
	}
	h.enforceTotal()
}

// afterDelivery (under q.mu) wakes q's poll, or drops q when it holds
// more than a queue may.
func (h *eventHub) afterDelivery(q *eventQueue) {
	lim := h.s.queueLimit
	if !q.dropped && (len(q.events) > lim.MaxQueueEvents || q.bytes > lim.MaxQueueBytes) {
		h.s.log.Warn("event queue fell behind; dropping it", "queue", q.id, "user", q.userID, "events", len(q.events), "bytes", q.bytes)
		h.drop(q)
		return
	}
	if !q.dropped && q.poll != nil && len(q.events) > 0 {
		q.poll.signal()
	}
}

// enforceTotal drops the largest queues while all of them together hold
// more than the total bound.
func (h *eventHub) enforceTotal() {
	lim := h.s.queueLimit
	for h.bytes.Load() > lim.MaxTotalBytes {
		var largest *eventQueue
		size := 0
		for _, q := range h.list(0) {
			q.mu.Lock()
			if q.bytes > size {
				largest, size = q, q.bytes
			}
			q.mu.Unlock()
		}
		if largest == nil {
			return
		}
		h.s.log.Warn("event queues over their memory bound; dropping the largest", "queue", largest.id, "bytes", size)
		h.remove(largest)
	}
}

// groupMembers lists the active non-guest members of groups (subgroups
// included), as the database has them now.
func (h *eventHub) groupMembers(realmID int64, groups []int64) map[int64]bool {
	ctx := context.Background()
	out := map[int64]bool{}
	for _, g := range groups {
		below, err := h.s.store.GroupClosure(ctx, realmID, g)
		if err != nil {
			_ = h.s.internal(ctx, "event audience: group closure", err)
			continue
		}
		ms, err := h.s.store.ListGroupMembershipsOf(ctx, realmID, below)
		if err != nil {
			_ = h.s.internal(ctx, "event audience: group members", err)
			continue
		}
		for _, m := range ms {
			out[m.UserID] = true
		}
	}
	return out
}

// offer gives one event to one ready queue (under q.mu): the queue keeps
// it if its user may see it and its registration asked for it, in the
// queue's own form; then the event updates the queue's replica.
func (h *eventHub) offer(q *eventQueue, ev *busEvent, d *delivery) {
	defer func() {
		if ev.State != nil && !q.dropped {
			if ev.State.Deactivated && slices.Contains(ev.State.Users, q.userID) {
				h.drop(q)
				return
			}
			if ev.State.Role != nil && slices.Contains(ev.State.Users, q.userID) {
				q.role = *ev.State.Role
			}
			q.subscribed.apply(ev.State, q.userID)
		}
	}()
	if q.opts.eventTypes != nil && !q.opts.eventTypes[ev.Type] {
		return
	}
	if ev.Capability != "" && q.opts.capability(ev.Capability) != ev.CapabilityValue {
		return
	}
	if !h.reaches(q, ev, d) {
		return
	}
	switch ev.Type {
	case "message":
		body := d.messageBody(q, ev)
		if len(q.opts.narrow) > 0 && !narrow.MatchEvent(q.opts.narrow, d.eventMessage(q, body)) {
			return
		}
		q.push(h, body, nil)
	case "delete_message":
		if q.opts.bulkMessageDeletion {
			q.push(h, d.topicForm(q, ev, ev.Body), nil)
			return
		}
		for _, b := range d.splitDeletion(ev) {
			q.push(h, d.topicForm(q, ev, b), nil)
		}
	case "update_message_flags":
		q.push(h, ev.Body, flagsRunOf(ev))
	default:
		q.push(h, d.topicForm(q, ev, ev.Body), nil)
	}
}

// reaches applies the event's audience to the queue's replica of its
// user's standing.
func (h *eventHub) reaches(q *eventQueue, ev *busEvent, d *delivery) bool {
	a := &ev.Audience
	u := storage.User{ID: q.userID, Role: q.role, IsActive: true}
	subscribed := func(ch int64) bool { _, ok := q.subscribed[ch]; return ok }
	inGroup := func(int64) bool { return d.groupMembers[q.userID] } // the members of all the audience's groups
	if a.Includes(&u, subscribed, inGroup) {
		return true
	}
	// all_public_streams: every public channel's messages.
	return ev.Message != nil && ev.Message.PublicChannel && q.opts.allPublicStreams && len(a.Subscribers) > 0 &&
		!slices.Contains(a.Except, q.userID)
}

// flagsRunOf returns the compressible run of an update_message_flags
// event: every op and flag but remove/read, never a mark-all-read.
func flagsRunOf(ev *busEvent) *flagsRun {
	var e UpdateMessageFlagsEvent
	if json.Unmarshal(ev.Body, &e) != nil || e.All || e.Op == "remove" && e.Flag == "read" {
		return nil
	}
	return &flagsRun{op: e.Op, flag: e.Flag, messages: e.Messages}
}

// messageBody is the message event in q's form, built once per form.
func (d *delivery) messageBody(q *eventQueue, ev *busEvent) []byte {
	v := ev.Message
	if v == nil {
		return ev.Body
	}
	gravNull := false
	if v.GravatarNull != nil {
		g := v.GravatarNull
		gravNull = slices.Contains(g.Users, q.userID) || slices.Contains(g.Roles, q.role)
	}
	local := v.QueueID != "" && v.QueueID == q.id
	key := q.opts.variantKey(gravNull, local)
	if b, ok := d.bodies[key]; ok {
		return b
	}
	if d.bodies == nil {
		d.bodies = map[uint8][]byte{}
	}
	var top map[string]json.RawMessage
	var msg map[string]json.RawMessage
	if json.Unmarshal(ev.Body, &top) != nil || json.Unmarshal(top["message"], &msg) != nil {
		d.bodies[key] = ev.Body
		return ev.Body
	}
	if !q.opts.applyMarkdown {
		msg["content"], _ = json.Marshal(v.Raw)
		msg["content_type"] = json.RawMessage(`"text/x-markdown"`)
	}
	if key&2 != 0 {
		msg["avatar_url"] = json.RawMessage("null")
	}
	if v.EmptyTopic && q.opts.emptyTopicName {
		msg["subject"] = json.RawMessage(`""`)
	}
	top["message"], _ = json.Marshal(msg)
	if local {
		top["local_message_id"], _ = json.Marshal(v.LocalID)
	}
	b := marshalOrdered(top)
	d.bodies[key] = b
	return b
}

// marshalOrdered writes an event object with "type" first (as the
// reference does; clients do not depend on it, readers of logs do).
func marshalOrdered(m map[string]json.RawMessage) []byte {
	var buf bytes.Buffer
	buf.WriteString(`{"type":`)
	buf.Write(m["type"])
	keys := make([]string, 0, len(m))
	for k := range m {
		if k != "type" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		buf.WriteByte(',')
		kb, _ := json.Marshal(k)
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(m[k])
	}
	buf.WriteByte('}')
	return buf.Bytes()
}

// eventMessage is what a narrow looks at in a message event.
func (d *delivery) eventMessage(q *eventQueue, body []byte) narrow.EventMessage {
	var e struct {
		Message struct {
			Type             string          `json:"type"`
			DisplayRecipient json.RawMessage `json:"display_recipient"`
			Subject          string          `json:"subject"`
			SenderEmail      string          `json:"sender_email"`
		} `json:"message"`
		Flags []string `json:"flags"`
	}
	_ = json.Unmarshal(body, &e)
	m := narrow.EventMessage{Private: e.Message.Type == "private", Topic: e.Message.Subject,
		SenderEmail: e.Message.SenderEmail, Flags: e.Flags}
	if !m.Private {
		_ = json.Unmarshal(e.Message.DisplayRecipient, &m.ChannelName)
	}
	return m
}

// topicFields are the fields of events (and of typing_edit_message's
// recipient) that name a topic.
var topicFields = []string{"topic", "topic_name", "subject", "orig_subject"}

// topicForm is body as q shows it: the empty topic is "general chat" for
// clients without the empty_topic_name capability. A split deletion's
// parts are rewritten one by one (not cached).
func (d *delivery) topicForm(q *eventQueue, ev *busEvent, body []byte) []byte {
	if !ev.EmptyTopic || q.opts.emptyTopicName {
		return body
	}
	cache := len(body) == len(ev.Body) && (len(body) == 0 || &body[0] == &ev.Body[0])
	if cache && d.displayTopic != nil {
		return d.displayTopic
	}
	out := displayEmptyTopic(body)
	if cache {
		d.displayTopic = out
	}
	return out
}

// displayEmptyTopic replaces "" by "general chat" in an event's topic
// fields.
func displayEmptyTopic(body []byte) []byte {
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return body
	}
	display, _ := json.Marshal(EmptyTopicDisplayName)
	fix := func(m map[string]json.RawMessage) {
		for _, f := range topicFields {
			if string(m[f]) == `""` {
				m[f] = display
			}
		}
	}
	fix(top)
	if rec, ok := top["recipient"]; ok {
		var r map[string]json.RawMessage
		if json.Unmarshal(rec, &r) == nil {
			fix(r)
			top["recipient"], _ = json.Marshal(r)
		}
	}
	return marshalOrdered(top)
}

// splitDeletion is a delete_message event as one event per message, for
// clients without bulk_message_deletion.
func (d *delivery) splitDeletion(ev *busEvent) [][]byte {
	if d.split != nil {
		return d.split
	}
	var top map[string]json.RawMessage
	var ids []int64
	if json.Unmarshal(ev.Body, &top) != nil || json.Unmarshal(top["message_ids"], &ids) != nil {
		d.split = [][]byte{ev.Body}
		return d.split
	}
	delete(top, "message_ids")
	for _, id := range ids {
		top["message_id"] = json.RawMessage(strconv.FormatInt(id, 10))
		d.split = append(d.split, marshalOrdered(top))
	}
	return d.split
}

// collectLoop collects idle queues until ctx ends.
func (h *eventHub) collectLoop(ctx context.Context) {
	t := time.NewTicker(h.s.queueLimit.CollectEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			h.collect(time.Now())
		}
	}
}

// collect drops the queues idle past their lifespan.
func (h *eventHub) collect(now time.Time) int {
	n := 0
	for _, q := range h.list(0) {
		q.mu.Lock()
		idle := !q.dropped && q.poll == nil && now.Sub(q.touched) > q.opts.lifespan
		if idle {
			h.drop(q)
		}
		q.mu.Unlock()
		if idle {
			h.forget(q)
			n++
		}
	}
	return n
}

// heartbeatAfter picks a long poll's random heartbeat delay.
func (h *eventHub) heartbeatAfter() time.Duration {
	lim := h.s.queueLimit
	spread := lim.HeartbeatMax - lim.HeartbeatMin
	if spread <= 0 {
		return lim.HeartbeatMin
	}
	return lim.HeartbeatMin + time.Duration(mrand.Int64N(int64(spread)))
}
