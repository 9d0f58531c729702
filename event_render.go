package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"sync"

	"github.com/teamchat/chat/internal/eventq"
	"github.com/teamchat/chat/narrow"
	"github.com/teamchat/chat/storage"
)

// delivery is one event on its way to an organization's queues (an
// eventq.Delivery): who receives it and in which form, with what is worked
// out once for all the queues.
type delivery struct {
	ev           *busEvent
	groupMembers map[int64]bool // members of the audience's groups

	// mu guards the forms below: a queue still registering renders the
	// delivery later, beside the delivery to the other queues.
	mu           sync.Mutex
	bodies       map[uint8][]byte
	split        [][]byte // delete_message for queues without bulk deletion
	displayTopic []byte   // the body with the empty topic as "general chat"
	run          *eventq.Run
	runDone      bool
}

// deliver hands a committed write's events to the organization's queues
// and reports whether it has any.
func (s *Service) deliver(token uint64, realmID int64, events []*busEvent) bool {
	hub := s.hub
	if !hub.HasQueues(realmID) {
		return false
	}
	ds := make([]eventq.Delivery[queueOptions], len(events))
	for i, ev := range events {
		d := &delivery{ev: ev}
		if len(ev.Audience.Groups) > 0 {
			d.groupMembers = s.reads().groupMembers(realmID, ev.Audience.Groups)
		}
		ds[i] = d
	}
	hub.Deliver(token, realmID, ds)
	return true
}

// Change is how the event changes the queues' replica of their users'
// standing.
func (d *delivery) Change() *eventq.Change { return d.ev.State }

// Render gives q the event if its user may see it and its registration
// asked for it, in the queue's own form.
func (d *delivery) Render(q *eventQueue, out []eventq.Item) []eventq.Item {
	ev, opts := d.ev, q.Options()
	if opts.eventTypes != nil && !opts.eventTypes[ev.Type] {
		return out
	}
	if ev.Capability != "" && opts.capability(ev.Capability) != ev.CapabilityValue {
		return out
	}
	if !d.reaches(q) {
		return out
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	switch ev.Type {
	case "message":
		body := d.messageBody(q)
		if len(opts.narrow) > 0 && !narrow.MatchEvent(opts.narrow, eventMessage(body)) {
			return out
		}
		return append(out, eventq.Item{Body: body})
	case "delete_message":
		if opts.bulkMessageDeletion {
			return append(out, eventq.Item{Body: d.topicForm(q, ev.Body)})
		}
		for _, b := range d.splitDeletion() {
			out = append(out, eventq.Item{Body: d.topicForm(q, b)})
		}
		return out
	case "update_message_flags":
		if r := d.flagsRun(); r != nil {
			return append(out, eventq.Item{Run: r})
		}
		return append(out, eventq.Item{Body: ev.Body})
	default:
		return append(out, eventq.Item{Body: d.topicForm(q, ev.Body)})
	}
}

// reaches applies the event's audience to the queue's replica of its
// user's standing.
func (d *delivery) reaches(q *eventQueue) bool {
	ev := d.ev
	a := &ev.Audience
	u := storage.User{ID: q.UserID(), Role: q.Role(), IsActive: true}
	inGroup := func(int64) bool { return d.groupMembers[u.ID] } // the members of all the audience's groups
	if a.Includes(&u, q.Subscribed, inGroup) {
		return true
	}
	// all_public_streams: every public channel's messages.
	return ev.Message != nil && ev.Message.PublicChannel && q.Options().allPublicStreams && len(a.Subscribers) > 0 &&
		!slices.Contains(a.Except, u.ID)
}

// groupMembers lists the active non-guest members of groups (subgroups
// included), as the database has them now.
func (r reads) groupMembers(realmID int64, groups []int64) map[int64]bool {
	ctx := context.Background()
	out := map[int64]bool{}
	for _, g := range groups {
		below, err := r.st.GroupClosure(ctx, realmID, g)
		if err != nil {
			_ = r.s.internal(ctx, "event audience: group closure", err)
			continue
		}
		ms, err := r.st.ListGroupMembershipsOf(ctx, realmID, below)
		if err != nil {
			_ = r.s.internal(ctx, "event audience: group members", err)
			continue
		}
		for _, m := range ms {
			out[m.UserID] = true
		}
	}
	return out
}

// flagsRun is the mergeable run of an update_message_flags event (the
// reference's "virtual event"): every op and flag but remove/read, never
// a mark-all-read; nil for the others. Its key is the op and the flag.
func (d *delivery) flagsRun() *eventq.Run {
	if !d.runDone {
		d.runDone = true
		var e UpdateMessageFlagsEvent
		if json.Unmarshal(d.ev.Body, &e) == nil && !e.All && !(e.Op == "remove" && e.Flag == "read") {
			key, _ := json.Marshal([2]string{e.Op, e.Flag})
			d.run = &eventq.Run{Key: string(key), IDs: e.Messages}
		}
	}
	return d.run
}

// renderFlagsRun writes a merged run as the update_message_flags event it
// goes out as.
func renderFlagsRun(r *eventq.Run) []byte {
	var key [2]string
	_ = json.Unmarshal([]byte(r.Key), &key)
	b, _ := json.Marshal(map[string]any{"type": "update_message_flags", "op": key[0], "operation": key[0],
		"flag": key[1], "messages": r.IDs, "all": false})
	return b
}

// messageBody is the message event in q's form, built once per form.
func (d *delivery) messageBody(q *eventQueue) []byte {
	ev := d.ev
	v := ev.Message
	if v == nil {
		return ev.Body
	}
	gravNull := false
	if v.GravatarNull != nil {
		g := v.GravatarNull
		gravNull = slices.Contains(g.Users, q.UserID()) || slices.Contains(g.Roles, q.Role())
	}
	local := v.QueueID != "" && v.QueueID == q.ID()
	opts := q.Options()
	key := opts.variantKey(gravNull, local)
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
	if !opts.applyMarkdown {
		msg["content"], _ = json.Marshal(v.Raw)
		msg["content_type"] = json.RawMessage(`"text/x-markdown"`)
	}
	if key&2 != 0 {
		msg["avatar_url"] = json.RawMessage("null")
	}
	if v.EmptyTopic && opts.emptyTopicName {
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
func eventMessage(body []byte) narrow.EventMessage {
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
func (d *delivery) topicForm(q *eventQueue, body []byte) []byte {
	ev := d.ev
	if !ev.EmptyTopic || q.Options().emptyTopicName {
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
func (d *delivery) splitDeletion() [][]byte {
	ev := d.ev
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
