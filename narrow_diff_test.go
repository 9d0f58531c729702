package chat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/narrow"
)

// diffWorld is a history built through the Service, with what the test
// itself knows of it: who was subscribed to which channel when.
type diffWorld struct {
	h        *chattest.Harness
	users    []chattest.User
	guest    map[int64]bool
	channels []diffChannel
	// periods[user][channel] are the (after, through] spans of message IDs
	// the user was subscribed for (through 0: still subscribed).
	periods map[int64]map[int64][][2]int64
	lastID  int64
	msgs    []int64
}

type diffChannel struct {
	id                  int64
	name                string
	inviteOnly, history bool
}

func (w *diffWorld) subscribed(user, ch int64) bool {
	ps := w.periods[user][ch]
	return len(ps) > 0 && ps[len(ps)-1][1] == 0
}

// received says whether the user was subscribed to the channel when the
// message was sent.
func (w *diffWorld) received(user, ch, id int64) bool {
	for _, p := range w.periods[user][ch] {
		if id > p[0] && (p[1] == 0 || id <= p[1]) {
			return true
		}
	}
	return false
}

var diffWords = []string{"apple", "river", "stone", "cloud", "forest", "violet", "copper", "harbor"}

// TestNarrowDifferential checks GET /messages (the narrow compiled to SQL
// by the store) against narrow.Match applied in memory to every message
// the reader may see, on a random history and random narrows, for readers
// with different subscriptions, a guest among them.
func TestNarrowDifferential(t *testing.T) {
	ctx := context.Background()
	seed := uint64(20261125)
	if env := os.Getenv("TEAMCHAT_DIFF_SEED"); env != "" {
		n, err := strconv.ParseUint(env, 10, 64)
		require.NoError(t, err)
		seed = n
	}
	rng := rand.New(rand.NewPCG(seed, seed))
	h := chattest.New(t)
	w := &diffWorld{h: h, guest: map[int64]bool{}, periods: map[int64]map[int64][][2]int64{}}
	for i := 0; i < 5; i++ {
		role := chat.RoleMember
		if i == 4 {
			role = chat.RoleGuest
		}
		u := h.NewUser(t, role)
		w.users = append(w.users, u)
		w.guest[u.ID] = role == chat.RoleGuest
		w.periods[u.ID] = map[int64][][2]int64{}
	}
	creator := w.users[0]
	for _, c := range []diffChannel{{name: "open"}, {name: "club", inviteOnly: true, history: true},
		{name: "vault", inviteOnly: true}, {name: "lobby"}} {
		hist := !c.inviteOnly || c.history
		_, err := h.Service.Subscribe(ctx, creator.Caller, chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: c.name}},
			InviteOnly: &c.inviteOnly, HistoryPublicToSubscribers: &hist})
		require.NoError(t, err)
		c.id = channelID(t, h, creator, c.name)
		c.history = hist
		w.channels = append(w.channels, c)
		w.periods[creator.ID][c.id] = [][2]int64{{w.lastID, 0}}
	}
	toggle := func(u chattest.User, c diffChannel) {
		ps := &[]chat.Principal{{ID: u.ID}}
		if w.subscribed(u.ID, c.id) {
			if u.ID == creator.ID {
				return
			}
			_, err := h.Service.Unsubscribe(ctx, h.Owner.Caller, chat.UnsubscribeRequest{Subscriptions: []string{c.name}, Principals: ps})
			require.NoError(t, err)
			p := w.periods[u.ID][c.id]
			p[len(p)-1][1] = w.lastID
			if p[len(p)-1][1] == p[len(p)-1][0] {
				w.periods[u.ID][c.id] = p[:len(p)-1] // an empty period
			}
			return
		}
		_, err := h.Service.Subscribe(ctx, h.Owner.Caller, chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: c.name}}, Principals: ps})
		require.NoError(t, err)
		w.periods[u.ID][c.id] = append(w.periods[u.ID][c.id], [2]int64{w.lastID, 0})
	}
	topics := []string{"alpha", "Beta", "✔ gamma", ""}
	content := func() string {
		var parts []string
		for range 1 + rng.IntN(4) {
			parts = append(parts, diffWords[rng.IntN(len(diffWords))])
		}
		switch rng.IntN(12) {
		case 0:
			parts = append(parts, "@**"+w.users[rng.IntN(len(w.users))].FullName+"**")
		case 1:
			parts = append(parts, "@**all**")
		case 2:
			parts = append(parts, "https://example.com/x")
		case 3:
			parts = append(parts, "[plan.png](/user_uploads/1/ab/plan.png)")
		case 4:
			parts = append(parts, "@**topic**")
		}
		return strings.Join(parts, " ")
	}
	for range 1200 {
		if rng.IntN(10) == 0 {
			toggle(w.users[1+rng.IntN(len(w.users)-1)], w.channels[rng.IntN(len(w.channels))])
			continue
		}
		var req chat.SendMessageRequest
		var sender chattest.User
		if rng.IntN(5) == 0 {
			sender = w.users[rng.IntN(len(w.users))]
			var to []int64
			for _, u := range w.users {
				if u.ID != sender.ID && rng.IntN(3) == 0 {
					to = append(to, u.ID)
				}
			}
			if len(to) == 0 {
				to = []int64{sender.ID}
			}
			req = chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(to...), Content: content(), ReadBySender: ptr(rng.IntN(2) == 0)}
		} else {
			c := w.channels[rng.IntN(len(w.channels))]
			var subs []chattest.User
			for _, u := range w.users {
				if w.subscribed(u.ID, c.id) {
					subs = append(subs, u)
				}
			}
			sender = subs[rng.IntN(len(subs))]
			req = chat.SendMessageRequest{Type: "channel", To: chat.ToChannelID(c.id), Topic: ptr(topics[rng.IntN(len(topics))]),
				Content: content(), ReadBySender: ptr(rng.IntN(2) == 0)}
		}
		resp, err := h.Service.SendMessage(ctx, sender.Caller, req)
		if err != nil {
			// Only the permission rules may refuse (wildcards in a large
			// channel cannot happen here: channels are small).
			require.Contains(t, err.Error(), "not allowed", "seed %d", seed)
			continue
		}
		w.lastID = resp.ID
		w.msgs = append(w.msgs, resp.ID)
	}
	// Reader state: followed, muted and unmuted topics, a muted channel.
	for _, u := range w.users {
		for _, c := range w.channels {
			if w.subscribed(u.ID, c.id) && rng.IntN(3) == 0 {
				_, err := h.Service.UpdateSubscriptionProperties(ctx, u.Caller, chat.UpdateSubscriptionPropertiesRequest{
					SubscriptionData: []chat.SubscriptionProperty{{StreamID: c.id, Property: "is_muted", Value: []byte("true")}}})
				require.NoError(t, err)
			}
			for _, topic := range topics {
				if rng.IntN(4) == 0 && (w.subscribed(u.ID, c.id) || !c.inviteOnly && !w.guest[u.ID]) {
					_, err := h.Service.UpdateUserTopic(ctx, u.Caller, chat.UpdateUserTopicRequest{StreamID: c.id, Topic: topic,
						VisibilityPolicy: 1 + rng.IntN(3)})
					require.NoError(t, err)
				}
			}
		}
	}

	compared, refused := 0, 0
	for _, reader := range []chattest.User{w.users[0], w.users[2], w.users[4]} {
		state := w.readerState(t, reader)
		for range 150 {
			raw := w.randomNarrow(rng)
			resp, err := h.Service.GetMessages(ctx, reader.Caller, chat.GetMessagesRequest{Anchor: ptr("oldest"), NumAfter: ptr(5000), Narrow: &raw})
			if err != nil {
				msg := err.Error()
				require.True(t, strings.Contains(msg, "both a channel message and direct message") ||
					strings.Contains(msg, "is not supported by this server yet"), "narrow %s: %v", raw, err)
				refused++
				continue
			}
			got := fetchedIDs(resp)
			want := w.expected(t, reader, state, raw)
			if !slices.Equal(want, got) {
				for _, id := range want {
					if !slices.Contains(got, id) {
						m, _ := h.Store.GetMessage(ctx, h.RealmID, id)
						t.Logf("missing %d: %s flags %v periods %v", id, asJSON(m), state.flags[id], w.periods[reader.ID])
					}
				}
			}
			require.Equal(t, want, got, "seed %d, reader %s, narrow %s", seed, reader.FullName, raw)
			compared++
		}
	}
	t.Logf("%d messages; %d narrows compared, %d refused as the reference would", len(w.msgs), compared, refused)
	require.Greater(t, compared, 300)
}

func asJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

// diffState is what the reader's view of each message needs: the
// message facts and the reader's flags, mutes and topic policies.
type diffState struct {
	msgs   map[int64]narrow.Message
	flags  map[int64]narrow.Flags
	muted  map[int64]bool
	policy map[[2]string]int
}

var diffFlagBits = map[string]narrow.Flags{"read": narrow.FlagRead, "starred": narrow.FlagStarred, "collapsed": narrow.FlagCollapsed,
	"mentioned": narrow.FlagMentioned, "stream_wildcard_mentioned": narrow.FlagStreamWildcardMentioned,
	"topic_wildcard_mentioned": narrow.FlagTopicWildcardMentioned, "has_alert_word": narrow.FlagHasAlertWord,
	"historical": narrow.FlagHistorical}

// readerState reads every message's facts from the store and the
// reader's flags as GET /messages/{id} reports them.
func (w *diffWorld) readerState(t *testing.T, reader chattest.User) diffState {
	ctx := context.Background()
	st := diffState{msgs: map[int64]narrow.Message{}, flags: map[int64]narrow.Flags{}, muted: map[int64]bool{}, policy: map[[2]string]int{}}
	emails := map[int64]string{}
	for _, u := range w.users {
		emails[u.ID] = u.Email
	}
	for _, id := range w.msgs {
		m, err := w.h.Store.GetMessage(ctx, w.h.RealmID, id)
		require.NoError(t, err)
		nm := narrow.Message{ID: id, Topic: m.Topic, SenderID: m.SenderID, SenderEmail: emails[m.SenderID], Content: m.Content,
			RenderedContent: m.RenderedContent, HasLink: m.HasLink, HasImage: m.HasImage, HasAttachment: m.HasAttachment}
		if m.StreamID != nil {
			for _, c := range w.channels {
				if c.id == *m.StreamID {
					nm.ChannelID, nm.ChannelName, nm.ChannelPublic = c.id, c.name, !c.inviteOnly && c.history
				}
			}
		} else {
			nm.DMUserIDs, err = w.h.Store.ConversationMembers(ctx, w.h.RealmID, *m.ConversationID)
			require.NoError(t, err)
		}
		st.msgs[id] = nm
		// What the reader never received is read history to them.
		st.flags[id] = narrow.FlagRead | narrow.FlagHistorical
	}
	// The flags of what they received, as GET /messages reports them.
	resp, err := w.h.Service.GetMessages(ctx, reader.Caller, chat.GetMessagesRequest{MessageIDs: &w.msgs})
	require.NoError(t, err)
	for _, v := range resp.Messages {
		st.flags[v.ID] = 0
		for _, f := range v.Flags {
			st.flags[v.ID] |= diffFlagBits[f]
		}
	}
	subs, err := w.h.Service.GetSubscriptions(ctx, reader.Caller, chat.GetSubscriptionsRequest{})
	require.NoError(t, err)
	for _, s := range subs.Subscriptions {
		st.muted[s.StreamID] = s.IsMuted
	}
	topics, err := w.h.Service.GetUserTopics(ctx, reader.Caller)
	require.NoError(t, err)
	for _, ut := range topics.UserTopics {
		st.policy[[2]string{fmt.Sprint(ut.StreamID), strings.ToLower(ut.TopicName)}] = ut.VisibilityPolicy
	}
	return st
}

