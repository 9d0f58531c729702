package chat_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

func fetch(t *testing.T, h *chattest.Harness, as chattest.User, req chat.GetMessagesRequest) *chat.GetMessagesResponse {
	t.Helper()
	resp, err := h.Service.GetMessages(context.Background(), as.Caller, req)
	require.NoError(t, err)
	checkSchema(t, "GET", "/messages", resp)
	return resp
}

func fetchedIDs(resp *chat.GetMessagesResponse) []int64 {
	out := []int64{}
	for _, m := range resp.Messages {
		out = append(out, m.ID)
	}
	return out
}

// The combined feed: what the reader received, around an anchor, with the
// reference's found_* facts.
func TestGetMessagesWindow(t *testing.T) {
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	carol := h.NewUser(t, chat.RoleMember)
	newChannelBy(t, h, alice, "general", false)
	subscribe(t, h, alice, "general", bob.ID)
	newChannelBy(t, h, carol, "elsewhere", false)

	var m []int64
	for i := range 6 {
		m = append(m, send(t, h, alice, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("general"), Topic: ptr("t"),
			Content: fmt.Sprint(i), ReadBySender: ptr(true)}))
		send(t, h, carol, chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("elsewhere"), Topic: ptr("t"), Content: "not for bob"})
	}
	dm := send(t, h, carol, chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(bob.ID), Content: "psst"})
	feed := append(append([]int64{}, m...), dm)

	all := fetch(t, h, bob, chat.GetMessagesRequest{Anchor: ptr("newest"), NumBefore: ptr(100)})
	assert.Equal(t, feed, fetchedIDs(all), "bob's feed: general and his DM, not carol's channel")
	assert.True(t, all.FoundOldest)
	assert.True(t, all.FoundNewest)
	assert.False(t, all.FoundAnchor)
	assert.Equal(t, int64(10_000_000_000_000_000), *all.Anchor)
	for _, msg := range all.Messages {
		assert.Empty(t, msg.Flags, "unread for bob")
	}
	mine := fetch(t, h, alice, chat.GetMessagesRequest{Anchor: ptr("newest"), NumBefore: ptr(3)})
	assert.Equal(t, m[3:], fetchedIDs(mine))
	assert.False(t, mine.FoundOldest)
	for _, msg := range mine.Messages {
		assert.Equal(t, []string{"read"}, msg.Flags, "read by their sender")
	}

	mid := fetch(t, h, bob, chat.GetMessagesRequest{Anchor: ptr(fmt.Sprint(m[2])), NumBefore: ptr(1), NumAfter: ptr(2)})
	assert.Equal(t, []int64{m[1], m[2], m[3], m[4]}, fetchedIDs(mid))
	assert.True(t, mid.FoundAnchor)
	assert.False(t, mid.FoundOldest)
	assert.False(t, mid.FoundNewest)

	first := fetch(t, h, bob, chat.GetMessagesRequest{Anchor: ptr("oldest"), NumAfter: ptr(2)})
	assert.Equal(t, m[:2], fetchedIDs(first))
	assert.True(t, first.FoundOldest)
	excl := fetch(t, h, bob, chat.GetMessagesRequest{Anchor: ptr(fmt.Sprint(m[2])), NumAfter: ptr(2), IncludeAnchor: ptr(false)})
	assert.Equal(t, []int64{m[3], m[4]}, fetchedIDs(excl))
	assert.False(t, excl.FoundAnchor)
	only := fetch(t, h, bob, chat.GetMessagesRequest{Anchor: ptr(fmt.Sprint(m[2]))})
	assert.Equal(t, []int64{m[2]}, fetchedIDs(only), "no side: the anchor alone")
	assert.Equal(t, feed, fetchedIDs(fetch(t, h, bob, chat.GetMessagesRequest{Anchor: ptr("-5"), NumAfter: ptr(100)})), "a negative anchor is the oldest")
	assert.Equal(t, feed, fetchedIDs(fetch(t, h, bob, chat.GetMessagesRequest{Anchor: ptr("99999999999999999999999"), NumBefore: ptr(100)})), "a huge one the newest")

	// first_unread: bob has read nothing, alice everything she sent.
	fu := fetch(t, h, bob, chat.GetMessagesRequest{Anchor: ptr("first_unread"), NumBefore: ptr(1), NumAfter: ptr(1)})
	assert.Equal(t, m[0], *fu.Anchor)
	assert.Equal(t, []int64{m[0], m[1]}, fetchedIDs(fu))
	fu = fetch(t, h, alice, chat.GetMessagesRequest{UseFirstUnreadAnchor: ptr(true), NumBefore: ptr(1)})
	assert.Equal(t, int64(10_000_000_000_000_000), *fu.Anchor, "nothing unread: the newest end")

	// message_ids: exactly those the reader may read.
	ids := fetch(t, h, bob, chat.GetMessagesRequest{MessageIDs: &[]int64{m[4], dm, m[1], m[1] + 1}})
	assert.Equal(t, []int64{m[1], m[4], dm}, fetchedIDs(ids), "carol's channel message is not in bob's feed")
	assert.Nil(t, ids.Anchor)
}

