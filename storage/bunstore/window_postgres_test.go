package bunstore

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

// On PostgreSQL, a window read arm by arm (listWindowArms) is the window
// of the single query (listWindowOne): the same messages, in the same
// order, for readers with one channel, a few, every channel and 200
// conversations, historical rows, spans that end; with the filters that
// read arm by arm; newest, in the middle and oldest; windows of one
// message and of 50 on either side, and of IDs only.
func TestPostgresWindowArmsMatchOneQuery(t *testing.T) {
	ctx := t.Context()
	s, o := openPlanOrg(t)
	require.NoError(t, s.Analyze(ctx)) // the single query's plans: this test compares answers
	c1, c2, c3 := o.channels[0], o.channels[1], o.channels[2]
	topic := "Topic 7"
	through := int64(20000)
	spans := func(ids ...int64) []storage.ChannelSpan {
		out := make([]storage.ChannelSpan, len(ids))
		for i, id := range ids {
			out[i] = storage.ChannelSpan{StreamID: id}
		}
		return out
	}
	readers := []struct {
		name  string
		user  int64
		scope storage.MessageScope
	}{
		{"owner", o.owner, storage.MessageScope{Spans: spans(o.channels...), Direct: true, Historical: true}},
		{"member", o.member, storage.MessageScope{Spans: spans(c1, c2), Direct: true, Historical: true}},
		{"outsider", o.outsider, storage.MessageScope{Spans: spans(c1), Direct: true, Historical: true}},
		{"two periods", o.owner + 2, storage.MessageScope{Spans: []storage.ChannelSpan{{StreamID: c1, Through: &through},
			{StreamID: c1, After: 25000}, {StreamID: c2, After: 1000, Through: &through}}, Direct: true}},
		{"whole channels and public ones", o.member, storage.MessageScope{FullChannels: []int64{c3}, PublicChannels: true,
			Spans: spans(c1), Historical: true}},
	}
	filters := []struct {
		name string
		f    storage.MessageFilter
	}{
		{"none", storage.MessageFilter{}},
		{"a channel", storage.MessageFilter{StreamID: &c1}},
		{"another channel", storage.MessageFilter{StreamID: &c2}},
		{"a topic", storage.MessageFilter{StreamID: &c1, Topic: &topic}},
		{"a topic anywhere", storage.MessageFilter{Topic: &topic}},
		{"a conversation", storage.MessageFilter{ConversationID: &o.conversation}},
		{"direct", storage.MessageFilter{DirectOnly: true}},
		{"channels", storage.MessageFilter{ChannelOnly: true}},
		{"not a channel", storage.MessageFilter{NotStreamIDs: []int64{c1}}},
		{"not a channel, negated", storage.MessageFilter{Not: []storage.MessageFilter{{StreamID: &c2}}}},
		{"not a topic", storage.MessageFilter{Not: []storage.MessageFilter{{StreamID: &c1, Topic: &topic}}}},
	}
	for _, r := range readers {
		for _, f := range filters {
			for _, anchor := range []int64{10_000_000_000_000_000, 30001, 25000, 1} {
				for _, size := range []int{0, 1, 50} {
					name := fmt.Sprintf("%s/%s/anchor %d/%d", r.name, f.name, anchor, size)
					w := storage.MessageWindow{RealmID: o.realmID, UserID: r.user, Scope: r.scope, Filter: f.f,
						Anchor: anchor, Before: size, After: size, IDsOnly: size == 50}
					require.True(t, armsWindow(w.Filter), name)
					wantOlder, wantNewer, err := s.listWindowOne(ctx, w)
					require.NoError(t, err, name)
					older, newer, err := s.listWindowArms(ctx, w)
					require.NoError(t, err, name)
					assert.Equal(t, messageIDs(wantOlder), messageIDs(older), name)
					assert.Equal(t, messageIDs(wantNewer), messageIDs(newer), name)
					if !w.IDsOnly && len(older) > 0 {
						assert.Equal(t, wantOlder[0], older[0], name)
					}
				}
			}
		}
	}
}

func messageIDs(ms []storage.Message) []int64 {
	out := make([]int64, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

// Which windows are read arm by arm: those whose filter keeps most of
// each arm's messages. A negation that may leave an arm with no message
// to keep (muted topics and channels, a sender, starred) keeps the single
// query, as do searches and conditions few messages meet.
func TestArmsWindow(t *testing.T) {
	c, topic, user := int64(3), "t", int64(9)
	for _, tc := range []struct {
		name string
		f    storage.MessageFilter
		want bool
	}{
		{"none", storage.MessageFilter{}, true},
		{"channel and topic", storage.MessageFilter{StreamID: &c, Topic: &topic}, true},
		{"conversation", storage.MessageFilter{ConversationID: &c, DirectOnly: true}, true},
		{"channels, not some", storage.MessageFilter{ChannelOnly: true, NotStreamIDs: []int64{c}}, true},
		{"not a channel", storage.MessageFilter{Not: []storage.MessageFilter{{StreamID: &c}}}, true},
		{"not a topic", storage.MessageFilter{Not: []storage.MessageFilter{{StreamID: &c, Topic: &topic}}}, true},
		{"not muted (in:home)", storage.MessageFilter{Not: []storage.MessageFilter{{Muted: true}}}, false},
		{"not a sender", storage.MessageFilter{Not: []storage.MessageFilter{{SenderID: &user}}}, false},
		{"not senders", storage.MessageFilter{NotSenderIDs: []int64{user}}, false},
		{"not a topic anywhere", storage.MessageFilter{Not: []storage.MessageFilter{{Topic: &topic}}}, false},
		{"sender", storage.MessageFilter{SenderID: &user}, false},
		{"starred", storage.MessageFilter{Starred: true}, false},
		{"unread", storage.MessageFilter{Unread: true}, false},
		{"search", storage.MessageFilter{Search: "lunch"}, false},
		{"IDs", storage.MessageFilter{IDs: []int64{1}}, false},
	} {
		assert.Equal(t, tc.want, armsWindow(tc.f), tc.name)
	}
}
