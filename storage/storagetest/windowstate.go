package storagetest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

// A window with its reader's state gives the window's messages, and for
// each the reader's row and whether a read range covers it, as the
// window and the rows and ranges read apart do: for windows of every
// kind (whole channels, spans, public channels, historical rows, direct
// messages; filters of a channel, a topic, direct messages, a sender, a
// search), on both sides of anchors, in an organization of random rows
// and ranges.
func testMessageWindowState(t *testing.T, s storage.Store) {
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(34, 3))
	realm, other := newRealm(t, s, "acme"), newRealm(t, s, "other")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	bob := newUser(t, s, realm.ID, "bob@example.com")
	stranger := newUser(t, s, other.ID, "x@example.com")
	c, d, e := newStream(t, s, realm.ID, "c"), newStream(t, s, realm.ID, "d"), newStream(t, s, realm.ID, "e")
	far := newStream(t, s, other.ID, "far")
	ab, err := s.DirectConversation(ctx, realm.ID, []int64{alice.ID, bob.ID})
	require.NoError(t, err)

	channels := []int64{c.ID, d.ID, e.ID}
	var all, inC []int64
	// The organization's messages as the test made them, for its own
	// answer of what each window holds.
	type made struct {
		id, sender int64
		stream     *int64
		topic      string
	}
	var msgs []made
	var rows []storage.UserMessage
	historical := map[int64]bool{}
	for i := range 120 {
		switch k := rng.IntN(10); {
		case k == 0:
			post(t, s, other.ID, stranger.ID, far.ID) // another realm's
		case k < 3:
			m := &storage.Message{RealmID: realm.ID, SenderID: bob.ID, ConversationID: &ab, Content: "lunch", RenderedContent: "lunch"}
			flags := storage.FlagPrivate
			if rng.IntN(2) == 0 {
				flags |= storage.FlagRead
			}
			require.NoError(t, s.CreateMessage(ctx, m, []storage.UserMessage{{UserID: alice.ID, Flags: flags}, {UserID: bob.ID, Flags: flags | storage.FlagRead}}))
			all = append(all, m.ID)
			msgs = append(msgs, made{id: m.ID, sender: bob.ID})
		default:
			sid := channels[rng.IntN(len(channels))]
			sender := []int64{alice.ID, bob.ID}[rng.IntN(2)]
			id := postTopic(t, s, realm.ID, sender, sid, fmt.Sprintf("topic %d", i%3), i%7 == 0)
			all = append(all, id)
			msgs = append(msgs, made{id: id, sender: sender, stream: &sid, topic: fmt.Sprintf("topic %d", i%3)})
			if sid == c.ID {
				inC = append(inC, id)
			}
			switch rng.IntN(5) {
			case 0:
				rows = append(rows, storage.UserMessage{RealmID: realm.ID, UserID: alice.ID, MessageID: id, Flags: storage.FlagStarred})
			case 1:
				rows = append(rows, storage.UserMessage{RealmID: realm.ID, UserID: alice.ID, MessageID: id, Flags: storage.FlagHistorical | storage.FlagRead})
				historical[id] = true
			case 2: // bob's row is not alice's
				rows = append(rows, storage.UserMessage{RealmID: realm.ID, UserID: bob.ID, MessageID: id, Flags: storage.FlagMentioned})
			}
		}
	}
	require.NoError(t, s.InsertUserMessages(ctx, rows))
	// Read ranges: runs of each channel, and a few single messages.
	for _, sid := range channels {
		for range 4 {
			first := all[rng.IntN(len(all))]
			last := first + int64(rng.IntN(20))
			require.NoError(t, s.AddReadRange(ctx, realm.ID, alice.ID, sid, first, last))
		}
		require.NoError(t, s.AddReadRange(ctx, realm.ID, bob.ID, sid, all[0], all[len(all)-1]))
	}

	rowOf := func(ids []int64) map[int64]storage.UserMessage {
		got, err := s.ListUserMessages(ctx, realm.ID, alice.ID, ids)
		require.NoError(t, err)
		out := map[int64]storage.UserMessage{}
		for _, r := range got {
			out[r.MessageID] = r
		}
		return out
	}
	covered := func(sid, id int64) bool {
		rs, err := s.ListReadRanges(ctx, realm.ID, alice.ID, sid, id, id)
		require.NoError(t, err)
		return len(rs) > 0
	}
	// expected is the window's IDs by the test's own reading of the scope
	// and the filter (ok false for a filter it does not read: search).
	expected := func(w storage.MessageWindow) (older, newer []int64, ok bool) {
		f, sc := w.Filter, w.Scope
		if f.Search != "" {
			return nil, nil, false
		}
		inScope := func(m made) bool {
			if m.stream == nil {
				return sc.Direct
			}
			if slices.Contains(sc.FullChannels, *m.stream) || sc.PublicChannels || sc.Historical && historical[m.id] {
				return true
			}
			for _, sp := range sc.Spans {
				if sp.StreamID == *m.stream && m.id > sp.After && (sp.Through == nil || m.id <= *sp.Through) {
					return true
				}
			}
			return false
		}
		var matches func(m made, f storage.MessageFilter) bool
		matches = func(m made, f storage.MessageFilter) bool {
			switch {
			case f.StreamID != nil && (m.stream == nil || *m.stream != *f.StreamID),
				f.Topic != nil && (m.stream == nil || !strings.EqualFold(m.topic, *f.Topic)),
				f.SenderID != nil && m.sender != *f.SenderID,
				f.DirectOnly && m.stream != nil, f.ChannelOnly && m.stream == nil:
				return false
			}
			for _, n := range f.Not {
				if matches(m, n) {
					return false
				}
			}
			return true
		}
		for _, m := range msgs {
			if !inScope(m) || !matches(m, f) {
				continue
			}
			if m.id <= w.Anchor {
				older = append(older, m.id)
			} else {
				newer = append(newer, m.id)
			}
		}
		if len(older) > w.Before+1 {
			older = older[len(older)-w.Before-1:]
		}
		if w.After == 0 {
			newer = nil
		} else if len(newer) > w.After+1 {
			newer = newer[:w.After+1]
		}
		return older, newer, true
	}
	check := func(name string, w storage.MessageWindow) {
		t.Helper()
		w.RealmID, w.UserID = realm.ID, alice.ID
		w.IDsOnly = true
		wantOlder, wantNewer, err := s.ListMessageWindow(ctx, w)
		require.NoError(t, err, name)
		if older, newer, ok := expected(w); ok {
			assert.Equal(t, older, idsOf(wantOlder), "%s: the older side", name)
			assert.Equal(t, newer, idsOf(wantNewer), "%s: the newer side", name)
		}
		gotOlder, gotNewer, err := s.ListMessageWindowState(ctx, w)
		require.NoError(t, err, name)
		for _, side := range []struct {
			want []storage.Message
			got  []storage.WindowMessage
		}{{wantOlder, gotOlder}, {wantNewer, gotNewer}} {
			require.Len(t, side.got, len(side.want), name)
			var ids []int64
			for _, m := range side.want {
				ids = append(ids, m.ID)
			}
			full, err := s.GetMessagesByID(ctx, realm.ID, ids)
			require.NoError(t, err)
			byRow := rowOf(ids)
			for i, m := range full {
				g := side.got[i]
				require.Equal(t, m.ID, g.ID, "%s: the window's messages, in order", name)
				assert.Equal(t, m.StreamID, g.StreamID, "%s: message %d's channel", name, m.ID)
				row, ok := byRow[m.ID]
				assert.Equal(t, ok, g.HasRow, "%s: message %d has a row", name, m.ID)
				assert.Equal(t, row.Flags, g.Flags, "%s: message %d's flags", name, m.ID)
				assert.Equal(t, m.StreamID != nil && covered(*m.StreamID, m.ID), g.InReadRange, "%s: message %d read", name, m.ID)
			}
		}
	}

	const newest = int64(1) << 62
	lunch, topic1 := "lunch", "TOPIC 1"
	scopes := map[string]storage.MessageScope{
		"everything": {FullChannels: []int64{c.ID, d.ID, e.ID, far.ID}, Direct: true},
		"spans": {Spans: []storage.ChannelSpan{{StreamID: c.ID, After: all[10], Through: &all[80]}, {StreamID: d.ID, After: all[30]}},
			Direct: true, Historical: true},
		"public":  {PublicChannels: true, Historical: true},
		"c whole": {FullChannels: []int64{c.ID}, Spans: []storage.ChannelSpan{{StreamID: d.ID}}, Direct: true},
		"d whole": {FullChannels: []int64{d.ID}, Spans: []storage.ChannelSpan{{StreamID: c.ID, After: all[40]}}, Historical: true},
	}
	filters := map[string]storage.MessageFilter{
		"none":     {},
		"channel":  {StreamID: &c.ID},
		"topic":    {StreamID: &c.ID, Topic: &topic1},
		"direct":   {DirectOnly: true},
		"sender":   {SenderID: &bob.ID},
		"search":   {Search: lunch},
		"not d":    {Not: []storage.MessageFilter{{StreamID: &d.ID}}},
		"channels": {ChannelOnly: true},
	}
	for sn, sc := range scopes {
		for fn, f := range filters {
			for _, anchor := range []int64{0, all[len(all)/2], inC[len(inC)/3], newest} {
				for _, size := range [][2]int{{0, 0}, {5, 5}, {100, 0}, {0, 100}} {
					check(fmt.Sprintf("%s/%s/anchor %d/%d,%d", sn, fn, anchor, size[0], size[1]),
						storage.MessageWindow{Scope: sc, Filter: f, Anchor: anchor, Before: size[0], After: size[1]})
				}
			}
		}
	}
}

// idsOf are the messages' IDs (nil for none).
func idsOf(ms []storage.Message) []int64 {
	var out []int64
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}
