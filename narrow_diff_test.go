package chat_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
	"github.com/teamchat/chat/narrow"
	"github.com/teamchat/chat/storage"
)

// TestNarrowDifferential checks GET /messages (the narrow compiled to SQL
// by compileNarrow and the store's ListMessageWindow) against a
// brute-force answer: narrow.Match applied in memory to every message the
// reader may read in the narrow's scope, on terms the test builds itself
// from the narrow it made (ndTerms: its own table of operator names,
// sides and operand resolution, not narrow.Parse or narrow.Resolve, which
// the Service uses). Each narrow is fetched whole (anchor oldest), and now
// and then as a window around an anchor (found_* included), by
// message_ids, through GET /messages/matches_narrow, and with the
// first_unread anchor. Narrows the test expects refused (ndBothSides)
// must be refused with that error, and no other.
//
// The history is built through the Service: users (a guest among them,
// one deactivated at the end), public, private (with and without shared
// history) and web-public channels that users join and leave at different
// times, channel messages in a few topics (resolved ones, the empty topic
// and case variants included), 1:1, group and self direct messages, with
// mentions (users, silent ones, @**all**, @**topic**, a user group),
// links and upload links; topics followed, muted and unmuted, channels
// muted, messages read by their sender.
//
// The expectation shares nothing with the SQL path but raw facts: the
// stored messages, conversation members, and the reader's flags, channel
// mutes and topic policies as the Service reports them (the read and
// historical flags are checked against the test's own model). Who may
// read what is the test's own model: the subscription periods it made,
// the reference's UserMessage rows (a channel message's sender who is
// not subscribed gets none), ok_to_include_history and
// can_access_stream_history.
//
// Search operands are plain vocabulary words (and phrases of two) whose
// English stems are the words' own and not shared, since narrow.Match has
// no stemming while the databases' full-text engines do.
//
// Known divergences of the Service from the reference are checked as the
// Service has them and counted (ndKnownGuestWebPublic,
// ndKnownFirstUnreadNegatedChannel, and the flags of a sender's
// unreceived messages in reader): should the Service come to agree with
// the reference, they stay green.
//
// TEAMCHAT_DIFF_SEED picks another seed; the seed is printed on failure.
// -short makes the history and the number of narrows smaller.
func TestNarrowDifferential(t *testing.T) {
	seed := testSeed(t, "TEAMCHAT_DIFF_SEED")
	start := time.Now()
	w := buildDiffWorld(t, seed)
	built := time.Since(start)
	stats := w.compareAll(t)
	t.Logf("seed %d: %d messages (%d sends refused) built in %v; %s; total %v",
		seed, len(w.msgs), w.refusedSends, built.Round(time.Millisecond), stats, time.Since(start).Round(time.Millisecond))
	if w.ownUnreceived > 0 {
		t.Logf("TODO known divergence (flags, not narrows): %d own channel messages the sender did not receive show as received, not \"read, historical\"", w.ownUnreceived)
	}
}

// ndSize is n, or short with -short.
func ndSize(n, short int) int {
	if testing.Short() {
		return short
	}
	return n
}

// ndVocabulary are the words of message contents and search operands:
// none a stop word, each its own stem, no two sharing one, none inside
// another (quoted phrases are substring matches in the reference).
var ndVocabulary = []string{"apple", "river", "stone", "cloud", "forest", "violet", "copper", "harbor", "maple", "quartz"}

// ndTopics are the topics messages are sent to (case variants of one
// topic are one topic), ndTopicOperands the topic terms' operands.
var (
	ndTopics        = []string{"alpha", "ALPHA", "Beta", "beta", "✔ done", "✔ gamma", "", "✔done", "Über", "über"}
	ndTopicOperands = []string{"alpha", "BETA", "✔ done", "✔ GAMMA", "general chat", "", "✔done", "nowhere", "ÜBER"}
)

type ndChannel struct {
	id                             int64
	name                           string
	inviteOnly, history, webPublic bool
	creator                        int64
}

// ndWorld is the history and what the test itself knows of it.
type ndWorld struct {
	h     *chattest.Harness
	seed  uint64
	rng   *rand.Rand
	users []chattest.User
	// guest and deactivated mark users; crew are the members of the
	// user group "crew".
	guest, deactivated map[int64]bool
	crew               []int64
	channels           []ndChannel
	// periods[user][channel] are the (after, through] spans of message
	// IDs the user was subscribed for (through 0: still subscribed).
	periods map[int64]map[int64][][2]int64
	lastID  int64
	msgs    []int64
	// readBySender: the message was sent with read_by_sender.
	readBySender map[int64]bool
	// readOnLeave[user][channel]: the newest message when the user last
	// left the channel; leaving marks the channel's messages read, as in
	// the reference.
	readOnLeave  map[int64]map[int64]int64
	refusedSends int
	// ownUnreceived counts the flags divergence of a sender's message
	// they did not receive (see reader).
	ownUnreceived int
	// facts are the messages as narrow.Match sees them, by index in msgs.
	facts []narrow.Message
	// searches caches search terms' results (see splitSearch).
	searches map[string][]int8
}

func (w *ndWorld) user(id int64) chattest.User {
	for _, u := range w.users {
		if u.ID == id {
			return u
		}
	}
	return chattest.User{}
}

func (w *ndWorld) channel(id int64) ndChannel {
	for _, c := range w.channels {
		if c.id == id {
			return c
		}
	}
	return ndChannel{}
}

func (w *ndWorld) subscribed(user, ch int64) bool {
	ps := w.periods[user][ch]
	return len(ps) > 0 && ps[len(ps)-1][1] == 0
}

// received says whether a subscription period of the user covers the
// channel message.
func (w *ndWorld) received(user, ch, id int64) bool {
	for _, p := range w.periods[user][ch] {
		if id > p[0] && (p[1] == 0 || id <= p[1]) {
			return true
		}
	}
	return false
}