// randomNarrow is one to three random terms, some negated.
func (w *diffWorld) randomNarrow(rng *rand.Rand) string {
	var terms []map[string]any
	for range 1 + rng.IntN(3) {
		var op string
		var operand any
		switch rng.IntN(14) {
		case 0:
			op, operand = "channel", w.channels[rng.IntN(len(w.channels))].name
		case 1:
			op, operand = "channels", []string{"public", "web-public"}[rng.IntN(2)]
		case 2:
			op, operand = "topic", []string{"alpha", "BETA", "✔ gamma", "general chat", "nowhere"}[rng.IntN(5)]
		case 3:
			op, operand = "sender", w.users[rng.IntN(len(w.users))].ID
		case 4:
			op, operand = "dm", []int64{w.users[rng.IntN(len(w.users))].ID}
		case 5:
			op, operand = "dm-including", w.users[rng.IntN(len(w.users))].ID
		case 6:
			op, operand = "group-pm-with", w.users[rng.IntN(len(w.users))].Email
		case 7, 8:
			op, operand = "is", []string{"dm", "starred", "mentioned", "alerted", "unread", "resolved", "followed", "muted"}[rng.IntN(8)]
		case 9:
			op, operand = "in", []string{"home", "all"}[rng.IntN(2)]
		case 10:
			op, operand = "has", []string{"link", "image", "attachment"}[rng.IntN(3)]
		case 11, 12:
			op, operand = "search", diffWords[rng.IntN(len(diffWords))]
		default:
			op, operand = "id", w.msgs[rng.IntN(len(w.msgs))]
		}
		terms = append(terms, map[string]any{"operator": op, "operand": operand, "negated": rng.IntN(4) == 0})
	}
	b, _ := json.Marshal(terms)
	return string(b)
}

