package storagetest

import (
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

var messageTests = []test{
	{"Message/ChannelRoundTrip", testMessageChannelRoundTrip},
	{"Message/DirectRoundTrip", testMessageDirectRoundTrip},
	{"Message/NotFound", testMessageNotFound},
	{"Message/IDsIncrease", testMessageIDsIncrease},
	{"Message/ConversationsConcurrent", testMessageConversationsConcurrent},
	{"Message/SubscriptionBounds", testMessageSubscriptionBounds},
	{"Message/ReadRanges", testMessageReadRanges},
	{"Message/Window", testMessageWindow},
	{"Message/WindowState", testMessageWindowState},
	{"Message/Search", testMessageSearch},
	{"Message/StateFilters", testMessageStateFilters},
	{"Message/TopicSenders", testMessageTopicSenders},
	{"Message/NegatedAndTopicFilters", testMessageNegatedFilters},
	{"Message/StarredAndRecentDirect", testMessageStarredAndRecentDirect},
}

// The registration snapshot's starred messages and recent direct
// conversations.
func testMessageStarredAndRecentDirect(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	bob := newUser(t, s, realm.ID, "bob@example.com")
	carol := newUser(t, s, realm.ID, "carol@example.com")
	pair, err := s.DirectConversation(ctx, realm.ID, []int64{alice.ID, bob.ID})
	require.NoError(t, err)
	group, err := s.DirectConversation(ctx, realm.ID, []int64{alice.ID, bob.ID, carol.ID})
	require.NoError(t, err)
	dm := func(conv int64, aliceFlags int64, others ...int64) int64 {
		m := &storage.Message{RealmID: realm.ID, SenderID: bob.ID, ConversationID: &conv, Content: "x", RenderedContent: "<p>x</p>", DateSent: 1}
		readers := []storage.UserMessage{{UserID: alice.ID, Flags: storage.FlagPrivate | aliceFlags}}
		for _, o := range others {
			readers = append(readers, storage.UserMessage{UserID: o, Flags: storage.FlagPrivate})
		}
		require.NoError(t, s.CreateMessage(ctx, m, readers))
		return m.ID
	}
	m1 := dm(pair, storage.FlagStarred, bob.ID)
	m2 := dm(group, 0, bob.ID, carol.ID)
	m3 := dm(pair, storage.FlagStarred|storage.FlagRead, bob.ID)
	other := newRealm(t, s, "other")
	stranger := newUser(t, s, other.ID, "alice@example.com")

	starred, err := s.ListFlaggedMessageIDs(ctx, realm.ID, alice.ID, storage.FlagStarred)
	require.NoError(t, err)
	assert.Equal(t, []int64{m1, m3}, starred)
	none, err := s.ListFlaggedMessageIDs(ctx, other.ID, stranger.ID, storage.FlagStarred)
	require.NoError(t, err)
	assert.Equal(t, []int64{}, none)

	recent, err := s.ListRecentDirectMessages(ctx, realm.ID, alice.ID, 10)
	require.NoError(t, err)
	assert.Equal(t, []storage.DirectMessageRef{{MessageID: m3, ConversationID: pair}, {MessageID: m2, ConversationID: group}, {MessageID: m1, ConversationID: pair}}, recent)
	recent, err = s.ListRecentDirectMessages(ctx, realm.ID, carol.ID, 10)
	require.NoError(t, err)
	assert.Equal(t, []storage.DirectMessageRef{{MessageID: m2, ConversationID: group}}, recent)
	recent, err = s.ListRecentDirectMessages(ctx, realm.ID, alice.ID, 1)
	require.NoError(t, err)
	assert.Equal(t, []storage.DirectMessageRef{{MessageID: m3, ConversationID: pair}}, recent, "the newest first, up to the limit")
}

// Negated filters keep the other kind of message (a channel condition is
// false for a direct message, not unknown); followed and muted topics and
// muted channels follow the reader's settings.
func testMessageNegatedFilters(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	bob := newUser(t, s, realm.ID, "bob@example.com")
	c, d := newStream(t, s, realm.ID, "c"), newStream(t, s, realm.ID, "d")
	private := &storage.Stream{RealmID: realm.ID, Name: "p", InviteOnly: true}
	web := &storage.Stream{RealmID: realm.ID, Name: "w", IsWebPublic: true, HistoryPublicToSubscribers: true}
	require.NoError(t, s.CreateStream(ctx, private))
	require.NoError(t, s.CreateStream(ctx, web))
	for _, ch := range []int64{c.ID, d.ID, private.ID} {
		require.NoError(t, s.Subscribe(ctx, &storage.Subscription{RealmID: realm.ID, UserID: alice.ID, StreamID: ch}, 1))
	}
	conv, err := s.DirectConversation(ctx, realm.ID, []int64{alice.ID, bob.ID})
	require.NoError(t, err)
	create := func(stream *storage.Stream, topic, content string) int64 {
		m := &storage.Message{RealmID: realm.ID, SenderID: bob.ID, Topic: topic, Content: content, RenderedContent: content}
		var readers []storage.UserMessage
		if stream == nil {
			m.ConversationID = &conv
			readers = []storage.UserMessage{{UserID: alice.ID, Flags: storage.FlagPrivate}}
		} else {
			m.StreamID = &stream.ID
		}
		require.NoError(t, s.CreateMessage(ctx, m, readers))
		return m.ID
	}
	cFollowed := create(c, "Plans", "apples")
	cMuted := create(c, "noise", "pears")
	dMutedChannel := create(d, "other", "apples")
	dUnmuted := create(d, "kept", "plums")
	dm := create(nil, "", "apples")
	pMsg := create(private, "x", "figs")
	wMsg := create(web, "x", "figs")
	for _, ut := range []storage.UserTopic{{StreamID: c.ID, TopicName: "PLANS", VisibilityPolicy: 3},
		{StreamID: c.ID, TopicName: "Noise", VisibilityPolicy: 1}, {StreamID: d.ID, TopicName: "kept", VisibilityPolicy: 2}} {
		ut.RealmID, ut.UserID, ut.LastUpdated = realm.ID, alice.ID, 1
		require.NoError(t, s.SetUserTopic(ctx, &ut))
	}
	sub, err := s.GetSubscription(ctx, realm.ID, alice.ID, d.ID)
	require.NoError(t, err)
	sub.IsMuted = true
	require.NoError(t, s.UpdateSubscription(ctx, sub, "is_muted"))

	get := func(sc storage.MessageScope, f storage.MessageFilter) []int64 {
		t.Helper()
		older, _, err := s.ListMessageWindow(ctx, storage.MessageWindow{RealmID: realm.ID, UserID: alice.ID,
			Scope: sc, Filter: f, Anchor: 1 << 62, Before: 100})
		require.NoError(t, err)
		out := []int64{}
		for _, m := range older {
			out = append(out, m.ID)
		}
		return out
	}
	all := storage.MessageScope{FullChannels: []int64{c.ID, d.ID, private.ID, web.ID}, Direct: true}
	not := func(f storage.MessageFilter) storage.MessageFilter {
		return storage.MessageFilter{Not: []storage.MessageFilter{f}}
	}
	assert.Equal(t, []int64{cFollowed}, get(all, storage.MessageFilter{Followed: true}))
	assert.Equal(t, []int64{cMuted, dMutedChannel}, get(all, storage.MessageFilter{Muted: true}), "kept was unmuted in the muted channel")
	assert.Equal(t, []int64{cFollowed, dUnmuted, dm, pMsg, wMsg}, get(all, not(storage.MessageFilter{Muted: true})), "in:home keeps direct messages")
	assert.Equal(t, []int64{cMuted, dMutedChannel, dUnmuted, dm, pMsg, wMsg}, get(all, not(storage.MessageFilter{Followed: true})))
	assert.Equal(t, []int64{dMutedChannel, dUnmuted, dm, pMsg, wMsg}, get(all, not(storage.MessageFilter{StreamID: &c.ID})))
	topic := "plans"
	assert.Equal(t, []int64{cMuted, dMutedChannel, dUnmuted, dm, pMsg, wMsg}, get(all, not(storage.MessageFilter{Topic: &topic})))
	assert.Equal(t, []int64{cFollowed, cMuted, dMutedChannel, dUnmuted, pMsg, wMsg}, get(all, not(storage.MessageFilter{ConversationID: &conv})))
	assert.Equal(t, []int64{cFollowed, cMuted, dMutedChannel, dUnmuted, pMsg, wMsg}, get(all, not(storage.MessageFilter{IncludingUserIDs: []int64{bob.ID}})))
	assert.Equal(t, []int64{cMuted, dUnmuted, pMsg, wMsg}, get(all, not(storage.MessageFilter{Search: "apples"})))
	assert.Equal(t, []int64{cFollowed, dm}, get(all, storage.MessageFilter{Search: "apples", Not: []storage.MessageFilter{{StreamID: &d.ID}}}),
		"a search with a negation beside it")
	assert.Equal(t, []int64{cFollowed, cMuted, dMutedChannel, dUnmuted, wMsg}, get(all, storage.MessageFilter{PublicChannelsOnly: true}),
		"the private channel is left out")
	assert.Equal(t, []int64{wMsg}, get(all, storage.MessageFilter{WebPublicChannelsOnly: true}))
	assert.Equal(t, []int64{cFollowed, cMuted, dMutedChannel, dUnmuted, dm, pMsg}, get(all, not(storage.MessageFilter{WebPublicChannelsOnly: true})))
	assert.Equal(t, []int64{cFollowed, cMuted, dMutedChannel, dUnmuted, wMsg}, get(storage.MessageScope{PublicChannels: true}, storage.MessageFilter{}),
		"the public channels' history, not the private one's, nor direct messages")
	assert.Equal(t, []int64{dm}, get(all, storage.MessageFilter{Not: []storage.MessageFilter{{ChannelOnly: true}, {IDs: []int64{}}}}),
		"several negations; the negation of nothing is everything")
}

func testMessageTopicSenders(t *testing.T, s storage.Store) {
	ctx := t.Context()
	r := newRealm(t, s, "a")
	u, v, w := newUser(t, s, r.ID, "u@a"), newUser(t, s, r.ID, "v@a"), newUser(t, s, r.ID, "w@a")
	a := &storage.Stream{RealmID: r.ID, Name: "a"}
	b := &storage.Stream{RealmID: r.ID, Name: "b"}
	require.NoError(t, s.CreateStream(ctx, a))
	require.NoError(t, s.CreateStream(ctx, b))
	send := func(sender, stream int64, topic string) {
		m := &storage.Message{RealmID: r.ID, SenderID: sender, StreamID: &stream, Topic: topic, Content: "x", RenderedContent: "<p>x</p>"}
		require.NoError(t, s.CreateMessage(ctx, m, nil))
	}
	send(w.ID, a.ID, "Straße")
	send(u.ID, a.ID, "STRAßE")
	send(w.ID, a.ID, "straße")
	send(v.ID, a.ID, "other")
	send(v.ID, b.ID, "straße")
	got, err := s.TopicSenders(ctx, r.ID, a.ID, "straße")
	require.NoError(t, err)
	assert.Equal(t, []int64{u.ID, w.ID}, got, "case-insensitive topic, this channel only, each sender once")
	got, err = s.TopicSenders(ctx, r.ID, a.ID, "none")
	require.NoError(t, err)
	assert.Equal(t, []int64{}, got)
}

// post stores a plain channel message from sender and returns its ID.
func post(t *testing.T, s storage.Store, realmID, senderID, streamID int64) int64 {
	t.Helper()
	return postTopic(t, s, realmID, senderID, streamID, "t", false)
}

func testMessageChannelRoundTrip(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	bob := newUser(t, s, realm.ID, "bob@example.com")
	c := newStream(t, s, realm.ID, "general")

	m := &storage.Message{
		RealmID: realm.ID, SenderID: alice.ID, StreamID: &c.ID, Topic: "Ünïcødé 'lunch' \"x\"",
		Content: "@**bob** **hi**", RenderedContent: "<p>...</p>", DateSent: 1_700_000_123, SendingClient: "website",
		HasLink: true, HasImage: true, HasAttachment: true, IsMeMessage: true, StreamWildcard: true, TopicWildcard: true,
	}
	readers := []storage.UserMessage{{UserID: bob.ID, Flags: storage.FlagMentioned}, {UserID: alice.ID, Flags: storage.FlagRead | storage.FlagStarred}}
	require.NoError(t, s.CreateMessage(ctx, m, readers))
	require.NotZero(t, m.ID)
	assert.Equal(t, storage.UserMessage{RealmID: realm.ID, UserID: bob.ID, MessageID: m.ID, Flags: storage.FlagMentioned}, readers[0], "MessageID and RealmID set")

	got, err := s.GetMessage(ctx, realm.ID, m.ID)
	require.NoError(t, err)
	assert.Equal(t, *m, *got)

	rows, err := s.ListUserMessages(ctx, realm.ID, bob.ID, []int64{m.ID, m.ID, 999999})
	require.NoError(t, err)
	assert.Equal(t, []storage.UserMessage{readers[0]}, rows)
	rows, err = s.ListUserMessages(ctx, realm.ID, alice.ID, []int64{m.ID})
	require.NoError(t, err)
	assert.Equal(t, []storage.UserMessage{readers[1]}, rows)
	carol := newUser(t, s, realm.ID, "carol@example.com")
	rows, err = s.ListUserMessages(ctx, realm.ID, carol.ID, []int64{m.ID})
	require.NoError(t, err)
	assert.Empty(t, rows, "no row where the state is the default")
}

func testMessageDirectRoundTrip(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	bob := newUser(t, s, realm.ID, "bob@example.com")

	conv, err := s.DirectConversation(ctx, realm.ID, []int64{bob.ID, alice.ID, bob.ID})
	require.NoError(t, err)
	again, err := s.DirectConversation(ctx, realm.ID, []int64{alice.ID, bob.ID})
	require.NoError(t, err)
	assert.Equal(t, conv, again, "one conversation per set of participants")
	self, err := s.DirectConversation(ctx, realm.ID, []int64{alice.ID})
	require.NoError(t, err)
	assert.NotEqual(t, conv, self)
	members, err := s.ConversationMembers(ctx, realm.ID, conv)
	require.NoError(t, err)
	assert.Equal(t, []int64{alice.ID, bob.ID}, members)
	found, err := s.FindDirectConversation(ctx, realm.ID, []int64{bob.ID, alice.ID})
	require.NoError(t, err)
	assert.Equal(t, conv, found)
	carol := newUser(t, s, realm.ID, "carol@example.com")
	_, err = s.FindDirectConversation(ctx, realm.ID, []int64{alice.ID, carol.ID})
	assert.ErrorIs(t, err, storage.ErrNotFound, "not created by looking")
	_, err = s.FindDirectConversation(ctx, realm.ID, []int64{alice.ID, carol.ID})
	assert.ErrorIs(t, err, storage.ErrNotFound)
	members, err = s.ConversationMembers(ctx, realm.ID, 999999)
	require.NoError(t, err)
	assert.Empty(t, members)
	byConv, err := s.ConversationMembersOf(ctx, realm.ID, []int64{self, conv, 999999, conv})
	require.NoError(t, err)
	assert.Equal(t, map[int64][]int64{conv: {alice.ID, bob.ID}, self: {alice.ID}}, byConv)

	m := &storage.Message{RealmID: realm.ID, SenderID: alice.ID, ConversationID: &conv, Content: "psst",
		RenderedContent: "<p>psst</p>", DateSent: 1_700_000_000}
	readers := []storage.UserMessage{
		{UserID: alice.ID, Flags: storage.FlagPrivate | storage.FlagRead},
		{UserID: bob.ID, Flags: storage.FlagPrivate},
	}
	require.NoError(t, s.CreateMessage(ctx, m, readers))
	got, err := s.GetMessage(ctx, realm.ID, m.ID)
	require.NoError(t, err)
	assert.Equal(t, *m, *got)
	assert.Nil(t, got.StreamID)
	rows, err := s.ListUserMessages(ctx, realm.ID, bob.ID, []int64{m.ID})
	require.NoError(t, err)
	assert.Equal(t, []storage.UserMessage{readers[1]}, rows)
}

func testMessageNotFound(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm, other := newRealm(t, s, "acme"), newRealm(t, s, "other")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	stranger := newUser(t, s, other.ID, "x@example.com")
	c := newStream(t, s, realm.ID, "general")
	far := newStream(t, s, other.ID, "far")
	conv, err := s.DirectConversation(ctx, realm.ID, []int64{alice.ID})
	require.NoError(t, err)

	_, err = s.DirectConversation(ctx, realm.ID, []int64{alice.ID, stranger.ID})
	assert.ErrorIs(t, err, storage.ErrNotFound, "a participant of another realm")
	_, err = s.DirectConversation(ctx, realm.ID, []int64{alice.ID, 999999})
	assert.ErrorIs(t, err, storage.ErrNotFound, "a missing participant")

	for name, m := range map[string]*storage.Message{
		"sender of another realm":       {RealmID: realm.ID, SenderID: stranger.ID, StreamID: &c.ID},
		"missing sender":                {RealmID: realm.ID, SenderID: 999999, StreamID: &c.ID},
		"channel of another realm":      {RealmID: realm.ID, SenderID: alice.ID, StreamID: &far.ID},
		"missing conversation":          {RealmID: realm.ID, SenderID: alice.ID, ConversationID: ptr(int64(999999))},
		"conversation of another realm": {RealmID: other.ID, SenderID: stranger.ID, ConversationID: &conv},
	} {
		assert.ErrorIs(t, s.CreateMessage(ctx, m, nil), storage.ErrNotFound, name)
		assert.Zero(t, m.ID, name)
	}
	// A reader of another realm fails the whole message.
	m := &storage.Message{RealmID: realm.ID, SenderID: alice.ID, StreamID: &c.ID}
	assert.ErrorIs(t, s.CreateMessage(ctx, m, []storage.UserMessage{{UserID: stranger.ID, Flags: storage.FlagMentioned}}), storage.ErrNotFound)
	max, err := s.MaxMessageID(ctx)
	require.NoError(t, err)
	assert.Zero(t, max, "nothing was written")

	id := post(t, s, realm.ID, alice.ID, c.ID)
	_, err = s.GetMessage(ctx, other.ID, id)
	assert.ErrorIs(t, err, storage.ErrNotFound, "another realm's message")
	_, err = s.GetMessage(ctx, realm.ID, id+1)
	assert.ErrorIs(t, err, storage.ErrNotFound)
	rows, err := s.ListUserMessages(ctx, other.ID, alice.ID, []int64{id})
	require.NoError(t, err)
	assert.Empty(t, rows)
}

func testMessageIDsIncrease(t *testing.T, s storage.Store) {
	ctx := t.Context()
	max, err := s.MaxMessageID(ctx)
	require.NoError(t, err)
	assert.Zero(t, max, "no messages")
	a, b := newRealm(t, s, "a"), newRealm(t, s, "b")
	ua, ub := newUser(t, s, a.ID, "u@a"), newUser(t, s, b.ID, "u@b")
	ca, cb := newStream(t, s, a.ID, "c"), newStream(t, s, b.ID, "c")
	var last int64
	for i := range 6 {
		var id int64
		if i%2 == 0 {
			id = post(t, s, a.ID, ua.ID, ca.ID)
		} else {
			id = post(t, s, b.ID, ub.ID, cb.ID)
		}
		assert.Greater(t, id, last, "IDs increase across realms")
		last = id
		max, err := s.MaxMessageID(ctx)
		require.NoError(t, err)
		assert.Equal(t, id, max)
	}
}

// Concurrent first messages between the same people share one
// conversation.
func testMessageConversationsConcurrent(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	bob := newUser(t, s, realm.ID, "bob@example.com")
	ids := make([]int64, 8)
	errs := make([]error, 8)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() { ids[i], errs[i] = s.DirectConversation(ctx, realm.ID, []int64{alice.ID, bob.ID}) })
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	for _, id := range ids {
		assert.Equal(t, ids[0], id)
	}
	members, err := s.ConversationMembers(ctx, realm.ID, ids[0])
	require.NoError(t, err)
	assert.Equal(t, []int64{alice.ID, bob.ID}, members)
}