func TestGetMessagesErrors(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	for _, c := range []struct {
		req chat.GetMessagesRequest
		msg string
	}{
		{chat.GetMessagesRequest{NumBefore: ptr(1)}, "Missing 'anchor' argument."},
		{chat.GetMessagesRequest{Anchor: ptr("latest")}, "Invalid anchor"},
		{chat.GetMessagesRequest{Anchor: ptr("newest"), NumBefore: ptr(4000), NumAfter: ptr(1001)}, "Too many messages requested (maximum 5000)."},
		{chat.GetMessagesRequest{Anchor: ptr("5"), NumBefore: ptr(1), NumAfter: ptr(1), IncludeAnchor: ptr(false)}, "The anchor can only be excluded at an end of the range"},
		{chat.GetMessagesRequest{Anchor: ptr("5"), MessageIDs: &[]int64{1}},
			"Unsupported parameter combination: num_before, num_after, anchor, message_ids, include_anchor, use_first_unread_anchor"},
	} {
		_, err := h.Service.GetMessages(ctx, alice.Caller, c.req)
		requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, c.msg)
	}
	many := make([]int64, 5001)
	_, err := h.Service.GetMessages(ctx, alice.Caller, chat.GetMessagesRequest{MessageIDs: &many})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Too many messages requested (maximum 5000).")
}

