package storagetest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

// The targeted queries of storage.QueryStore: each answers about the given
// users, groups or channels of one realm, never another realm's.
var queryTests = []test{
	{"Queries/FindAndCountUsers", testFindUsers},
	{"Queries/EffectiveGroupsAndClosure", testEffectiveGroups},
	{"Queries/GroupsByIDAndContents", testGroupsByID},
	{"Queries/SettingUsers", testSettingUsers},
	{"Queries/StreamsByIDAndSubscribers", testStreamsByID},
	{"Queries/LockRealm", testLockRealm},
	{"Queries/RealmsByHostname", testRealmsByHostname},
	{"Queries/MembershipsOfLeaveOutDeactivated", testMembershipsOfLeaveOutDeactivated},
}

func testFindUsers(t *testing.T, s storage.Store) {
	ctx := t.Context()
	r, other := newRealm(t, s, "a"), newRealm(t, s, "b")
	alice, bob := newUser(t, s, r.ID, "alice@a"), newUser(t, s, r.ID, "bob@a")
	stranger := newUser(t, s, other.ID, "x@b")
	bot := &storage.User{RealmID: r.ID, Email: "bot@a", FullName: "Bot", Role: 400, IsActive: true, IsBot: true,
		BotType: ptr(1), BotOwnerID: &alice.ID, APIKey: "k"}
	require.NoError(t, s.CreateUser(ctx, bot))
	bob.IsActive = false
	require.NoError(t, s.UpdateUser(ctx, bob, "is_active"))

	ids := func(users []storage.User, err error) []int64 {
		require.NoError(t, err)
		out := []int64{}
		for _, u := range users {
			out = append(out, u.ID)
		}
		return out
	}
	assert.Equal(t, []int64{alice.ID, bob.ID}, ids(s.FindUsers(ctx, r.ID, storage.UserFilter{IDs: []int64{bob.ID, alice.ID, stranger.ID, alice.ID}})))
	assert.Equal(t, []int64{}, ids(s.FindUsers(ctx, r.ID, storage.UserFilter{IDs: []int64{}})), "an empty list matches nobody")
	assert.Equal(t, []int64{alice.ID, bot.ID}, ids(s.FindUsers(ctx, r.ID, storage.UserFilter{Active: ptr(true)})))
	assert.Equal(t, []int64{bot.ID}, ids(s.FindUsers(ctx, r.ID, storage.UserFilter{Bot: ptr(true)})))
	assert.Equal(t, []int64{bot.ID}, ids(s.FindUsers(ctx, r.ID, storage.UserFilter{BotOwnerIDs: []int64{alice.ID, stranger.ID}})))
	assert.Equal(t, []int64{}, ids(s.FindUsers(ctx, other.ID, storage.UserFilter{BotOwnerIDs: []int64{alice.ID}})))
	n, err := s.CountUsers(ctx, r.ID, storage.UserFilter{Role: ptr(400), Active: ptr(true), Bot: ptr(false)})
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	n, err = s.CountUsers(ctx, r.ID, storage.UserFilter{IDs: []int64{alice.ID, stranger.ID}})
	require.NoError(t, err)
	assert.Equal(t, 1, n)
}

func testEffectiveGroups(t *testing.T, s storage.Store) {
	ctx := t.Context()
	r, other := newRealm(t, s, "a"), newRealm(t, s, "b")
	u := newUser(t, s, r.ID, "u@a")
	top, mid, leaf, apart := newGroup(t, s, r.ID, "top"), newGroup(t, s, r.ID, "mid"), newGroup(t, s, r.ID, "leaf"), newGroup(t, s, r.ID, "apart")
	anon := newGroup(t, s, r.ID, "")
	require.NoError(t, s.AddSubgroups(ctx, r.ID, top.ID, []int64{mid.ID}))
	require.NoError(t, s.AddSubgroups(ctx, r.ID, mid.ID, []int64{leaf.ID}))
	require.NoError(t, s.AddSubgroups(ctx, r.ID, anon.ID, []int64{mid.ID}))
	// A cycle the store allows: the walk must still end.
	require.NoError(t, s.AddSubgroups(ctx, r.ID, leaf.ID, []int64{top.ID}))
	require.NoError(t, s.AddGroupMembers(ctx, r.ID, leaf.ID, []int64{u.ID}))

	eff, err := s.EffectiveGroupIDs(ctx, r.ID, u.ID)
	require.NoError(t, err)
	assert.Equal(t, []int64{top.ID, mid.ID, leaf.ID, anon.ID}, eff, "up through every supergroup, anonymous ones too")
	eff, err = s.EffectiveGroupIDs(ctx, other.ID, u.ID)
	require.NoError(t, err)
	assert.Empty(t, eff)

	down, err := s.GroupClosure(ctx, r.ID, mid.ID)
	require.NoError(t, err)
	assert.Equal(t, []int64{top.ID, mid.ID, leaf.ID}, down)
	down, err = s.GroupClosure(ctx, r.ID, apart.ID)
	require.NoError(t, err)
	assert.Equal(t, []int64{apart.ID}, down)
	down, err = s.GroupClosure(ctx, other.ID, apart.ID)
	require.NoError(t, err)
	assert.Empty(t, down, "another realm's group")

	parents, err := s.SupergroupIDs(ctx, r.ID, mid.ID)
	require.NoError(t, err)
	assert.Equal(t, []int64{top.ID, anon.ID}, parents)
}