// canAccessHistory is the reference's can_access_stream_history: a
// web-public channel's history is anyone's; a public channel's, any
// member's but guests'; a private channel's with shared history, its
// subscribers'. (Channel groups granting content access stay at their
// default, nobody.) With guestWebPublic false, a guest's access to a
// web-public channel's history is that of a public channel's, as
// compileNarrow has it (see ndKnownGuestWebPublic).
func (w *ndWorld) canAccessHistory(user int64, c ndChannel, guestWebPublic bool) bool {
	switch {
	case c.webPublic && (guestWebPublic || !w.guest[user]):
		return true
	case !c.inviteOnly && !w.guest[user]:
		return true
	}
	return c.history && w.subscribed(user, c.id)
}

// includeHistory is the reference's ok_to_include_history for an
// authenticated reader: the last positive channel term decides (by
// can_access_stream_history), a positive channels:public term opens it
// for non-guests, and an `is` term other than is:resolved closes it.
func (w *ndWorld) includeHistory(user int64, terms []narrow.Term, guestWebPublic bool) bool {
	include := false
	for _, t := range terms {
		switch {
		case t.Operator == "channel" && !t.Negated:
			include = w.canAccessHistory(user, w.channel(t.ChannelID), guestWebPublic)
		case t.Operator == "channels" && t.Operand.IsString("public") && !t.Negated && !w.guest[user]:
			include = true
		}
	}
	for _, t := range terms {
		if t.Operator == "is" && !t.Operand.IsString("resolved") {
			include = false
		}
	}
	return include
}

func buildDiffWorld(t *testing.T, seed uint64) *ndWorld {
	ctx := context.Background()
	h := chattest.New(t)
	w := &ndWorld{h: h, seed: seed, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		guest: map[int64]bool{}, deactivated: map[int64]bool{}, periods: map[int64]map[int64][][2]int64{},
		readBySender: map[int64]bool{}, readOnLeave: map[int64]map[int64]int64{}, searches: map[string][]int8{}}
	w.users = append(w.users, h.Owner)
	for i := range 7 {
		role := chat.RoleMember
		if i == 6 {
			role = chat.RoleGuest
		}
		u := h.NewUser(t, role)
		w.users = append(w.users, u)
		w.guest[u.ID] = role == chat.RoleGuest
	}
	for _, u := range w.users {
		w.periods[u.ID] = map[int64][][2]int64{}
	}
	// users[1..5] are members, users[6] will be deactivated at the end,
	// users[7] is the guest.
	w.crew = []int64{w.users[2].ID, w.users[4].ID, w.users[7].ID}
	createGroup(t, h, w.users[1], "crew", w.crew...)

	for _, c := range []ndChannel{
		{name: "open", creator: w.users[1].ID},
		{name: "lobby", creator: w.users[2].ID},
		{name: "club", inviteOnly: true, history: true, creator: w.users[1].ID},
		{name: "vault", inviteOnly: true, creator: w.users[3].ID},
		{name: "plaza", webPublic: true, creator: h.Owner.ID},
	} {
		c.history = c.history || !c.inviteOnly
		creator := w.user(c.creator)
		_, err := h.Service.Subscribe(ctx, creator.Caller, chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: c.name}},
			InviteOnly: &c.inviteOnly, IsWebPublic: &c.webPublic, HistoryPublicToSubscribers: &c.history})
		require.NoError(t, err, "create %s", c.name)
		c.id = channelID(t, h, creator, c.name)
		w.channels = append(w.channels, c)
		w.periods[c.creator][c.id] = [][2]int64{{w.lastID, 0}}
	}
	// A few more subscriptions to start with.
	for _, u := range w.users[1:] {
		for _, c := range w.channels {
			if !w.subscribed(u.ID, c.id) && w.rng.IntN(2) == 0 {
				w.toggle(t, u, c)
			}
		}
	}

	for range ndSize(2500, 600) {
		switch r := w.rng.IntN(100); {
		case r < 5:
			w.toggle(t, w.users[w.rng.IntN(len(w.users))], w.channels[w.rng.IntN(len(w.channels))])
			continue
		case r < 6:
			w.toggleMute(t)
			continue
		case r < 8:
			w.setTopicPolicy(t)
			continue
		}
		w.send(t)
	}
	// Leave a few channels muted, and a few topic policies, at the end.
	for range 6 {
		w.toggleMute(t)
		w.setTopicPolicy(t)
	}
	// Some senders react to their messages (those they received, so that
	// no historical row changes their flags).
	reacted := map[int64]bool{}
	for _, id := range w.msgs {
		if w.rng.IntN(12) != 0 {
			continue
		}
		m, err := h.Store.GetMessage(ctx, h.RealmID, id)
		require.NoError(t, err)
		if m.StreamID != nil && !(w.subscribed(m.SenderID, *m.StreamID) && w.received(m.SenderID, *m.StreamID, id)) {
			continue
		}
		_, err = h.Service.AddReaction(ctx, w.user(m.SenderID).Caller, chat.AddReactionRequest{MessageID: id, EmojiName: "tada"})
		require.NoError(t, err, "seed %d: reaction to %d", seed, id)
		reacted[id] = true
	}
	h.Deactivate(t, w.users[6])
	w.deactivated[w.users[6].ID] = true

	// The messages' facts, from the store.
	for _, id := range w.msgs {
		m, err := h.Store.GetMessage(ctx, h.RealmID, id)
		require.NoError(t, err)
		f := narrow.Message{ID: id, Topic: m.Topic, SenderID: m.SenderID, SenderEmail: w.user(m.SenderID).Email,
			Content: m.Content, RenderedContent: m.RenderedContent,
			HasLink: m.HasLink, HasImage: m.HasImage, HasAttachment: m.HasAttachment, HasReaction: reacted[id]}
		if m.StreamID != nil {
			c := w.channel(*m.StreamID)
			f.ChannelID, f.ChannelName = c.id, c.name
			f.ChannelPublic, f.ChannelWebPublic = !c.inviteOnly && c.history, c.webPublic
		} else {
			f.DMUserIDs, err = h.Store.ConversationMembers(ctx, h.RealmID, *m.ConversationID)
			require.NoError(t, err)
		}
		w.facts = append(w.facts, f)
	}
	return w
}