// Subscription periods start and end at the newest message ID at the
// time, read by the store.
func testMessageSubscriptionBounds(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	bob := newUser(t, s, realm.ID, "bob@example.com")
	c := newStream(t, s, realm.ID, "general")

	subscribe(t, s, realm.ID, bob.ID, c.ID, 100)
	m1 := post(t, s, realm.ID, alice.ID, c.ID)
	require.NoError(t, s.InTx(ctx, func(tx storage.Store) error {
		return tx.Unsubscribe(ctx, realm.ID, bob.ID, c.ID, 200)
	}))
	m2 := post(t, s, realm.ID, alice.ID, c.ID)
	subscribe(t, s, realm.ID, bob.ID, c.ID, 300)
	assert.Equal(t, []storage.SubscriptionPeriod{
		closedPeriod(realm.ID, bob.ID, c.ID, 0, 100, m1, 200),
		openPeriod(realm.ID, bob.ID, c.ID, m2, 300),
	}, withoutIDs(t, listPeriods(t, s, realm.ID, bob.ID, c.ID)), "bob got m1 (0 < m1 <= m1), not m2, and what comes after m2")
}

// Read ranges merge when no message of their channel separates them.
func testMessageReadRanges(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	u := newUser(t, s, realm.ID, "alice@example.com")
	other := newUser(t, s, realm.ID, "bob@example.com")
	c, d := newStream(t, s, realm.ID, "c"), newStream(t, s, realm.ID, "d")
	var m []int64 // messages of c, with one of d between each two
	for range 6 {
		m = append(m, post(t, s, realm.ID, u.ID, c.ID))
		post(t, s, realm.ID, u.ID, d.ID)
	}
	ranges := func() [][2]int64 {
		t.Helper()
		rs, err := s.ListReadRanges(ctx, realm.ID, u.ID, c.ID, 0, m[5]+100)
		require.NoError(t, err)
		out := [][2]int64{}
		for _, r := range rs {
			assert.Equal(t, storage.ReadRange{RealmID: realm.ID, UserID: u.ID, StreamID: c.ID, FirstID: r.FirstID, LastID: r.LastID}, r)
			out = append(out, [2]int64{r.FirstID, r.LastID})
		}
		return out
	}
	mark := func(first, last int64) {
		t.Helper()
		require.NoError(t, s.AddReadRange(ctx, realm.ID, u.ID, c.ID, first, last))
	}
	mark(m[1], m[1])
	assert.Equal(t, [][2]int64{{m[1], m[1]}}, ranges())
	mark(m[2], m[2])
	assert.Equal(t, [][2]int64{{m[1], m[2]}}, ranges(), "d's message between does not separate them")
	mark(m[4], m[4])
	assert.Equal(t, [][2]int64{{m[1], m[2]}, {m[4], m[4]}}, ranges(), "m3 is unread between")
	mark(m[2], m[2])
	assert.Equal(t, [][2]int64{{m[1], m[2]}, {m[4], m[4]}}, ranges(), "marking again changes nothing")
	mark(m[3], m[3])
	assert.Equal(t, [][2]int64{{m[1], m[4]}}, ranges(), "the gap closed: one range")
	mark(m[0], m[0])
	mark(m[5], m[5])
	assert.Equal(t, [][2]int64{{m[0], m[5]}}, ranges())

	rs, err := s.ListReadRanges(ctx, realm.ID, u.ID, c.ID, m[5]+1, m[5]+10)
	require.NoError(t, err)
	assert.Empty(t, rs, "no range intersects what comes after")
	rs, err = s.ListReadRanges(ctx, realm.ID, other.ID, c.ID, 0, m[5])
	require.NoError(t, err)
	assert.Empty(t, rs, "other users apart")
	rs, err = s.ListReadRanges(ctx, realm.ID, u.ID, d.ID, 0, m[5])
	require.NoError(t, err)
	assert.Empty(t, rs, "other channels apart")
	dm := post(t, s, realm.ID, u.ID, d.ID)
	require.NoError(t, s.AddReadRange(ctx, realm.ID, u.ID, d.ID, dm, dm))
	rs, err = s.ListReadRangesOf(ctx, realm.ID, u.ID, []int64{d.ID, c.ID}, m[1], dm)
	require.NoError(t, err)
	require.Len(t, rs, 2, "both channels, by channel")
	assert.Equal(t, [3]int64{c.ID, m[0], m[5]}, [3]int64{rs[0].StreamID, rs[0].FirstID, rs[0].LastID})
	assert.Equal(t, [3]int64{d.ID, dm, dm}, [3]int64{rs[1].StreamID, rs[1].FirstID, rs[1].LastID})
	rs, err = s.ListReadRangesOf(ctx, realm.ID, u.ID, []int64{d.ID}, m[0], m[5])
	require.NoError(t, err)
	assert.Empty(t, rs, "d's range lies after")

	// A new message after the range is unread until marked; marking it
	// extends the range.
	next := post(t, s, realm.ID, u.ID, c.ID)
	mark(next, next)
	assert.Equal(t, [][2]int64{{m[0], next}}, ranges())
	assert.Error(t, s.AddReadRange(ctx, realm.ID, u.ID, c.ID, 5, 4), "an empty range")

	// ExtendReadRange (a sender reading their own new message) gives what
	// AddReadRange gives, in a transaction as the write path uses it.
	extend := func(id int64) {
		t.Helper()
		require.NoError(t, s.InTx(ctx, func(tx storage.Store) error {
			return tx.ExtendReadRange(ctx, realm.ID, u.ID, c.ID, id)
		}))
	}
	n1 := post(t, s, realm.ID, u.ID, c.ID)
	extend(n1)
	assert.Equal(t, [][2]int64{{m[0], n1}}, ranges(), "grows the range reaching its predecessor")
	post(t, s, realm.ID, other.ID, c.ID) // unread by u
	post(t, s, realm.ID, u.ID, d.ID)
	n2 := post(t, s, realm.ID, u.ID, c.ID)
	extend(n2)
	assert.Equal(t, [][2]int64{{m[0], n1}, {n2, n2}}, ranges(), "an unread message between: a range of its own")
	n3 := post(t, s, realm.ID, u.ID, c.ID)
	extend(n3)
	assert.Equal(t, [][2]int64{{m[0], n1}, {n2, n3}}, ranges())
	// A first message in a channel nobody read.
	e := newStream(t, s, realm.ID, "e")
	first := post(t, s, realm.ID, u.ID, e.ID)
	require.NoError(t, s.InTx(ctx, func(tx storage.Store) error { return tx.ExtendReadRange(ctx, realm.ID, u.ID, e.ID, first) }))
	rs, err = s.ListReadRanges(ctx, realm.ID, u.ID, e.ID, 0, first)
	require.NoError(t, err)
	require.Len(t, rs, 1)
	assert.Equal(t, [2]int64{first, first}, [2]int64{rs[0].FirstID, rs[0].LastID})
}