func TestGetMessagesNarrows(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	carol := h.NewUser(t, chat.RoleMember)
	newChannelBy(t, h, alice, "design", false)
	newChannelBy(t, h, alice, "ops", false)
	to := func(ch, topic, content string) chat.SendMessageRequest {
		return chat.SendMessageRequest{Type: "channel", To: chat.ToChannel(ch), Topic: &topic, Content: content}
	}
	d1 := send(t, h, alice, to("design", "Colors", "pick a palette"))
	o1 := send(t, h, alice, to("ops", "deploys", "deploy at noon"))
	d2 := send(t, h, alice, to("design", "fonts", "serif or sans"))
	dmAB := send(t, h, alice, chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(bob.ID), Content: "palette question"})
	dmAC := send(t, h, alice, chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(carol.ID), Content: "hi carol"})
	subscribe(t, h, alice, "design", bob.ID)
	d3 := send(t, h, bob, to("design", "colors", "blue please"))

	get := func(as chattest.User, narrow string) []int64 {
		t.Helper()
		return fetchedIDs(fetch(t, h, as, chat.GetMessagesRequest{Anchor: ptr("newest"), NumBefore: ptr(100), Narrow: &narrow}))
	}
	// A channel whose history is shared: bob sees what came before he joined.
	assert.Equal(t, []int64{d1, d2, d3}, get(bob, `[{"operator": "channel", "operand": "design"}]`))
	assert.Equal(t, []int64{d1, d2, d3}, get(bob, `[["stream", "design"]]`), "legacy pairs and the old name")
	assert.Equal(t, []int64{d1, d3}, get(bob, `[{"operator": "channel", "operand": "design"}, {"operator": "topic", "operand": "COLORS"}]`))
	assert.Equal(t, []int64{d3}, get(bob, `[{"operator": "sender", "operand": "`+bob.Email+`"}]`), "bob's feed, by sender")
	assert.Equal(t, []int64{d1, o1, d2, dmAB, dmAC, d3}, get(alice, `[]`))
	assert.Equal(t, []int64{dmAB, dmAC}, get(alice, `[{"operator": "is", "operand": "dm"}]`))
	assert.Equal(t, []int64{dmAB}, get(alice, fmt.Sprintf(`[{"operator": "dm", "operand": [%d]}]`, bob.ID)))
	assert.Equal(t, []int64{dmAB}, get(bob, fmt.Sprintf(`[{"operator": "dm", "operand": "%s"}]`, alice.Email)))
	assert.Empty(t, get(bob, fmt.Sprintf(`[{"operator": "dm", "operand": [%d]}]`, carol.ID)), "no such conversation")
	assert.Equal(t, []int64{d1, dmAB}, get(alice, `[{"operator": "search", "operand": "palette"}]`))
	assert.Equal(t, []int64{o1}, get(bob, `[{"operator": "channels", "operand": "public"}, {"operator": "search", "operand": "deploy"}]`),
		"public channels' history, searched")
	assert.Equal(t, []int64{d2}, get(alice, fmt.Sprintf(`[{"operator": "id", "operand": %d}]`, d2)))
	assert.Empty(t, get(bob, fmt.Sprintf(`[{"operator": "id", "operand": %d}]`, dmAC)), "not bob's")

	// State: what bob has not read (an API client does not mark its own
	// messages read; d1 and d2 came before bob joined, so they are not
	// his to read), and resolved topics.
	assert.Equal(t, []int64{dmAB, d3}, get(bob, `[{"operator": "is", "operand": "unread"}]`))
	assert.Equal(t, []int64{dmAB}, get(bob, `[{"operator": "is", "operand": "unread"}, {"operator": "is", "operand": "dm"}]`))
	resolved := send(t, h, alice, to("design", "✔ fonts", "done"))
	assert.Equal(t, []int64{resolved}, get(alice, `[{"operator": "is", "operand": "resolved"}]`))
	assert.Empty(t, get(alice, `[{"operator": "is", "operand": "starred"}]`), "nothing starred yet")
	assert.Empty(t, get(alice, `[{"operator": "is", "operand": "mentioned"}]`))
	assert.Empty(t, get(alice, `[{"operator": "has", "operand": "image"}]`))

	// DMs including someone; group DMs with someone.
	group := send(t, h, alice, chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(bob.ID, carol.ID), Content: "all three"})
	assert.Equal(t, []int64{dmAB, group}, get(alice, fmt.Sprintf(`[{"operator": "dm-including", "operand": %d}]`, bob.ID)))
	assert.Equal(t, []int64{dmAB, dmAC, group}, get(alice, fmt.Sprintf(`[{"operator": "dm-including", "operand": %d}]`, alice.ID)), "oneself: every DM")
	assert.Equal(t, []int64{group}, get(alice, fmt.Sprintf(`[{"operator": "group-pm-with", "operand": "%s"}]`, carol.Email)))
	assert.Equal(t, []int64{group}, get(carol, fmt.Sprintf(`[{"operator": "dm-including", "operand": %d}]`, bob.ID)))
	assert.Empty(t, get(alice, `[{"operator": "is", "operand": "alerted"}]`))

	// Negations the store serves.
	assert.Equal(t, []int64{o1, dmAB, dmAC, group}, get(alice, `[{"operator": "channel", "operand": "design", "negated": true}]`))
	assert.Equal(t, []int64{d1, o1, d2, d3, resolved}, get(alice, `[{"operator": "is", "operand": "dm", "negated": true}]`))
	assert.Equal(t, []int64{d3}, get(alice, `[{"operator": "sender", "operand": "`+alice.Email+`", "negated": true}]`))

	for _, c := range []struct{ narrow, code, msg string }{
		{`{"a": 1}`, chat.CodeBadRequest, "narrow is not a list"},
		{`[{"operator": "channel", "operand": "nowhere"}]`, "BAD_NARROW", "Invalid narrow operator: unknown channel nowhere"},
		{`[{"operator": "color", "operand": "red"}]`, "BAD_NARROW", "Invalid narrow operator: unknown operator color"},
	} {
		_, err := h.Service.GetMessages(ctx, bob.Caller, chat.GetMessagesRequest{Anchor: ptr("newest"), Narrow: &c.narrow})
		requireError(t, err, chat.KindInvalid, c.code, c.msg)
	}
}