// toggle subscribes or unsubscribes the user (through the owner), keeping
// the test's record of subscription periods. Channel creators stay.
func (w *ndWorld) toggle(t *testing.T, u chattest.User, c ndChannel) {
	ctx := context.Background()
	ps := &[]chat.Principal{{ID: u.ID}}
	if w.subscribed(u.ID, c.id) {
		if u.ID == c.creator {
			return
		}
		_, err := w.h.Service.Unsubscribe(ctx, w.h.Owner.Caller, chat.UnsubscribeRequest{Subscriptions: []string{c.name}, Principals: ps})
		require.NoError(t, err)
		if w.readOnLeave[u.ID] == nil {
			w.readOnLeave[u.ID] = map[int64]int64{}
		}
		w.readOnLeave[u.ID][c.id] = w.lastID
		p := w.periods[u.ID][c.id]
		p[len(p)-1][1] = w.lastID
		if p[len(p)-1][1] == p[len(p)-1][0] {
			w.periods[u.ID][c.id] = p[:len(p)-1] // an empty period
		}
		return
	}
	_, err := w.h.Service.Subscribe(ctx, w.h.Owner.Caller, chat.SubscribeRequest{Subscriptions: []chat.ChannelSpec{{Name: c.name}}, Principals: ps})
	require.NoError(t, err)
	w.periods[u.ID][c.id] = append(w.periods[u.ID][c.id], [2]int64{w.lastID, 0})
}

// toggleMute mutes or unmutes a random subscription of a random user.
func (w *ndWorld) toggleMute(t *testing.T) {
	ctx := context.Background()
	u := w.users[w.rng.IntN(len(w.users))]
	c := w.channels[w.rng.IntN(len(w.channels))]
	if !w.subscribed(u.ID, c.id) {
		return
	}
	v := []byte("true")
	if w.rng.IntN(3) == 0 {
		v = []byte("false")
	}
	_, err := w.h.Service.UpdateSubscriptionProperties(ctx, u.Caller, chat.UpdateSubscriptionPropertiesRequest{
		SubscriptionData: []chat.SubscriptionProperty{{StreamID: c.id, Property: "is_muted", Value: v}}})
	require.NoError(t, err)
}

// setTopicPolicy sets a random user's policy for a random topic (muted,
// unmuted, followed or none) where the Service lets them.
func (w *ndWorld) setTopicPolicy(t *testing.T) {
	u := w.users[w.rng.IntN(len(w.users))]
	c := w.channels[w.rng.IntN(len(w.channels))]
	_, err := w.h.Service.UpdateUserTopic(context.Background(), u.Caller, chat.UpdateUserTopicRequest{StreamID: c.id,
		Topic: ndTopics[w.rng.IntN(len(ndTopics))], VisibilityPolicy: w.rng.IntN(4)})
	if err != nil {
		// Only channels the user cannot see are refused.
		require.False(t, w.canAccessHistory(u.ID, c, true) && (w.subscribed(u.ID, c.id) || !c.inviteOnly && !w.guest[u.ID]), "seed %d: %v", w.seed, err)
	}
}

// content is a few vocabulary words with, sometimes, a mention, a link or
// an upload.
func (w *ndWorld) content() string {
	var parts []string
	for range 1 + w.rng.IntN(5) {
		parts = append(parts, ndVocabulary[w.rng.IntN(len(ndVocabulary))])
	}
	extra := func() string {
		switch w.rng.IntN(16) {
		case 0, 1:
			return "@**" + w.users[w.rng.IntN(len(w.users))].FullName + "**"
		case 2:
			return "@**all**"
		case 3:
			return "@**topic**"
		case 4:
			return "@*crew*"
		case 5:
			return "https://example.com/page"
		case 6:
			return "[plan.png](/user_uploads/1/ab/plan.png)"
		case 7:
			return "[notes.txt](/user_uploads/1/cd/notes.txt)"
		case 8:
			return "@_**" + w.users[w.rng.IntN(len(w.users))].FullName + "**"
		}
		return ""
	}
	for range 2 {
		if e := extra(); e != "" {
			parts = slices.Insert(parts, w.rng.IntN(len(parts)+1), e)
		}
	}
	return strings.Join(parts, " ")
}