func testMessageWindow(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm, other := newRealm(t, s, "acme"), newRealm(t, s, "other")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	bob := newUser(t, s, realm.ID, "bob@example.com")
	carol := newUser(t, s, realm.ID, "carol@example.com")
	stranger := newUser(t, s, other.ID, "x@example.com")
	c, d := newStream(t, s, realm.ID, "c"), newStream(t, s, realm.ID, "d")
	far := newStream(t, s, other.ID, "far")
	ab, err := s.DirectConversation(ctx, realm.ID, []int64{alice.ID, bob.ID})
	require.NoError(t, err)
	bc, err := s.DirectConversation(ctx, realm.ID, []int64{bob.ID, carol.ID})
	require.NoError(t, err)
	dm := func(conv, sender int64) int64 {
		members, err := s.ConversationMembers(ctx, realm.ID, conv)
		require.NoError(t, err)
		var readers []storage.UserMessage
		for _, u := range members {
			flags := storage.FlagPrivate
			if u == sender {
				flags |= storage.FlagRead
			}
			readers = append(readers, storage.UserMessage{UserID: u, Flags: flags})
		}
		m := &storage.Message{RealmID: realm.ID, SenderID: sender, ConversationID: &conv, Content: "x", RenderedContent: "x"}
		require.NoError(t, s.CreateMessage(ctx, m, readers))
		return m.ID
	}
	topic := func(stream, sender int64, topic string) int64 {
		m := &storage.Message{RealmID: realm.ID, SenderID: sender, StreamID: &stream, Topic: topic, Content: "x", RenderedContent: "x"}
		require.NoError(t, s.CreateMessage(ctx, m, nil))
		return m.ID
	}
	// c1 d1 ab1 c2 far1 bc1 c3(Lunch) d2 c4(LUNCH, bob) ab2
	c1 := post(t, s, realm.ID, alice.ID, c.ID)
	d1 := post(t, s, realm.ID, alice.ID, d.ID)
	ab1 := dm(ab, alice.ID)
	c2 := post(t, s, realm.ID, alice.ID, c.ID)
	post(t, s, other.ID, stranger.ID, far.ID)
	bc1 := dm(bc, bob.ID)
	c3 := topic(c.ID, alice.ID, "Lunch")
	d2 := post(t, s, realm.ID, alice.ID, d.ID)
	c4 := topic(c.ID, bob.ID, "LUNCH")
	ab2 := dm(ab, bob.ID)
	_ = bc1

	ids := func(ms []storage.Message) []int64 {
		out := []int64{}
		for _, m := range ms {
			out = append(out, m.ID)
		}
		return out
	}
	window := func(w storage.MessageWindow) ([]int64, []int64) {
		t.Helper()
		w.RealmID, w.UserID = realm.ID, alice.ID
		older, newer, err := s.ListMessageWindow(ctx, w)
		require.NoError(t, err)
		return ids(older), ids(newer)
	}
	const newest = int64(1) << 62
	everything := storage.MessageScope{FullChannels: []int64{c.ID, d.ID, far.ID}, Direct: true}

	older, newer := window(storage.MessageWindow{Scope: everything, Anchor: newest, Before: 100})
	assert.Equal(t, []int64{c1, d1, ab1, c2, c3, d2, c4, ab2}, older, "alice's view: no other realm's channel, not bob and carol's DMs")
	assert.Empty(t, newer)

	older, newer = window(storage.MessageWindow{Scope: everything, Anchor: c2, Before: 2, After: 2})
	assert.Equal(t, []int64{d1, ab1, c2}, older, "Before+1 messages up to the anchor, ascending")
	assert.Equal(t, []int64{c3, d2, c4}, newer, "After+1 messages after it")
	older, newer = window(storage.MessageWindow{Scope: everything, Anchor: 0, After: 100})
	assert.Empty(t, older)
	assert.Len(t, newer, 8)

	// IDs only: the same messages, nothing else read.
	o, n, err := s.ListMessageWindow(ctx, storage.MessageWindow{RealmID: realm.ID, UserID: alice.ID, Scope: everything,
		Anchor: c2, Before: 2, After: 2, IDsOnly: true})
	require.NoError(t, err)
	assert.Equal(t, []int64{d1, ab1, c2}, ids(o))
	assert.Equal(t, []int64{c3, d2, c4}, ids(n))
	assert.Equal(t, storage.Message{ID: c3}, n[0], "only the ID")
	// And the rows by ID, of this realm only.
	byID, err := s.GetMessagesByID(ctx, realm.ID, []int64{c4, ab1, c4, 999999})
	require.NoError(t, err)
	assert.Equal(t, []int64{ab1, c4}, ids(byID))
	assert.Equal(t, "LUNCH", byID[1].Topic)
	assert.Equal(t, bob.ID, byID[1].SenderID)
	byID, err = s.GetMessagesByID(ctx, other.ID, []int64{c4})
	require.NoError(t, err)
	assert.Empty(t, byID)

	// Spans: what a late subscriber received.
	older, _ = window(storage.MessageWindow{Scope: storage.MessageScope{Spans: []storage.ChannelSpan{
		{StreamID: c.ID, After: c1, Through: &c3}, {StreamID: d.ID, After: d1}}}, Anchor: newest, Before: 100})
	assert.Equal(t, []int64{c2, c3, d2}, older)

	// Filters.
	lunch := "lunch"
	older, _ = window(storage.MessageWindow{Scope: everything, Filter: storage.MessageFilter{StreamID: &c.ID, Topic: &lunch}, Anchor: newest, Before: 100})
	assert.Equal(t, []int64{c3, c4}, older, "topics compare case-insensitively")
	older, _ = window(storage.MessageWindow{Scope: everything, Filter: storage.MessageFilter{SenderID: &bob.ID}, Anchor: newest, Before: 100})
	assert.Equal(t, []int64{c4, ab2}, older)
	older, _ = window(storage.MessageWindow{Scope: everything, Filter: storage.MessageFilter{DirectOnly: true}, Anchor: newest, Before: 100})
	assert.Equal(t, []int64{ab1, ab2}, older)
	older, _ = window(storage.MessageWindow{Scope: everything, Filter: storage.MessageFilter{ChannelOnly: true, StreamID: &d.ID}, Anchor: newest, Before: 100})
	assert.Equal(t, []int64{d1, d2}, older)
	older, _ = window(storage.MessageWindow{Scope: everything, Filter: storage.MessageFilter{ConversationID: &ab}, Anchor: newest, Before: 100})
	assert.Equal(t, []int64{ab1, ab2}, older)
	older, _ = window(storage.MessageWindow{Scope: storage.MessageScope{}, Anchor: newest, Before: 100})
	assert.Empty(t, older, "an empty scope matches nothing")
	older, _ = window(storage.MessageWindow{Scope: everything, Filter: storage.MessageFilter{NotStreamIDs: []int64{c.ID}}, Anchor: newest, Before: 100})
	assert.Equal(t, []int64{d1, ab1, d2, ab2}, older, "other channels and direct messages")
	older, _ = window(storage.MessageWindow{Scope: everything, Filter: storage.MessageFilter{NotSenderIDs: []int64{alice.ID}}, Anchor: newest, Before: 100})
	assert.Equal(t, []int64{c4, ab2}, older)

	// First unread: channel messages no range covers, direct messages
	// whose row lacks the read flag; whole channels do not count.
	spans := storage.MessageScope{Spans: []storage.ChannelSpan{{StreamID: c.ID}, {StreamID: d.ID}}, Direct: true}
	firstUnread := func(scope storage.MessageScope, f storage.MessageFilter) int64 {
		t.Helper()
		id, err := s.FirstUnreadMessage(ctx, storage.MessageWindow{RealmID: realm.ID, UserID: alice.ID, Scope: scope, Filter: f})
		require.NoError(t, err)
		return id
	}
	assert.Equal(t, c1, firstUnread(spans, storage.MessageFilter{}))
	assert.Zero(t, firstUnread(storage.MessageScope{FullChannels: []int64{c.ID}}, storage.MessageFilter{}), "never received: never unread")
	require.NoError(t, s.AddReadRange(ctx, realm.ID, alice.ID, c.ID, c1, c2))
	require.NoError(t, s.AddReadRange(ctx, realm.ID, alice.ID, d.ID, d1, d1))
	assert.Equal(t, c3, firstUnread(spans, storage.MessageFilter{}), "alice's own DM ab1 is read")
	assert.Equal(t, c3, firstUnread(spans, storage.MessageFilter{ChannelOnly: true}))
	assert.Equal(t, ab2, firstUnread(spans, storage.MessageFilter{DirectOnly: true}), "bob's DM is unread")
	assert.Equal(t, d2, firstUnread(spans, storage.MessageFilter{StreamID: &d.ID}))
	require.NoError(t, s.AddReadRange(ctx, realm.ID, alice.ID, c.ID, c3, c4))
	require.NoError(t, s.AddReadRange(ctx, realm.ID, alice.ID, d.ID, d2, d2))
	assert.Zero(t, firstUnread(spans, storage.MessageFilter{ChannelOnly: true}), "all read")
	assert.Equal(t, ab2, firstUnread(spans, storage.MessageFilter{}))
	assert.Equal(t, ab2, firstUnread(spans, storage.MessageFilter{SenderID: &bob.ID}))
	assert.Zero(t, firstUnread(spans, storage.MessageFilter{SenderID: &carol.ID}))

	periods, err := s.ListUserPeriods(ctx, realm.ID, alice.ID)
	require.NoError(t, err)
	assert.Empty(t, periods)
	subscribe(t, s, realm.ID, alice.ID, d.ID, 1)
	subscribe(t, s, realm.ID, alice.ID, c.ID, 2)
	periods, err = s.ListUserPeriods(ctx, realm.ID, alice.ID)
	require.NoError(t, err)
	require.Len(t, periods, 2)
	assert.Equal(t, c.ID, periods[0].StreamID, "by channel")
	assert.Equal(t, ab2, periods[0].StartMessageID)
}

