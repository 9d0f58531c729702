package storagetest

import (
	"context"
	"slices"
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
	{"Queries/UsersByFullName", testUsersByFullName},
	{"Queries/SubscribersAmongAndCount", testSubscribersAmong},
	{"Queries/GroupsAndStreamsByName", testGroupsAndStreamsByName},
}

func testGroupsAndStreamsByName(t *testing.T, s storage.Store) {
	ctx := t.Context()
	r, other := newRealm(t, s, "a"), newRealm(t, s, "b")
	g1, g2 := newGroup(t, s, r.ID, "Support"), newGroup(t, s, r.ID, "devs")
	newGroup(t, s, r.ID, "") // anonymous
	newGroup(t, s, other.ID, "Support")
	groups, err := s.GetGroupsByName(ctx, r.ID, []string{"devs", "Support", "support", "", "none"})
	require.NoError(t, err)
	require.Len(t, groups, 2, "exact names of this realm; anonymous groups have none")
	assert.Equal(t, []int64{g1.ID, g2.ID}, []int64{groups[0].ID, groups[1].ID})
	groups, err = s.GetGroupsByName(ctx, r.ID, nil)
	require.NoError(t, err)
	assert.Empty(t, groups)

	a := &storage.Stream{RealmID: r.ID, Name: "Équipe"}
	b := &storage.Stream{RealmID: r.ID, Name: "b"}
	far := &storage.Stream{RealmID: other.ID, Name: "équipe"}
	for _, c := range []*storage.Stream{a, b, far} {
		require.NoError(t, s.CreateStream(ctx, c))
	}
	streams, err := s.GetStreamsByName(ctx, r.ID, []string{"B", "ÉQUIPE", "zzz"})
	require.NoError(t, err)
	require.Len(t, streams, 2, "folded names of this realm")
	assert.Equal(t, []int64{a.ID, b.ID}, []int64{streams[0].ID, streams[1].ID})
	assert.Equal(t, "Équipe", streams[0].Name)
}

func testUsersByFullName(t *testing.T, s storage.Store) {
	ctx := t.Context()
	r, other := newRealm(t, s, "a"), newRealm(t, s, "b")
	alice, bob := newUser(t, s, r.ID, "alice@a"), newUser(t, s, r.ID, "bob@a")
	far := newUser(t, s, other.ID, "far@b")
	alice.FullName = "Émilie Dupont"
	require.NoError(t, s.UpdateUser(ctx, alice, "full_name"))
	bob.FullName = "ÉMILIE DUPONT"
	bob.IsActive = false
	require.NoError(t, s.UpdateUser(ctx, bob)) // every column: the key follows too
	far.FullName = "émilie dupont"
	require.NoError(t, s.UpdateUser(ctx, far, "full_name"))
	ids := func(f storage.UserFilter) []int64 {
		users, err := s.FindUsers(ctx, r.ID, f)
		require.NoError(t, err)
		out := []int64{}
		for _, u := range users {
			out = append(out, u.ID)
		}
		return out
	}
	assert.Equal(t, []int64{alice.ID, bob.ID}, ids(storage.UserFilter{FullNames: []string{"émilie dupont"}}), "case-insensitive, Unicode included; this realm only")
	assert.Equal(t, []int64{alice.ID}, ids(storage.UserFilter{FullNames: []string{"Émilie DUPONT", "nobody"}, Active: ptr(true)}))
	assert.Equal(t, []int64{}, ids(storage.UserFilter{FullNames: []string{}}), "an empty list matches nobody")
	assert.Equal(t, []int64{}, ids(storage.UserFilter{FullNames: []string{"User alice@a"}}), "the old name no longer matches")
	carol := &storage.User{RealmID: r.ID, Email: "carol@a", FullName: "Carol", Role: 400, IsActive: true, APIKey: "kc"}
	require.NoError(t, s.CreateUser(ctx, carol))
	assert.Equal(t, []int64{carol.ID}, ids(storage.UserFilter{FullNames: []string{"CAROL"}}), "the key is written on create")
	n, err := s.CountUsers(ctx, r.ID, storage.UserFilter{FullNames: []string{"carol", "émilie dupont"}})
	require.NoError(t, err)
	assert.Equal(t, 3, n)
}

func testSubscribersAmong(t *testing.T, s storage.Store) {
	ctx := t.Context()
	r := newRealm(t, s, "a")
	u, v, w, x := newUser(t, s, r.ID, "u@a"), newUser(t, s, r.ID, "v@a"), newUser(t, s, r.ID, "w@a"), newUser(t, s, r.ID, "x@a")
	a := &storage.Stream{RealmID: r.ID, Name: "a"}
	b := &storage.Stream{RealmID: r.ID, Name: "b"}
	require.NoError(t, s.CreateStream(ctx, a))
	require.NoError(t, s.CreateStream(ctx, b))
	for _, sub := range []storage.Subscription{{UserID: u.ID, StreamID: a.ID}, {UserID: v.ID, StreamID: a.ID},
		{UserID: w.ID, StreamID: a.ID}, {UserID: x.ID, StreamID: b.ID}} {
		sub.RealmID = r.ID
		require.NoError(t, s.Subscribe(ctx, &sub, 1))
	}
	require.NoError(t, s.Unsubscribe(ctx, r.ID, w.ID, a.ID, 2))
	v.IsActive = false
	require.NoError(t, s.UpdateUser(ctx, v, "is_active"))
	got, err := s.ActiveSubscribersAmong(ctx, r.ID, a.ID, []int64{x.ID, w.ID, v.ID, u.ID, u.ID})
	require.NoError(t, err)
	assert.Equal(t, []int64{u.ID}, got, "ended subscriptions, deactivated users and other channels' subscribers are left out")
	got, err = s.ActiveSubscribersAmong(ctx, r.ID, a.ID, nil)
	require.NoError(t, err)
	assert.Equal(t, []int64{}, got)
	require.NoError(t, s.Subscribe(ctx, &storage.Subscription{RealmID: r.ID, UserID: x.ID, StreamID: a.ID}, 3))
	for limit, want := range map[int]int{0: 0, 1: 1, 2: 2, 10: 2} {
		n, err := s.CountActiveSubscribers(ctx, r.ID, a.ID, limit)
		require.NoError(t, err)
		assert.Equal(t, want, n, "limit %d", limit)
	}
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
	_, err = s.LockLane(ctx, r.ID, 7, 0)
	assert.Error(t, err, "outside a transaction")
	err = s.InTx(ctx, func(tx storage.Store) error {
		ids, err := tx.LockLane(ctx, r.ID, 7, 0)
		if err != nil {
			return err
		}
		assert.Empty(t, ids)
		reserved, err := tx.LockLane(ctx, r.ID, 1<<63|8, 3) // another lane, any 64-bit value
		if err != nil {
			return err
		}
		more, err := tx.ReserveMessageIDs(ctx, 2)
		if err != nil {
			return err
		}
		if reserved == nil { // the database gives IDs on insert
			assert.Nil(t, more)
			return nil
		}
		assert.Len(t, reserved, 3)
		assert.True(t, slices.IsSorted(append(reserved, more...)), "ascending, and later ones above")
		assert.Len(t, more, 2)
		return nil
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