// send sends a random channel or direct message from a random user who
// may send it.
func (w *ndWorld) send(t *testing.T) {
	var active []chattest.User
	for _, u := range w.users {
		if !w.deactivated[u.ID] {
			active = append(active, u)
		}
	}
	req := chat.SendMessageRequest{Content: w.content(), ReadBySender: ptr(w.rng.IntN(2) == 0)}
	var sender chattest.User
	if w.rng.IntN(100) < 35 {
		sender = active[w.rng.IntN(len(active))]
		var to []int64
		for _, u := range active {
			if u.ID != sender.ID && w.rng.IntN(4) == 0 {
				to = append(to, u.ID)
			}
		}
		if len(to) == 0 && w.rng.IntN(3) > 0 {
			to = []int64{active[w.rng.IntN(len(active))].ID} // often 1:1, sometimes with oneself
		}
		if len(to) == 0 {
			to = []int64{sender.ID}
		}
		req.Type, req.To = "direct", chat.ToUsers(to...)
	} else {
		c := w.channels[w.rng.IntN(len(w.channels))]
		var subs, may []chattest.User
		for _, u := range active {
			if w.subscribed(u.ID, c.id) {
				subs = append(subs, u)
			}
			// Who may post without being subscribed: anyone in a
			// web-public channel, members in a public one.
			if w.subscribed(u.ID, c.id) || c.webPublic || !c.inviteOnly && !w.guest[u.ID] {
				may = append(may, u)
			}
		}
		pool := subs
		if w.rng.IntN(5) == 0 || len(pool) == 0 {
			pool = may
		}
		sender = pool[w.rng.IntN(len(pool))]
		req.Type, req.To, req.Topic = "channel", chat.ToChannelID(c.id), ptr(ndTopics[w.rng.IntN(len(ndTopics))])
	}
	resp, err := w.h.Service.SendMessage(context.Background(), sender.Caller, req)
	if err != nil {
		// Only the mention rules may refuse (wildcards, groups).
		require.Contains(t, err.Error(), "not allowed", "seed %d: %+v", w.seed, req)
		w.refusedSends++
		return
	}
	w.lastID = resp.ID
	w.msgs = append(w.msgs, resp.ID)
	w.readBySender[resp.ID] = *req.ReadBySender
}

// splitSearch takes the search term (Resolve puts the one it makes
// last) out of the terms and returns whether narrow.Match accepts the
// i-th message for that term alone, remembered per operand since search
// does not depend on the reader (nil: no search term).
func (w *ndWorld) splitSearch(terms []narrow.Term) ([]narrow.Term, func(i int) bool) {
	n := len(terms)
	if n == 0 || terms[n-1].Operator != "search" {
		return terms, nil
	}
	t := terms[n-1]
	key := fmt.Sprint(t.Negated, t.Operand.Str)
	known := w.searches[key] // 0 not yet known, 1 no, 2 yes
	if known == nil {
		known = make([]int8, len(w.msgs))
		w.searches[key] = known
	}
	return terms[:n-1], func(i int) bool {
		if known[i] == 0 {
			known[i] = 1
			if narrow.Match([]narrow.Term{t}, w.facts[i], narrow.UserView{}) {
				known[i] = 2
			}
		}
		return known[i] == 2
	}
}

// ndReader is one reader's side of every message (by index in w.msgs).
type ndReader struct {
	u chattest.User
	// personal: the message is in the reader's own history (the
	// reference's UserMessage rows: channel messages sent while they
	// were subscribed, their own messages, their direct messages).
	personal []bool
	views    []narrow.UserView
}

var ndFlagBits = map[string]narrow.Flags{"read": narrow.FlagRead, "starred": narrow.FlagStarred, "collapsed": narrow.FlagCollapsed,
	"mentioned": narrow.FlagMentioned, "stream_wildcard_mentioned": narrow.FlagStreamWildcardMentioned,
	"topic_wildcard_mentioned": narrow.FlagTopicWildcardMentioned, "has_alert_word": narrow.FlagHasAlertWord,
	"historical": narrow.FlagHistorical}

func ndFlags(names []string) narrow.Flags {
	var f narrow.Flags
	for _, n := range names {
		f |= ndFlagBits[n]
	}
	return f
}

// reader reads the reader's state: their flags of each message as the
// Service reports them (GET /messages by ID for what it returns, GET
// /messages/{id} for their own messages it does not, read and historical
// for the rest, which they never received), their muted channels and
// topic policies. It checks the read and historical flags against the
// test's own model on the way.
func (w *ndWorld) reader(t *testing.T, u chattest.User) *ndReader {
	ctx := context.Background()
	r := &ndReader{u: u, personal: make([]bool, len(w.msgs)), views: make([]narrow.UserView, len(w.msgs))}
	resp, err := w.h.Service.GetMessages(ctx, u.Caller, chat.GetMessagesRequest{MessageIDs: &w.msgs})
	require.NoError(t, err)
	flags := map[int64]narrow.Flags{}
	for _, v := range resp.Messages {
		flags[v.ID] = ndFlags(v.Flags)
	}
	subs, err := w.h.Service.GetSubscriptions(ctx, u.Caller, chat.GetSubscriptionsRequest{})
	require.NoError(t, err)
	muted := map[int64]bool{}
	for _, s := range subs.Subscriptions {
		muted[s.StreamID] = s.IsMuted
	}
	topics, err := w.h.Service.GetUserTopics(ctx, u.Caller)
	require.NoError(t, err)
	policy := map[string]narrow.TopicPolicy{}
	for _, ut := range topics.UserTopics {
		policy[fmt.Sprint(ut.StreamID, "\x00", storage.Fold(ut.TopicName))] = narrow.TopicPolicy(ut.VisibilityPolicy)
	}
	for i, id := range w.msgs {
		m := w.facts[i]
		v := narrow.UserView{UserID: u.ID}
		if m.ChannelID == 0 {
			r.personal[i] = slices.Contains(m.DMUserIDs, u.ID)
		} else {
			// The reference gives the sender no row of their message to a
			// channel they are not subscribed to.
			r.personal[i] = w.received(u.ID, m.ChannelID, id)
			v.ChannelMuted = muted[m.ChannelID]
			v.TopicPolicy = policy[fmt.Sprint(m.ChannelID, "\x00", storage.Fold(m.Topic))]
		}
		f, ok := flags[id]
		if !ok && m.SenderID == u.ID {
			one, err := w.h.Service.GetMessage(ctx, u.Caller, chat.GetMessageRequest{MessageID: id})
			require.NoError(t, err, "seed %d: %s reads their own message %d", w.seed, u.FullName, id)
			f, ok = ndFlags(one.Message.Flags), true
		}
		if !ok {
			f = narrow.FlagRead | narrow.FlagHistorical
		}
		v.Flags = f
		r.views[i] = v
		// The read and historical flags, as the test expects them.
		want := narrow.FlagRead | narrow.FlagHistorical
		if r.personal[i] {
			want = 0
			if m.SenderID == u.ID && w.readBySender[id] || m.ChannelID != 0 && id <= w.readOnLeave[u.ID][m.ChannelID] {
				want = narrow.FlagRead
			}
		}
		got := f & (narrow.FlagRead | narrow.FlagHistorical)
		if got != want && m.ChannelID != 0 && m.SenderID == u.ID && !r.personal[i] {
			// TODO(known divergence, flags): the reference gives the
			// sender of a channel message they did not receive (not
			// subscribed) no row, so they see it "read, historical";
			// fetchedViews counts the sender as a recipient
			// (received(): m.SenderID == me.ID), so it shows unread (or
			// read when read_by_sender). Not a narrow matter: such
			// messages are outside the reader's own history on both
			// sides.
			w.ownUnreceived++
			continue
		}
		if got != want {
			t.Errorf("seed %d: %s's read/historical flags of message %d (%s): got %b, want %b (personal %v)",
				w.seed, u.FullName, id, asJSONString(m), got, want, r.personal[i])
		}
	}
	return r
}