// Search: every word and quoted phrase, in the topic or the text of the
// content, ignoring case (non-ASCII letters too), with English stemming.
func testMessageSearch(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	c := newStream(t, s, realm.ID, "c")
	msg := func(topic, html string) int64 {
		m := &storage.Message{RealmID: realm.ID, SenderID: alice.ID, StreamID: &c.ID, Topic: topic, Content: "x", RenderedContent: html}
		require.NoError(t, s.CreateMessage(ctx, m, nil))
		return m.ID
	}
	lunch := msg("Lunch plans", "<p>We are <strong>running</strong> late for the café</p>")
	deploy := msg("Deploy", "<p>The deploy is done, lunch later</p>")
	ete := msg("ÉTÉ", "<p>Summer &amp; sun in <em>Zürich</em></p>")
	search := func(q string) []int64 {
		t.Helper()
		older, _, err := s.ListMessageWindow(ctx, storage.MessageWindow{RealmID: realm.ID, UserID: alice.ID,
			Scope: storage.MessageScope{FullChannels: []int64{c.ID}}, Filter: storage.MessageFilter{Search: q}, Anchor: 1 << 62, Before: 100})
		require.NoError(t, err)
		out := []int64{}
		for _, m := range older {
			out = append(out, m.ID)
		}
		return out
	}
	assert.Equal(t, []int64{lunch, deploy}, search("lunch"), "topic or content")
	assert.Equal(t, []int64{lunch}, search("lunch late"), "every word")
	assert.Equal(t, []int64{lunch}, search("LUNCH PLANS"))
	assert.Equal(t, []int64{lunch}, search("run"), "stemming: running")
	assert.Equal(t, []int64{deploy}, search(`"deploy is done"`), "a phrase")
	assert.Empty(t, search(`"done deploy"`), "a phrase keeps its order")
	assert.Equal(t, []int64{ete}, search("été zürich"), "non-ASCII letters, any case")
	assert.Equal(t, []int64{ete}, search("ZÜRICH"))
	assert.Equal(t, []int64{ete}, search("sun"))
	assert.Empty(t, search("strong"), "markup is not text")
	assert.Empty(t, search("lunch OR nothing"), "no query syntax: OR is a word")
	assert.Empty(t, search(`-*()"`), "nothing searchable")
	assert.Equal(t, []int64{lunch}, search(`café "lunch`), "an unbalanced quote")
}