func testGroupsByID(t *testing.T, s storage.Store) {
	ctx := t.Context()
	r, other := newRealm(t, s, "a"), newRealm(t, s, "b")
	u, v := newUser(t, s, r.ID, "u@a"), newUser(t, s, r.ID, "v@a")
	g, anon, far := newGroup(t, s, r.ID, "g"), newGroup(t, s, r.ID, ""), newGroup(t, s, other.ID, "far")
	require.NoError(t, s.AddGroupMembers(ctx, r.ID, anon.ID, []int64{v.ID, u.ID}))
	require.NoError(t, s.AddSubgroups(ctx, r.ID, anon.ID, []int64{g.ID}))

	groups, err := s.GetGroupsByID(ctx, r.ID, []int64{anon.ID, g.ID, far.ID, 999999})
	require.NoError(t, err)
	require.Len(t, groups, 2)
	assert.Equal(t, g.ID, groups[0].ID)
	assert.Equal(t, "", groups[1].Name)

	ms, err := s.ListGroupMembershipsOf(ctx, r.ID, []int64{anon.ID, g.ID})
	require.NoError(t, err)
	assert.Equal(t, []storage.GroupMembership{membership(anon.ID, u.ID), membership(anon.ID, v.ID)}, ms)
	es, err := s.ListGroupEdgesOf(ctx, r.ID, []int64{anon.ID})
	require.NoError(t, err)
	assert.Equal(t, []storage.GroupEdge{edge(anon.ID, g.ID)}, es)
	es, err = s.ListGroupEdgesOf(ctx, other.ID, []int64{anon.ID})
	require.NoError(t, err)
	assert.Empty(t, es)
}

func testSettingUsers(t *testing.T, s storage.Store) {
	ctx := t.Context()
	r := newRealm(t, s, "a")
	target, anon, unrelated := newGroup(t, s, r.ID, "target"), newGroup(t, s, r.ID, ""), newGroup(t, s, r.ID, "other")
	user := &storage.UserGroup{RealmID: r.ID, Name: "user", CanMentionGroupID: anon.ID}
	require.NoError(t, s.CreateGroup(ctx, user))
	gone := &storage.UserGroup{RealmID: r.ID, Name: "gone", CanJoinGroupID: target.ID, Deactivated: true}
	require.NoError(t, s.CreateGroup(ctx, gone))
	ch := &storage.Stream{RealmID: r.ID, Name: "ch", CanSendMessageGroupID: target.ID}
	require.NoError(t, s.CreateStream(ctx, ch))
	archived := &storage.Stream{RealmID: r.ID, Name: "old", CanSubscribeGroupID: target.ID, IsArchived: true}
	require.NoError(t, s.CreateStream(ctx, archived))

	groups, err := s.ListGroupsUsingGroups(ctx, r.ID, []int64{target.ID, anon.ID})
	require.NoError(t, err)
	require.Len(t, groups, 1, "deactivated groups do not count")
	assert.Equal(t, user.ID, groups[0].ID)
	channels, err := s.ListStreamsUsingGroups(ctx, r.ID, []int64{target.ID})
	require.NoError(t, err)
	require.Len(t, channels, 1, "archived channels do not count")
	assert.Equal(t, ch.ID, channels[0].ID)
	channels, err = s.ListStreamsUsingGroups(ctx, r.ID, []int64{unrelated.ID})
	require.NoError(t, err)
	assert.Empty(t, channels)
}