// Topic and channel muting, following, and negations of every kind of
// term, through the narrow language.
func TestGetMessagesMutingAndNegations(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	design := newChannelBy(t, h, alice, "design", false)
	ops := newChannelBy(t, h, alice, "ops", false)
	newChannelBy(t, h, alice, "secret", true)
	to := func(ch, topic, content string) chat.SendMessageRequest {
		return chat.SendMessageRequest{Type: "channel", To: chat.ToChannel(ch), Topic: &topic, Content: content}
	}
	plans := send(t, h, bob, to("design", "plans", "apples"))
	noise := send(t, h, bob, to("design", "noise", "pears"))
	deploy := send(t, h, bob, to("ops", "deploys", "apples"))
	kept := send(t, h, bob, to("ops", "kept", "plums"))
	secret := send(t, h, alice, to("secret", "x", "apples"))
	dm := send(t, h, bob, chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(alice.ID), Content: "apples"})
	policy := func(ch int64, topic string, p int) {
		_, err := h.Service.UpdateUserTopic(ctx, alice.Caller, chat.UpdateUserTopicRequest{StreamID: ch, Topic: topic, VisibilityPolicy: p})
		require.NoError(t, err)
	}
	policy(design, "PLANS", chat.TopicPolicyFollowed)
	policy(design, "noise", chat.TopicPolicyMuted)
	policy(ops, "kept", chat.TopicPolicyUnmuted)
	_, err := h.Service.UpdateSubscriptionProperties(ctx, alice.Caller, chat.UpdateSubscriptionPropertiesRequest{
		SubscriptionData: []chat.SubscriptionProperty{{StreamID: ops, Property: "is_muted", Value: []byte("true")}}})
	require.NoError(t, err)

	get := func(narrow string) []int64 {
		t.Helper()
		return fetchedIDs(fetch(t, h, alice, chat.GetMessagesRequest{Anchor: ptr("newest"), NumBefore: ptr(100), Narrow: &narrow}))
	}
	// alice created the channels before bob wrote: she received all.
	assert.Equal(t, []int64{plans, secret}, get(`[{"operator": "is", "operand": "followed"}]`), "alice started secret's topic: she follows it")
	assert.Equal(t, []int64{noise, deploy}, get(`[{"operator": "is", "operand": "muted"}]`), "the muted topic, and the muted channel's topics not unmuted")
	assert.Equal(t, []int64{plans, kept, secret, dm}, get(`[["in", "home"]]`))
	assert.Equal(t, []int64{noise, deploy}, get(`[{"operator": "in", "operand": "home", "negated": true}]`))
	assert.Equal(t, []int64{plans, noise, deploy, kept, secret, dm}, get(`[["in", "all"]]`))
	assert.Equal(t, []int64{noise, deploy, kept, dm}, get(`[{"operator": "is", "operand": "followed", "negated": true}]`))
	assert.Equal(t, []int64{noise, deploy, kept, secret, dm}, get(`[{"operator": "topic", "operand": "Plans", "negated": true}]`), "direct messages stay")
	assert.Equal(t, []int64{plans, deploy, secret, dm}, get(`[{"operator": "search", "operand": "apples", "negated": true}]`),
		"search terms lose their negation, as in the reference")
	assert.Equal(t, []int64{plans, deploy, secret}, get(`[{"operator": "search", "operand": "apples"}, {"operator": "is", "operand": "dm", "negated": true}]`))
	assert.Equal(t, []int64{plans, noise, deploy, kept, secret}, get(fmt.Sprintf(`[{"operator": "dm", "operand": [%d], "negated": true}]`, bob.ID)))
	assert.Equal(t, []int64{plans, noise, deploy, kept, secret}, get(fmt.Sprintf(`[{"operator": "dm-including", "operand": %d, "negated": true}]`, bob.ID)))
	assert.Equal(t, []int64{plans, noise, deploy, kept, dm}, get(fmt.Sprintf(`[{"operator": "id", "operand": %d, "negated": true}]`, secret)))
	assert.Equal(t, []int64{plans, noise, deploy, kept}, get(`[{"operator": "channels", "operand": "public"}]`), "not the private channel, nor DMs")
	assert.Equal(t, []int64{secret, dm}, get(`[{"operator": "channels", "operand": "public", "negated": true}]`))
	assert.Empty(t, get(`[{"operator": "channels", "operand": "web-public"}]`))
	assert.Empty(t, get(`[{"operator": "channel", "operand": "design"}, {"operator": "channel", "operand": "ops"}]`), "two channels: nothing")
	assert.Empty(t, get(`[{"operator": "topic", "operand": "plans"}, {"operator": "topic", "operand": "noise"}]`))

	// message_ids with an id term: both apply.
	r, err := h.Service.GetMessages(ctx, alice.Caller, chat.GetMessagesRequest{MessageIDs: &[]int64{plans, noise},
		Narrow: ptr(fmt.Sprintf(`[{"operator": "id", "operand": %d}]`, noise))})
	require.NoError(t, err)
	assert.Equal(t, []int64{noise}, fetchedIDs(r))
	r, err = h.Service.GetMessages(ctx, alice.Caller, chat.GetMessagesRequest{MessageIDs: &[]int64{plans},
		Narrow: ptr(fmt.Sprintf(`[{"operator": "id", "operand": %d}]`, noise))})
	require.NoError(t, err)
	assert.Empty(t, fetchedIDs(r))

	// with: the conversation that holds the message.
	assert.Equal(t, []int64{plans}, get(fmt.Sprintf(`[{"operator": "with", "operand": %d}]`, plans)))
	assert.Equal(t, []int64{dm}, get(fmt.Sprintf(`[{"operator": "with", "operand": %d}]`, dm)))
	_, err = h.Service.GetMessages(ctx, bob.Caller, chat.GetMessagesRequest{Anchor: ptr("newest"),
		Narrow: ptr(fmt.Sprintf(`[{"operator": "with", "operand": %d}]`, secret))})
	requireError(t, err, chat.KindInvalid, "BAD_NARROW", "Invalid narrow operator: Invalid 'with' operator")
}