// The reader's state filters: starred and mentioned rows, channel
// wildcards, unread by ranges and rows; resolved topics; content facts.
func testMessageStateFilters(t *testing.T, s storage.Store) {
	ctx := t.Context()
	realm := newRealm(t, s, "acme")
	alice := newUser(t, s, realm.ID, "alice@example.com")
	bob := newUser(t, s, realm.ID, "bob@example.com")
	c := newStream(t, s, realm.ID, "c")
	conv, err := s.DirectConversation(ctx, realm.ID, []int64{alice.ID, bob.ID})
	require.NoError(t, err)
	create := func(m storage.Message, readers ...storage.UserMessage) int64 {
		m.RealmID, m.SenderID, m.Content, m.RenderedContent = realm.ID, bob.ID, "x", "x"
		if m.ConversationID == nil {
			m.StreamID = &c.ID
		}
		require.NoError(t, s.CreateMessage(ctx, &m, readers))
		return m.ID
	}
	starred := create(storage.Message{Topic: "t"}, storage.UserMessage{UserID: alice.ID, Flags: storage.FlagStarred})
	mentioned := create(storage.Message{Topic: "t", HasLink: true}, storage.UserMessage{UserID: alice.ID, Flags: storage.FlagMentioned})
	wildcard := create(storage.Message{Topic: "✔ done", StreamWildcard: true, HasImage: true})
	read := create(storage.Message{Topic: "t", HasAttachment: true})
	create(storage.Message{ConversationID: &conv}, storage.UserMessage{UserID: alice.ID, Flags: storage.FlagPrivate | storage.FlagRead})
	dmUnread := create(storage.Message{ConversationID: &conv}, storage.UserMessage{UserID: alice.ID, Flags: storage.FlagPrivate})
	require.NoError(t, s.AddReadRange(ctx, realm.ID, alice.ID, c.ID, read, read))
	require.NoError(t, s.AddReadRange(ctx, realm.ID, alice.ID, c.ID, starred, starred))

	get := func(f storage.MessageFilter) []int64 {
		t.Helper()
		older, _, err := s.ListMessageWindow(ctx, storage.MessageWindow{RealmID: realm.ID, UserID: alice.ID,
			Scope: storage.MessageScope{FullChannels: []int64{c.ID}, Direct: true}, Filter: f, Anchor: 1 << 62, Before: 100})
		require.NoError(t, err)
		out := []int64{}
		for _, m := range older {
			out = append(out, m.ID)
		}
		return out
	}
	assert.Equal(t, []int64{starred}, get(storage.MessageFilter{Starred: true}))
	assert.Equal(t, []int64{mentioned, wildcard}, get(storage.MessageFilter{Mentioned: true}))
	assert.Equal(t, []int64{mentioned, wildcard, dmUnread}, get(storage.MessageFilter{Unread: true}))
	assert.Equal(t, []int64{wildcard}, get(storage.MessageFilter{Resolved: true}))
	assert.Equal(t, []int64{mentioned}, get(storage.MessageFilter{HasLink: true}))
	assert.Equal(t, []int64{wildcard}, get(storage.MessageFilter{HasImage: true}))
	assert.Equal(t, []int64{read}, get(storage.MessageFilter{HasAttachment: true}))

	carol := newUser(t, s, realm.ID, "carol@example.com")
	group, err := s.DirectConversation(ctx, realm.ID, []int64{alice.ID, bob.ID, carol.ID})
	require.NoError(t, err)
	alerted := create(storage.Message{ConversationID: &group}, storage.UserMessage{UserID: alice.ID, Flags: storage.FlagPrivate | storage.FlagHasAlertWord})
	assert.Equal(t, []int64{alerted}, get(storage.MessageFilter{Alerted: true}))
	assert.Equal(t, []int64{alerted}, get(storage.MessageFilter{IncludingUserIDs: []int64{carol.ID}}))
	assert.Equal(t, []int64{alerted}, get(storage.MessageFilter{IncludingUserIDs: []int64{bob.ID, carol.ID}}), "each included")
	assert.Len(t, get(storage.MessageFilter{IncludingUserIDs: []int64{bob.ID}}), 3, "the 1:1 conversation's two and the group's")
	assert.Equal(t, []int64{alerted}, get(storage.MessageFilter{GroupDMOnly: true}))
}