// expected is the brute-force answer: every message the reader may see
// in the narrow's scope that narrow.Match accepts, ascending.
func (w *diffWorld) expected(t *testing.T, reader chattest.User, st diffState, raw string) []int64 {
	parsed, err := narrow.Parse(raw)
	require.NoError(t, err)
	terms, err := narrow.Resolve(parsed, diffResolver{w}, narrow.Options{})
	require.NoError(t, err, raw)
	guest := w.guest[reader.ID]
	channelOf := func(id int64) diffChannel {
		for _, c := range w.channels {
			if c.id == id {
				return c
			}
		}
		return diffChannel{}
	}
	// The reader may read a channel's whole history when it is shared
	// and they are subscribed, or it is public and they are not a guest.
	history := func(id int64) bool {
		c := channelOf(id)
		return c.history && (w.subscribed(reader.ID, id) || !c.inviteOnly && !guest)
	}
	include := narrow.IncludeHistory(terms, history, !guest)
	full := map[int64]bool{}
	for _, term := range terms {
		if include && term.Operator == "channel" && !term.Negated && history(term.ChannelID) {
			full[term.ChannelID] = true
		}
		if include && term.Operator == "channels" && term.Operand.IsString("public") && !term.Negated {
			for _, c := range w.channels {
				if !c.inviteOnly && c.history {
					full[c.id] = true
				}
			}
		}
	}
	out := []int64{}
	for _, id := range w.msgs {
		m := st.msgs[id]
		visible := false
		if m.ChannelID == 0 {
			visible = slices.Contains(m.DMUserIDs, reader.ID)
		} else {
			visible = full[m.ChannelID] || w.received(reader.ID, m.ChannelID, id) || m.SenderID == reader.ID
		}
		if !visible {
			continue
		}
		view := narrow.UserView{UserID: reader.ID, Flags: st.flags[id]}
		if m.ChannelID != 0 {
			view.ChannelMuted = st.muted[m.ChannelID]
			view.TopicPolicy = narrow.TopicPolicy(st.policy[[2]string{fmt.Sprint(m.ChannelID), strings.ToLower(m.Topic)}])
		}
		if narrow.Match(terms, m, view) {
			out = append(out, id)
		}
	}
	return out
}

// diffResolver resolves narrow operands from the world.
type diffResolver struct{ w *diffWorld }

func (r diffResolver) ChannelByName(name string) (int64, bool) {
	for _, c := range r.w.channels {
		if strings.EqualFold(c.name, name) {
			return c.id, true
		}
	}
	return 0, false
}

func (r diffResolver) ChannelByID(id int64) bool {
	_, ok := r.ChannelByName(func() string {
		for _, c := range r.w.channels {
			if c.id == id {
				return c.name
			}
		}
		return "\x00"
	}())
	return ok
}

func (r diffResolver) UserByEmail(email string) (int64, bool) {
	for _, u := range r.w.users {
		if strings.EqualFold(u.Email, email) {
			return u.ID, true
		}
	}
	return 0, false
}

func (r diffResolver) UserByID(id int64) bool {
	for _, u := range r.w.users {
		if u.ID == id {
			return true
		}
	}
	return false
}