// A search's results carry match_content and match_subject; matches_narrow
// answers for the messages the caller received, with the same fields.
func TestSearchMatchesAndMatchesNarrow(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	newChannelBy(t, h, alice, "food", false)
	to := func(topic, content string) chat.SendMessageRequest {
		return chat.SendMessageRequest{Type: "channel", To: chat.ToChannel("food"), Topic: &topic, Content: content}
	}
	early := send(t, h, alice, to("Lunch plans", "who wants **lunch**?"))
	other := send(t, h, alice, to("dinner", "pasta"))
	subscribe(t, h, alice, "food", bob.ID)
	later := send(t, h, alice, to("snacks", "lunches <b>"))
	dm := send(t, h, alice, chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(bob.ID), Content: "lunch?"})

	resp := fetch(t, h, bob, chat.GetMessagesRequest{Anchor: ptr("newest"), NumBefore: ptr(10), NumAfter: ptr(0),
		Narrow: ptr(`[{"operator": "channel", "operand": "food"}, {"operator": "search", "operand": "lunch"}]`)})
	require.Equal(t, []int64{early, later}, fetchedIDs(resp))
	assert.Equal(t, `<p>who wants <strong><span class="highlight">lunch</span></strong>?</p>`, *resp.Messages[0].MatchContent)
	assert.Equal(t, `<span class="highlight">Lunch</span> plans`, *resp.Messages[0].MatchSubject)
	assert.Equal(t, `<p><span class="highlight">lunches</span> &lt;b&gt;</p>`, *resp.Messages[1].MatchContent)
	assert.Equal(t, "snacks", *resp.Messages[1].MatchSubject)
	plain := fetch(t, h, bob, chat.GetMessagesRequest{Anchor: ptr("newest"), NumBefore: ptr(10), NumAfter: ptr(0)})
	assert.Nil(t, plain.Messages[0].MatchContent, "only searches carry matches")

	match := func(as chattest.User, ids []int64, narrow string) map[string]chat.MessageMatch {
		t.Helper()
		r, err := h.Service.MatchesNarrow(ctx, as.Caller, chat.MatchesNarrowRequest{MsgIDs: &ids, Narrow: &narrow})
		require.NoError(t, err)
		checkSchema(t, "GET", "/messages/matches_narrow", r)
		return r.Messages
	}
	got := match(bob, []int64{early, other, later, dm, 999999}, `[{"operator": "search", "operand": "lunch"}]`)
	assert.Equal(t, map[string]chat.MessageMatch{
		fmt.Sprint(later): {MatchContent: `<p><span class="highlight">lunches</span> &lt;b&gt;</p>`, MatchSubject: "snacks"},
		fmt.Sprint(dm):    {MatchContent: `<p><span class="highlight">lunch</span>?</p>`, MatchSubject: ""},
	}, got, "bob did not receive the messages from before he joined; the missing ID is ignored")
	got = match(alice, []int64{early, other, dm}, `[["channel", "food"]]`)
	assert.Equal(t, map[string]chat.MessageMatch{
		fmt.Sprint(early): {MatchContent: "<p>who wants <strong>lunch</strong>?</p>", MatchSubject: "Lunch plans"},
		fmt.Sprint(other): {MatchContent: "<p>pasta</p>", MatchSubject: "dinner"},
	}, got)
	assert.Empty(t, match(alice, []int64{}, `[]`))

	_, err := h.Service.MatchesNarrow(ctx, alice.Caller, chat.MatchesNarrowRequest{Narrow: ptr(`[]`)})
	requireError(t, err, chat.KindInvalid, chat.CodeRequestVariableMissing, "Missing 'msg_ids' argument")
	_, err = h.Service.MatchesNarrow(ctx, alice.Caller, chat.MatchesNarrowRequest{MsgIDs: &[]int64{early}})
	requireError(t, err, chat.KindInvalid, chat.CodeRequestVariableMissing, "Missing 'narrow' argument")
	for _, bad := range []string{"null", ""} {
		_, err = h.Service.MatchesNarrow(ctx, alice.Caller, chat.MatchesNarrowRequest{MsgIDs: &[]int64{early}, Narrow: &bad})
		require.Error(t, err, "narrow %q", bad)
		assert.Equal(t, chat.CodeBadRequest, chat.AsError(err).Code)
	}
	_, err = h.Service.MatchesNarrow(ctx, alice.Caller, chat.MatchesNarrowRequest{MsgIDs: &[]int64{early},
		Narrow: ptr(fmt.Sprintf(`[{"operator": "with", "operand": %d}]`, early))})
	requireError(t, err, chat.KindInvalid, "BAD_NARROW", "Invalid narrow operator: unknown operator with")
}