func asJSONString(v any) string { b, _ := json.Marshal(v); return string(b) }

// ndTerm is one term of a random narrow as the test made it.
type ndTerm struct {
	op      string
	operand any // string, int64 or []int64
	negated bool
}

// randomNarrow is one to three random terms, a quarter of them negated,
// with operands by name or ID, in dict form or now and then as legacy
// pairs: the JSON sent, and the terms as the test made them.
func (w *ndWorld) randomNarrow(reader chattest.User) (string, []ndTerm) {
	rng := w.rng
	anyUser := func() chattest.User {
		if rng.IntN(6) == 0 {
			return reader
		}
		return w.users[rng.IntN(len(w.users))]
	}
	userOperand := func() any {
		u := anyUser()
		if rng.IntN(2) == 0 {
			return u.Email
		}
		return u.ID
	}
	var terms []any
	var made []ndTerm
	for range 1 + rng.IntN(3) {
		var op string
		var operand any
		switch rng.IntN(19) {
		case 0, 1:
			c := w.channels[rng.IntN(len(w.channels))]
			op, operand = []string{"channel", "stream"}[rng.IntN(2)], c.id
			if rng.IntN(2) == 0 {
				operand = strings.ToUpper(c.name[:1]) + c.name[1:]
			}
		case 2:
			op, operand = "channels", []string{"public", "web-public"}[rng.IntN(2)]
		case 3, 4:
			op, operand = "topic", ndTopicOperands[rng.IntN(len(ndTopicOperands))]
		case 5:
			op, operand = "sender", userOperand()
		case 6:
			var ids []int64
			for range 1 + rng.IntN(2) {
				ids = append(ids, anyUser().ID)
			}
			op, operand = "dm", ids
			if rng.IntN(3) == 0 {
				var emails []string
				for _, id := range ids {
					emails = append(emails, w.user(id).Email)
				}
				op, operand = "pm-with", strings.Join(emails, ",")
			}
		case 7:
			op, operand = "dm-including", userOperand()
		case 8:
			op, operand = "group-pm-with", userOperand()
		case 9, 10, 11:
			op, operand = "is", []string{"dm", "private", "starred", "mentioned", "alerted", "unread", "resolved", "followed", "muted"}[rng.IntN(9)]
		case 12:
			op, operand = "in", []string{"home", "all"}[rng.IntN(2)]
		case 13:
			op, operand = "has", []string{"link", "image", "attachment", "link", "image", "attachment", "reaction"}[rng.IntN(7)]
		case 14, 15, 16:
			a, b := ndVocabulary[rng.IntN(len(ndVocabulary))], ndVocabulary[rng.IntN(len(ndVocabulary))]
			switch rng.IntN(10) {
			case 0:
				operand = a + " " + b
			case 1:
				operand = `"` + a + " " + b + `"`
			case 2:
				operand = []string{"alpha", "beta", "gamma", "über"}[rng.IntN(4)] // topic words
			case 3:
				operand = strings.ToUpper(a) + "!" // case and punctuation do not count
			default:
				operand = a
			}
			op = "search"
		case 17:
			op, operand = "id", w.msgs[rng.IntN(len(w.msgs))]
			if rng.IntN(2) == 0 {
				operand = strconv.FormatInt(operand.(int64), 10)
			}
		default:
			op, operand = "near", strconv.FormatInt(w.msgs[rng.IntN(len(w.msgs))], 10)
		}
		if s, ok := operand.(string); ok && rng.IntN(6) == 0 {
			terms = append(terms, []string{op, s}) // the legacy form: never negated
			made = append(made, ndTerm{op: op, operand: s})
			continue
		}
		negated := rng.IntN(4) == 0
		terms = append(terms, map[string]any{"operator": op, "operand": operand, "negated": negated})
		made = append(made, ndTerm{op: op, operand: operand, negated: negated})
	}
	b, err := json.Marshal(terms)
	if err != nil {
		panic(err)
	}
	return string(b), made
}

// The test's own reading of a narrow, written out rather than taken from
// narrow.Parse and narrow.Resolve (which the Service uses): the
// operators' canonical names, which side of the channel/direct-message
// divide each positive term is on, and how operands resolve against the
// test's own world.
var (
	ndCanonicalOp = map[string]string{
		"channel": "channel", "stream": "channel", "channels": "channels", "topic": "topic", "sender": "sender",
		"dm": "dm", "pm-with": "dm", "dm-including": "dm-including", "group-pm-with": "group-pm-with",
		"is": "is", "in": "in", "has": "has", "search": "search", "id": "id", "near": "near",
	}
	// ndChannelSide: positive terms that only channel messages match.
	ndChannelSide = map[string]bool{"channel": true, "channels": true, "topic": true}
	// ndDMSide: positive terms that only direct messages match.
	ndDMSide = map[string]bool{"dm": true, "dm-including": true, "group-pm-with": true}
)