func testStreamsByID(t *testing.T, s storage.Store) {
	ctx := t.Context()
	r, other := newRealm(t, s, "a"), newRealm(t, s, "b")
	u, v := newUser(t, s, r.ID, "u@a"), newUser(t, s, r.ID, "v@a")
	a := &storage.Stream{RealmID: r.ID, Name: "a", IsDefault: true}
	b := &storage.Stream{RealmID: r.ID, Name: "b"}
	far := &storage.Stream{RealmID: other.ID, Name: "far", IsDefault: true}
	for _, c := range []*storage.Stream{a, b, far} {
		require.NoError(t, s.CreateStream(ctx, c))
	}
	got, err := s.GetStreamsByID(ctx, r.ID, []int64{b.ID, far.ID, a.ID})
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, []int64{a.ID, b.ID}, []int64{got[0].ID, got[1].ID})
	defaults, err := s.ListDefaultStreams(ctx, r.ID)
	require.NoError(t, err)
	require.Len(t, defaults, 1)
	assert.Equal(t, a.ID, defaults[0].ID)

	for _, sub := range []storage.Subscription{{UserID: u.ID, StreamID: a.ID}, {UserID: v.ID, StreamID: a.ID}, {UserID: u.ID, StreamID: b.ID}} {
		sub.RealmID = r.ID
		require.NoError(t, s.Subscribe(ctx, &sub, 1))
	}
	v.IsActive = false
	require.NoError(t, s.UpdateUser(ctx, v, "is_active"))
	require.NoError(t, s.Unsubscribe(ctx, r.ID, u.ID, b.ID, 2))
	subs, err := s.ListActiveSubscribers(ctx, r.ID, []int64{a.ID, b.ID})
	require.NoError(t, err)
	require.Len(t, subs, 1, "deactivated users and ended subscriptions are left out")
	assert.Equal(t, [2]int64{a.ID, u.ID}, [2]int64{subs[0].StreamID, subs[0].UserID})
}

func testLockRealm(t *testing.T, s storage.Store) {
	ctx := t.Context()
	r := newRealm(t, s, "a")
	assert.Error(t, s.LockRealm(ctx, r.ID), "outside a transaction")
	err := s.InTx(ctx, func(tx storage.Store) error {
		if err := tx.LockRealm(ctx, r.ID); err != nil {
			return err
		}
		return tx.LockRealm(context.WithoutCancel(ctx), r.ID) // taking it twice is fine
	})
	require.NoError(t, err)
}

func testRealmsByHostname(t *testing.T, s storage.Store) {
	ctx := t.Context()
	for _, host := range []string{"chat.example.com:8080", "Chat.Example.com", "chat.example.community", "[::1]:9991"} {
		r := &storage.Realm{StringID: host, Name: host, URL: "http://" + host, Host: host}
		require.NoError(t, s.CreateRealm(ctx, r))
	}
	names := func(realms []storage.Realm, err error) []string {
		require.NoError(t, err)
		out := []string{}
		for _, r := range realms {
			out = append(out, r.Host)
		}
		return out
	}
	assert.Equal(t, []string{"chat.example.com:8080", "Chat.Example.com"}, names(s.RealmsByHostname(ctx, "chat.example.com", 5)))
	assert.Equal(t, []string{"chat.example.com:8080"}, names(s.RealmsByHostname(ctx, "chat.example.com", 1)))
	assert.Equal(t, []string{"[::1]:9991"}, names(s.RealmsByHostname(ctx, "[::1]", 5)))
	assert.Equal(t, []string{}, names(s.RealmsByHostname(ctx, "example.com", 5)))
	assert.Len(t, names(s.FirstRealms(ctx, 3)), 3)
}

func testMembershipsOfLeaveOutDeactivated(t *testing.T, s storage.Store) {
	ctx := t.Context()
	r := newRealm(t, s, "a")
	u, v := newUser(t, s, r.ID, "u@a"), newUser(t, s, r.ID, "v@a")
	g := newGroup(t, s, r.ID, "g")
	require.NoError(t, s.AddGroupMembers(ctx, r.ID, g.ID, []int64{u.ID, v.ID}))
	v.IsActive = false
	require.NoError(t, s.UpdateUser(ctx, v, "is_active"))

	ms, err := s.ListGroupMembershipsOf(ctx, r.ID, []int64{g.ID})
	require.NoError(t, err)
	assert.Equal(t, []storage.GroupMembership{membership(g.ID, u.ID)}, ms, "the deactivated member is left out")
	all, err := s.ListGroupMemberships(ctx, r.ID)
	require.NoError(t, err)
	assert.Contains(t, all, membership(g.ID, v.ID), "but the membership is kept")

	v.IsActive = true
	require.NoError(t, s.UpdateUser(ctx, v, "is_active"))
	ms, err = s.ListGroupMembershipsOf(ctx, r.ID, []int64{g.ID})
	require.NoError(t, err)
	assert.Equal(t, []storage.GroupMembership{membership(g.ID, u.ID), membership(g.ID, v.ID)}, ms, "and shown again on reactivation")
}
