// Package storagetest is the conformance suite of storage.Store: every
// backend runs Run and must pass it.
//
//	func TestStore(t *testing.T) {
//		storagetest.Run(t, func(t *testing.T) storage.Store {
//			return bunstore.OpenTestSQLite(t)
//		})
//	}
//
// Each subtest calls open for a fresh, empty store (the open function owns
// closing it, typically in t.Cleanup), so subtests share no state; they run
// in parallel, so open must be safe to call concurrently.
//
// Beyond the comments of package storage, the suite pins down these
// behaviours: list methods return empty results (never an error) for an
// empty realm; a reference to a record that is missing or belongs to
// another realm (a user's realm or bot owner, a group's creator, a
// member, a subgroup) gives storage.ErrNotFound; the member and subgroup
// methods, and UserGroupIDs, give storage.ErrNotFound for a group (or user)
// that is missing or of another realm; GetGroupByName never finds an
// anonymous group.
//
// For the later records: a draft, profile field, profile field value or
// email change referring to a user or field that is missing or of another
// realm gives storage.ErrNotFound on create (a batch of profile field
// values is written whole or not at all); Update and single-record Delete
// methods give storage.ErrNotFound when nothing of the realm (and, for
// drafts, of the user) matched, while the bulk deletes (DeleteUserDrafts,
// DeleteProfileFieldValues) silently skip what is not there. Drafts with
// equal timestamps list by ascending ID. A failed CreateEmailChange keeps
// the user's earlier pending change; a successful one gives the new
// change a new ID. Realm.CanCreateBotsGroupID and
// CanCreateWriteOnlyBotsGroupID are 0 on a new realm and round-trip any
// group ID of the realm.
//
// For groups: the six permission settings (CanAddMembersGroupID, ...) are
// 0 when not given and round-trip any group ID of the realm, including the
// group's own and anonymous groups'. UpdateGroup matches the group by realm
// and ID (another realm's group is ErrNotFound and stays untouched), writes
// only the named columns when given, keeps the row unchanged when it fails,
// and treats a creator as CreateGroup does; anonymous groups keep their
// empty name without conflicting with each other. ListGroupMemberships and
// ListGroupEdges list the direct rows of all the realm's groups (named,
// anonymous, system and deactivated), never another realm's, and follow
// removals.
//
// For channels: CreateStream sets only the ID; pointers (retention,
// creator, first message) round-trip nil and non-nil, including zero
// values; a creator that is missing or of another realm gives
// storage.ErrNotFound on create and update; renaming a channel to another
// case of its own name is no conflict; UpdateStream with columns writes
// only those, and a failed update leaves the row unchanged. For
// subscriptions: Subscribe sets sub.Active (and, reactivating, copies the
// stored settings into sub) only on success; a user or channel that is
// missing or of another realm than sub.RealmID, or a RealmID that is
// neither's (even if the user has a row in its own realm), gives
// storage.ErrNotFound and writes nothing; storage.ErrConflict from
// Subscribe leaves a caller's transaction usable; of concurrent
// Subscribes of one subscription exactly one succeeds; settings written
// while inactive are kept; periods list oldest first (ascending IDs) and a
// failed Unsubscribe closes nothing. UpdateSubscription matches inactive
// rows too, and naming a column that is not a setting (active, realm_id,
// user_id, stream_id, or an unknown one) is an error other than
// ErrNotFound and ErrConflict, and writes nothing. ListStreamSubscribers,
// ListSubscriptionPeriods and ListUserTopics give an empty list for a
// missing channel, user or realm. For topic policies: SetUserTopic on a
// user or channel that is missing or of another realm gives
// storage.ErrNotFound (and never updates another realm's row); the last
// write wins whatever its LastUpdated; ListUserTopics orders topics by
// storage.Fold(name) bytewise. Every case-insensitive name (emails,
// channel, profile field and topic names) compares by storage.Fold,
// non-ASCII letters included, whatever the database's locale.
package storagetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/storage"
)

// test is one conformance check on a fresh store.
type test struct {
	name string
	fn   func(t *testing.T, s storage.Store)
}

// Run runs the conformance suite, one parallel subtest per check, each on
// the fresh store returned by open.
func Run(t *testing.T, open func(t *testing.T) storage.Store) {
	var all []test
	all = append(all, realmTests...)
	all = append(all, userTests...)
	all = append(all, groupTests...)
	all = append(all, draftTests...)
	all = append(all, profileFieldTests...)
	all = append(all, emailChangeTests...)
	all = append(all, streamTests...)
	all = append(all, subscriptionTests...)
	all = append(all, userTopicTests...)
	all = append(all, messageTests...)
	all = append(all, txTests...)
	all = append(all, queryTests...)
	all = append(all, foldTests...)
	all = append(all, readStateTests...)
	all = append(all, eventTests...)
	all = append(all, uploadTests...)
	all = append(all, playgroundTests...)
	all = append(all, linkifierTests...)
	all = append(all, scheduledTests...)
	all = append(all, inviteTests...)
	all = append(all, userStatusTests...)
	all = append(all, presenceTests...)
	all = append(all, userMuteTests...)
	all = append(all, webhookTests...)
	all = append(all, notificationTests...)
	all = append(all, alertWordTests...)
	all = append(all, topicTests...)
	all = append(all, fleetTests...)
	for _, tc := range all {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			require.NotNil(t, s, "open returned a nil store")
			tc.fn(t, s)
		})
	}
}

func ptr[T any](v T) *T { return &v }

// newRealm creates a realm whose string ID is key and host key.example.com.
func newRealm(t *testing.T, s storage.Store, key string) *storage.Realm {
	t.Helper()
	r := &storage.Realm{
		StringID:               key,
		Name:                   "Realm " + key,
		URL:                    "https://" + key + ".example.com",
		Host:                   key + ".example.com",
		DateCreated:            1_700_000_000,
		EmailAddressVisibility: 1,
	}
	require.NoError(t, s.CreateRealm(t.Context(), r))
	require.NotZero(t, r.ID)
	return r
}

// newUser creates an active member of the realm with the given email.
func newUser(t *testing.T, s storage.Store, realmID int64, email string) *storage.User {
	t.Helper()
	u := &storage.User{
		RealmID:      realmID,
		Email:        email,
		FullName:     "User " + email,
		Role:         400,
		IsActive:     true,
		DateJoined:   1_700_000_100,
		APIKey:       "key-" + email,
		AvatarSource: "G",
	}
	require.NoError(t, s.CreateUser(t.Context(), u))
	require.NotZero(t, u.ID)
	return u
}

// newGroup creates a group of the realm; name "" makes an anonymous group.
func newGroup(t *testing.T, s storage.Store, realmID int64, name string) *storage.UserGroup {
	t.Helper()
	g := &storage.UserGroup{RealmID: realmID, Name: name}
	require.NoError(t, s.CreateGroup(t.Context(), g))
	require.NotZero(t, g.ID)
	return g
}