// ndBothSides is the reference's refusal of a narrow no message can
// match: a positive channel term and a positive direct-message term
// (is:dm counts as a direct-message term, -is:dm as a channel term).
const ndBothSides = "Invalid narrow operator: No message can be both a channel message and direct message"

// ndTerms is the narrow the test made as the terms narrow.Match reads, or
// the message of the refusal the reference answers it with.
func (w *ndWorld) ndTerms(made []ndTerm) ([]narrow.Term, string) {
	var out []narrow.Term
	var search []string
	channelSide, dmSide, topicSeen := false, false, false
	for _, m := range made {
		op := ndCanonicalOp[m.op]
		if op == "" {
			panic("the test makes no " + m.op + " terms")
		}
		t := narrow.Term{Operator: op, Negated: m.negated}
		switch v := m.operand.(type) {
		case string:
			t.Operand = narrow.StringOperand(v)
		case int64:
			t.Operand = narrow.IntOperand(v)
		case []int64:
			t.Operand = narrow.IntListOperand(v)
		}
		switch {
		case op == "is" && (t.Operand.IsString("dm") || t.Operand.IsString("private")):
			t.Operand = narrow.StringOperand("dm") // is:private is is:dm
			dmSide, channelSide = dmSide || !m.negated, channelSide || m.negated
		case !m.negated:
			channelSide, dmSide = channelSide || ndChannelSide[op], dmSide || ndDMSide[op]
		}
		switch op {
		case "search":
			// Search terms make one (the reference joins their words).
			search = append(search, t.Operand.Str)
			continue
		case "topic":
			// The first topic term's "general chat" is the empty topic.
			if !topicSeen && t.Operand.IsString(narrow.EmptyTopicDisplayName) {
				t.Operand = narrow.StringOperand("")
			}
			topicSeen = true
		case "channel":
			t.ChannelID, t.Resolved = w.ndChannelID(m.operand), true
		case "sender", "dm-including", "group-pm-with":
			t.UserIDs, t.Resolved = []int64{w.ndUserID(m.operand)}, true
		case "dm":
			t.UserIDs, t.Resolved = w.ndUserIDs(m.operand), true
		case "id":
			n, err := strconv.ParseInt(fmt.Sprint(m.operand), 10, 64)
			if err != nil {
				panic(err)
			}
			t.MessageID = n
		}
		out = append(out, t)
	}
	if channelSide && dmSide {
		return nil, ndBothSides
	}
	if len(search) > 0 {
		out = append(out, narrow.Term{Operator: "search", Operand: narrow.StringOperand(strings.Join(search, " "))})
	}
	return out, ""
}

// ndChannelID is the channel a channel operand names: its ID, or its name
// in any case.
func (w *ndWorld) ndChannelID(operand any) int64 {
	for _, c := range w.channels {
		if operand == c.id || fmt.Sprint(operand) == c.name || strings.EqualFold(fmt.Sprint(operand), c.name) {
			return c.id
		}
	}
	panic(fmt.Sprint("the test names no channel ", operand))
}

// ndUserID is the user an operand names, by ID or email.
func (w *ndWorld) ndUserID(operand any) int64 {
	for _, u := range w.users {
		if operand == u.ID || operand == u.Email {
			return u.ID
		}
	}
	panic(fmt.Sprint("the test names no user ", operand))
}

// ndUserIDs are the users of a dm operand: IDs, or emails joined by
// commas.
func (w *ndWorld) ndUserIDs(operand any) []int64 {
	if ids, ok := operand.([]int64); ok {
		return slices.Clone(ids)
	}
	var out []int64
	for _, email := range strings.Split(operand.(string), ",") {
		out = append(out, w.ndUserID(email))
	}
	return out
}

// ndExpectation is the brute-force answer to one narrow for one reader.
type ndExpectation struct {
	include bool
	// ids match, ascending; firstUnread is the reference's
	// find_first_unread_anchor (0: none).
	ids         []int64
	firstUnread int64
}

// Known divergences of the Service from the reference, which the test
// expects as the Service has them (and counts) so that the rest of such
// narrows is still checked. They are reported, not fixed here.
const (
	// ndKnownGuestWebPublic (TODO, message_fetch.go compileNarrow's
	// history()): the reference's can_access_stream_history opens a
	// web-public channel's history to every user, guests included (so
	// does messageAccess here), but compileNarrow grants it to guests
	// only while subscribed: a guest's channel:<web-public> narrow
	// returns only what they received.
	ndKnownGuestWebPublic = 1 << iota
	// ndKnownFirstUnreadNegatedChannel (TODO, Service.firstUnread,
	// compileNarrow's channelNarrow): the reference's
	// find_first_unread_anchor leaves out muting by
	// exclude_muting_conditions, which takes the narrow's first channel
	// term whether negated or not (get_channel_from_narrow_access_unchecked)
	// and then skips channel muting and only skips muted topics of that
	// channel; the Service looks at positive channel terms only. So after
	// a negated channel term (-channel:X, alone or before channel:Y) the
	// reference skips nothing muted (X's messages are out of the narrow),
	// while the Service skips muted channels (or, with channel:Y, muted
	// topics of Y).
	ndKnownFirstUnreadNegatedChannel
)