// client_gravatar (default true) leaves avatar_url null for senders on
// Gravatar whose email the reader may see; GET /messages/{id} always sends it.
func TestGetMessagesClientGravatar(t *testing.T) {
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	id := send(t, h, alice, chat.SendMessageRequest{Type: "direct", To: chat.ToUsers(h.Owner.ID), Content: "x"})
	get := func(cg *bool) *string {
		resp := fetch(t, h, h.Owner, chat.GetMessagesRequest{MessageIDs: &[]int64{id}, ClientGravatar: cg})
		require.Len(t, resp.Messages, 1)
		return resp.Messages[0].AvatarURL
	}
	assert.Nil(t, get(nil))
	assert.Nil(t, get(ptr(true)))
	require.NotNil(t, get(ptr(false)))
	assert.Contains(t, *get(ptr(false)), "https://secure.gravatar.com/avatar/")
	assert.NotNil(t, getMessage(t, h, h.Owner, id).AvatarURL)
}

// The first_unread anchor skips muted topics, and muted channels unless
// the narrow is the channel's, as the reference's find_first_unread_anchor.
func TestFirstUnreadSkipsMuted(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	design := newChannelBy(t, h, alice, "design", false)
	ops := newChannelBy(t, h, alice, "ops", false)
	_, err := h.Service.UpdateUserTopic(ctx, alice.Caller, chat.UpdateUserTopicRequest{StreamID: design, Topic: "noise", VisibilityPolicy: chat.TopicPolicyMuted})
	require.NoError(t, err)
	_, err = h.Service.UpdateSubscriptionProperties(ctx, alice.Caller, chat.UpdateSubscriptionPropertiesRequest{
		SubscriptionData: []chat.SubscriptionProperty{{StreamID: ops, Property: "is_muted", Value: []byte("true")}}})
	require.NoError(t, err)
	to := func(ch int64, topic string) chat.SendMessageRequest {
		return chat.SendMessageRequest{Type: "channel", To: chat.ToChannelID(ch), Topic: &topic, Content: "x"}
	}
	opsMsg := send(t, h, bob, to(ops, "deploys"))
	noise := send(t, h, bob, to(design, "noise"))
	plans := send(t, h, bob, to(design, "plans"))
	anchor := func(narrow string) int64 {
		t.Helper()
		resp := fetch(t, h, alice, chat.GetMessagesRequest{Anchor: ptr("first_unread"), Narrow: &narrow})
		require.NotNil(t, resp.Anchor)
		return *resp.Anchor
	}
	assert.Equal(t, plans, anchor(`[]`), "the muted channel and the muted topic are skipped")
	assert.Equal(t, plans, anchor(fmt.Sprintf(`[{"operator": "channel", "operand": %d}]`, design)), "in the channel: its muted topic is skipped")
	assert.Equal(t, opsMsg, anchor(fmt.Sprintf(`[{"operator": "channel", "operand": %d}]`, ops)), "a muted channel's own view starts at its first unread")
	resp := fetch(t, h, alice, chat.GetMessagesRequest{Anchor: ptr("first_unread"), NumBefore: ptr(5), NumAfter: ptr(5)})
	assert.Equal(t, []int64{opsMsg, noise, plans}, fetchedIDs(resp), "the window itself still holds the muted messages")
}