// expect computes the answer from the terms alone: every message the
// reader may read in the narrow's scope (with history: every message,
// since the narrow's channel term confines it; without: their own
// history) that narrow.Match accepts. known selects the Service's side
// of the known divergences instead of the reference's.
func (w *ndWorld) expect(r *ndReader, terms []narrow.Term, known int) ndExpectation {
	e := ndExpectation{include: w.includeHistory(r.u.ID, terms, known&ndKnownGuestWebPublic == 0), ids: []int64{}}
	// find_first_unread_anchor leaves out muted topics (of the narrow's
	// first channel, if it names one) and, without a channel term, muted
	// channels whose topic the reader did not unmute or follow.
	firstChannel := int64(0)
	for _, t := range terms {
		if t.Operator == "channel" && !(t.Negated && known&ndKnownFirstUnreadNegatedChannel != 0) {
			firstChannel = t.ChannelID
			break
		}
	}
	muted := func(m narrow.Message, v narrow.UserView) bool {
		switch {
		case m.ChannelID == 0:
			return false
		case firstChannel != 0:
			return m.ChannelID == firstChannel && v.TopicPolicy == narrow.PolicyMuted
		}
		return v.TopicPolicy == narrow.PolicyMuted ||
			v.ChannelMuted && v.TopicPolicy != narrow.PolicyUnmuted && v.TopicPolicy != narrow.PolicyFollowed
	}
	terms, search := w.splitSearch(terms)
	for i, id := range w.msgs {
		m, v := w.facts[i], r.views[i]
		if !e.include && !r.personal[i] || !narrow.Match(terms, m, v) || search != nil && !search(i) {
			continue
		}
		e.ids = append(e.ids, id)
		if e.firstUnread == 0 && r.personal[i] && v.Flags&narrow.FlagRead == 0 && !muted(m, v) {
			e.firstUnread = id
		}
	}
	return e
}

// ndStats counts what compareAll did.
type ndStats struct {
	narrows, refused, windows, firstUnread, history int
	nonEmpty, byID                                  int
	// The known divergences met (see ndKnownGuestWebPublic and
	// ndKnownFirstUnreadNegatedChannel).
	guestWebPublic, firstUnreadNegatedChannel int
}

func (s ndStats) String() string {
	return fmt.Sprintf("%d narrows compared (%d non-empty, %d with shared history), %d refused alike, %d windows, %d by message_ids, %d first_unread anchors; "+
		"known divergences, checked as the Service has them: %d guest web-public history narrows, %d first_unread anchors after a negated channel term",
		s.narrows, s.nonEmpty, s.history, s.refused, s.windows, s.byID, s.firstUnread, s.guestWebPublic, s.firstUnreadNegatedChannel)
}

// compareAll runs random narrows for every active reader and compares.
func (w *ndWorld) compareAll(t *testing.T) ndStats {
	ctx := context.Background()
	var st ndStats
	failures := 0
	fail := func(format string, args ...any) {
		failures++
		if failures <= 25 {
			t.Errorf("seed %d: "+format, append([]any{w.seed}, args...)...)
		}
	}
	for _, u := range w.users {
		if w.deactivated[u.ID] {
			continue
		}
		r := w.reader(t, u)
		for range ndSize(65, 20) {
			raw, made := w.randomNarrow(u)
			terms, refusal := w.ndTerms(made)
			resp, gerr := w.h.Service.GetMessages(ctx, u.Caller, chat.GetMessagesRequest{Anchor: ptr("oldest"), NumAfter: ptr(5000), Narrow: &raw})
			if refusal != "" || gerr != nil {
				var ce *chat.Error
				switch {
				case errors.As(gerr, &ce) && ce.Code == "BAD_NARROW" && ce.Msg == refusal:
				default:
					fail("reader %s, narrow %s: GET /messages error %v, expected refusal %q", u.FullName, raw, gerr, refusal)
				}
				st.refused++
				continue
			}
			known := 0
			e := w.expect(r, terms, known)
			got := fetchedIDs(resp)
			st.narrows++
			if len(e.ids) > 0 {
				st.nonEmpty++
			}
			if e.include {
				st.history++
			}
			if !slices.Equal(got, e.ids) {
				if alt := w.expect(r, terms, ndKnownGuestWebPublic); slices.Equal(got, alt.ids) {
					st.guestWebPublic++
					known, e = ndKnownGuestWebPublic, alt
				} else {
					fail("%s", w.explain(r, raw, e, got))
					continue
				}
			}
			if !resp.FoundOldest || !resp.FoundNewest {
				fail("reader %s, narrow %s: found_oldest %v, found_newest %v", u.FullName, raw, resp.FoundOldest, resp.FoundNewest)
			}
			// A window around a random anchor, now and then.
			if w.rng.IntN(4) == 0 {
				st.windows++
				anchor := w.msgs[w.rng.IntN(len(w.msgs))]
				if len(e.ids) > 0 && w.rng.IntN(2) == 0 {
					anchor = e.ids[w.rng.IntN(len(e.ids))]
				}
				n := 1 + w.rng.IntN(20)
				resp, err := w.h.Service.GetMessages(ctx, u.Caller, chat.GetMessagesRequest{Anchor: ptr(strconv.FormatInt(anchor, 10)),
					NumBefore: ptr(n), NumAfter: ptr(n), Narrow: &raw})
				require.NoError(t, err)
				var before, at, after []int64
				for _, id := range e.ids {
					switch {
					case id < anchor:
						before = append(before, id)
					case id == anchor:
						at = append(at, id)
					default:
						after = append(after, id)
					}
				}
				before, after = before[max(0, len(before)-n):], after[:min(n, len(after))]
				if want := slices.Concat(before, at, after); !slices.Equal(want, fetchedIDs(resp)) || resp.FoundAnchor != (len(at) == 1) ||
					resp.FoundOldest != (len(before) < n) || resp.FoundNewest != (len(after) < n) {
					fail("reader %s, narrow %s, anchor %d, %d each side: got %v (found anchor %v oldest %v newest %v), want %v",
						u.FullName, raw, anchor, n, fetchedIDs(resp), resp.FoundAnchor, resp.FoundOldest, resp.FoundNewest, want)
				}
			}
			// Some messages by ID (GET /messages message_ids, GET
			// /messages/matches_narrow), now and then.
			if w.rng.IntN(4) == 0 {
				w.compareByID(t, r, raw, terms, e, &st, fail)
			}
			// The first unread anchor, now and then.
			if w.rng.IntN(4) == 0 {
				st.firstUnread++
				resp, err := w.h.Service.GetMessages(ctx, u.Caller, chat.GetMessagesRequest{Anchor: ptr("first_unread"),
					NumBefore: ptr(0), NumAfter: ptr(0), Narrow: &raw})
				require.NoError(t, err)
				want := e.firstUnread
				if want == 0 {
					want = 10_000_000_000_000_000
				}
				if resp.Anchor != nil && *resp.Anchor != want {
					alt := w.expect(r, terms, known|ndKnownFirstUnreadNegatedChannel).firstUnread
					if alt == 0 {
						alt = 10_000_000_000_000_000
					}
					if *resp.Anchor == alt {
						st.firstUnreadNegatedChannel++
						continue
					}
				}
				if resp.Anchor == nil || *resp.Anchor != want {
					fail("reader %s, narrow %s: first_unread anchor %v, want %d\n%s", u.FullName, raw, ptrString(resp.Anchor), want,
						w.describe(r, []int64{ptrValue(resp.Anchor), want}))
				}
			}
		}
	}
	if failures > 25 {
		t.Errorf("seed %d: %d failures in all (the first 25 shown)", w.seed, failures)
	}
	require.Greater(t, st.narrows, ndSize(300, 90))
	require.Greater(t, st.nonEmpty, ndSize(150, 45))
	return st
}

// compareByID fetches random messages by ID with the narrow, through GET
// /messages message_ids (the narrow's scope, history included) and
// matches_narrow (only what the reader received).
func (w *ndWorld) compareByID(t *testing.T, r *ndReader, raw string, terms []narrow.Term, e ndExpectation, st *ndStats, fail func(string, ...any)) {
	ctx := context.Background()
	st.byID++
	var ids []int64
	for range 1 + w.rng.IntN(40) {
		ids = append(ids, w.msgs[w.rng.IntN(len(w.msgs))])
	}
	for range w.rng.IntN(10) {
		if len(e.ids) > 0 {
			ids = append(ids, e.ids[w.rng.IntN(len(e.ids))])
		}
	}
	// expected: the requested messages that match terms, in the
	// narrow's scope (with history when include) or the reader's own.
	expected := func(terms []narrow.Term, include bool) []int64 {
		out := []int64{}
		terms, search := w.splitSearch(terms)
		for i, id := range w.msgs {
			if (include || r.personal[i]) && slices.Contains(ids, id) && narrow.Match(terms, w.facts[i], r.views[i]) &&
				(search == nil || search(i)) {
				out = append(out, id)
			}
		}
		return out
	}
	check := func(what string, include bool, got []int64) {
		want := expected(terms, include)
		if slices.Equal(want, got) {
			return
		}
		fail("reader %s, narrow %s, %s %v: got %v, want %v", r.u.FullName, raw, what, ids, got, want)
	}
	resp, err := w.h.Service.GetMessages(ctx, r.u.Caller, chat.GetMessagesRequest{MessageIDs: &ids, Narrow: &raw})
	require.NoError(t, err)
	check("message_ids", e.include, fetchedIDs(resp))

	matches, err := w.h.Service.MatchesNarrow(ctx, r.u.Caller, chat.MatchesNarrowRequest{MsgIDs: &ids, Narrow: &raw})
	require.NoError(t, err)
	got := []int64{}
	for key := range matches.Messages {
		id, err := strconv.ParseInt(key, 10, 64)
		require.NoError(t, err)
		got = append(got, id)
	}
	slices.Sort(got)
	check("matches_narrow", false, got)
}

func ptrString(p *int64) string {
	if p == nil {
		return "nil"
	}
	return strconv.FormatInt(*p, 10)
}

// explain describes a disagreement: the narrow, the reader and each
// message one side has and the other has not.
func (w *ndWorld) explain(r *ndReader, raw string, e ndExpectation, got []int64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "reader %s (user %d, guest %v), narrow %s (include history %v): got %d messages, want %d",
		r.u.FullName, r.u.ID, w.guest[r.u.ID], raw, e.include, len(got), len(e.ids))
	shown := 0
	show := func(kind string, id int64) {
		if shown++; shown > 8 {
			return
		}
		fmt.Fprintf(&b, "\n  %s %s", kind, w.describe(r, []int64{id}))
	}
	for _, id := range e.ids {
		if !slices.Contains(got, id) {
			show("missing", id)
		}
	}
	for _, id := range got {
		if !slices.Contains(e.ids, id) {
			show("extra", id)
		}
	}
	fmt.Fprintf(&b, "\n  periods %v", w.periods[r.u.ID])
	return b.String()
}

// describe shows messages as the reader sees them.
func (w *ndWorld) describe(r *ndReader, ids []int64) string {
	var out []string
	for _, id := range ids {
		i, ok := slices.BinarySearch(w.msgs, id)
		if !ok {
			out = append(out, fmt.Sprintf("%d: no such message", id))
			continue
		}
		m, v := w.facts[i], r.views[i]
		out = append(out, fmt.Sprintf("%d: channel %q topic %q sender %d dm %v content %q; reader flags %b, channel muted %v, topic policy %d, own history %v",
			id, m.ChannelName, m.Topic, m.SenderID, m.DMUserIDs, m.Content, v.Flags, v.ChannelMuted, v.TopicPolicy, r.personal[i]))
	}
	return strings.Join(out, "\n  ")
}

func ptrValue(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}
