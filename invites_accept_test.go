package chat_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

func accept(t *testing.T, h *chattest.Harness, req chat.AcceptInvitationRequest) *chat.AcceptInvitationResponse {
	t.Helper()
	resp, err := h.Service.AcceptInvitation(context.Background(), h.RealmID, req)
	require.NoError(t, err)
	checkEnvelope(t, resp)
	return resp
}

// subscribedIDs lists the channels a user is subscribed to.
func subscribedIDs(t *testing.T, h *chattest.Harness, c chat.Caller) []int64 {
	t.Helper()
	resp, err := h.Service.GetSubscriptions(context.Background(), c, chat.GetSubscriptionsRequest{})
	require.NoError(t, err)
	out := []int64{}
	for _, s := range resp.Subscriptions {
		out = append(out, s.StreamID)
	}
	slices.Sort(out)
	return out
}

func inGroup(t *testing.T, h *chattest.Harness, group, user int64) bool {
	t.Helper()
	resp, err := h.Service.IsUserGroupMember(context.Background(), h.Owner.Caller, chat.IsUserGroupMemberRequest{UserGroupID: group, UserID: user})
	require.NoError(t, err)
	return resp.IsUserGroupMember
}

// A reusable link end to end: the new users get the link's role,
// channels (and the default channels it asks for) and groups; they can
// authenticate with the API key and log in with the password; every
// change is announced as for any new account.
func TestAcceptInviteLink(t *testing.T) {
	ctx := context.Background()
	h, _ := inviteHarness(t)
	admin := h.NewUser(t, chat.RoleAdministrator)
	member := h.NewUser(t, chat.RoleMember)
	public := newChannelBy(t, h, member, "public", false)
	private := newChannel(t, h, "private", true)
	def := newChannel(t, h, "welcome", false)
	other := newChannel(t, h, "other default", false)
	for _, id := range []int64{def, other} {
		_, err := h.Service.UpdateChannel(ctx, h.Owner.Caller, chat.UpdateChannelRequest{StreamID: id, IsDefaultStream: ptr(true)})
		require.NoError(t, err)
	}
	crew := createGroup(t, h, h.Owner, "crew", member.ID)
	takeEvents(t, h)

	link := createLink(t, h, h.Owner, chat.CreateInviteLinkRequest{InviteAs: ptr(chat.RoleModerator),
		StreamIDs: &[]int64{public, private, def}, GroupIDs: &[]int64{crew}, IncludeRealmDefaultSubscriptions: ptr(true)})
	ev := only(t, takeEvents(t, h), "invites_changed", "")
	assert.Equal(t, ids(h.Owner, admin), ev.To, "the administrators (the creator among them)")

	// The whole link works as the key.
	first := accept(t, h, chat.AcceptInvitationRequest{Key: link, Email: ptr(" Newcomer@Example.com "), FullName: " New Comer ", Password: "a fine password"})
	assert.Equal(t, "Newcomer@Example.com", first.Email)
	evs := takeEvents(t, h)
	added := only(t, evs, "realm_user", "add")
	assert.Equal(t, float64(first.UserID), added.JSON["person"].(map[string]any)["user_id"])
	assert.Equal(t, "New Comer", added.JSON["person"].(map[string]any)["full_name"])
	assert.Equal(t, float64(chat.RoleModerator), added.JSON["person"].(map[string]any)["role"])
	assert.Contains(t, added.To, member.ID, "everyone learns of the new user")
	var subscribedTo, peersOf, groupsJoined []int64
	for _, e := range evs {
		switch e.Type + "/" + e.Op {
		case "subscription/add":
			assert.Equal(t, []int64{first.UserID}, e.To)
			for _, s := range e.JSON["subscriptions"].([]any) {
				subscribedTo = append(subscribedTo, int64(s.(map[string]any)["stream_id"].(float64)))
			}
		case "subscription/peer_add":
			assert.Equal(t, []any{float64(first.UserID)}, e.JSON["user_ids"])
			assert.NotContains(t, e.To, first.UserID)
			peersOf = append(peersOf, int64(e.JSON["stream_ids"].([]any)[0].(float64)))
		case "user_group/add_members":
			assert.Equal(t, []any{float64(first.UserID)}, e.JSON["user_ids"])
			groupsJoined = append(groupsJoined, int64(e.JSON["group_id"].(float64)))
		}
	}
	want := []int64{public, private, def, other}
	slices.Sort(want)
	slices.Sort(subscribedTo)
	slices.Sort(peersOf)
	assert.Equal(t, want, subscribedTo)
	assert.Equal(t, want, peersOf)
	assert.ElementsMatch(t, []int64{groupID(t, h, chat.GroupModerators), crew}, groupsJoined, "the role's group and the link's")
	assert.Equal(t, ids(h.Owner, admin), only(t, evs, "invites_changed", "").To)
	// The private channel's peer_add goes to its subscribers and the
	// administrators, not to the member.
	for _, e := range evs {
		if e.Type == "subscription" && e.Op == "peer_add" && int64(e.JSON["stream_ids"].([]any)[0].(float64)) == private {
			assert.NotContains(t, e.To, member.ID)
		}
	}

	// The new user can use the API at once, and log in.
	caller, err := h.Service.Authenticate(ctx, h.RealmID, first.Email, first.APIKey)
	require.NoError(t, err)
	assert.Equal(t, first.UserID, caller.UserID)
	me, err := h.Service.GetOwnUser(ctx, caller)
	require.NoError(t, err)
	assert.Equal(t, chat.RoleModerator, me.Role)
	assert.Equal(t, "New Comer", me.FullName)
	key, err := h.Service.FetchAPIKey(ctx, h.RealmID, chat.FetchAPIKeyRequest{Username: "newcomer@example.com", Password: "a fine password"})
	require.NoError(t, err)
	assert.Equal(t, first.APIKey, key.APIKey)
	assert.Equal(t, want, subscribedIDs(t, h, caller))
	assert.True(t, inGroup(t, h, crew, first.UserID))
	assert.True(t, inGroup(t, h, groupID(t, h, chat.GroupModerators), first.UserID))

	// The link works again, for another address; not for one in use.
	second := accept(t, h, chat.AcceptInvitationRequest{Key: strings.TrimPrefix(link, "http://chat.example.com/join/"), Email: ptr("second@example.com"), FullName: "Second", Password: chattest.Password})
	assert.NotEqual(t, first.UserID, second.UserID)
	_, err = h.Service.AcceptInvitation(ctx, h.RealmID, chat.AcceptInvitationRequest{Key: link, Email: ptr("NEWCOMER@example.com"), FullName: "Again", Password: chattest.Password})
	requireError(t, err, chat.KindConflict, chat.CodeBadRequest, "Email is already in use.")
	assert.Len(t, getInvites(t, h, h.Owner), 1, "still listed")

	// A link without channels or groups gives the role's groups only,
	// and no default channels unless it asks.
	bare := createLink(t, h, h.Owner, chat.CreateInviteLinkRequest{InviteAs: ptr(chat.RoleGuest)})
	guest := accept(t, h, chat.AcceptInvitationRequest{Key: bare, Email: ptr("guest@example.com"), FullName: "Guest", Password: chattest.Password})
	gc, err := h.Service.Authenticate(ctx, h.RealmID, guest.Email, guest.APIKey)
	require.NoError(t, err)
	assert.Empty(t, subscribedIDs(t, h, gc))
	assert.False(t, inGroup(t, h, groupID(t, h, chat.GroupMembers), guest.UserID))
	assert.True(t, inGroup(t, h, groupID(t, h, chat.GroupEveryone), guest.UserID))
}

// An email invitation end to end: the account has the invited address;
// the key works once; the address's other invitations are spent; the
// creator is told by the notification bot when they asked to be.
func TestAcceptEmailInvite(t *testing.T) {
	ctx := context.Background()
	h, box := inviteHarness(t)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	channel := newChannelBy(t, h, alice, "team", false)
	sendInvites(t, h, alice, chat.SendInvitesRequest{InviteeEmails: "Invited@Example.com", StreamIDs: []int64{channel}})
	mail := box.take()[0]
	sendInvites(t, h, bob, chat.SendInvitesRequest{InviteeEmails: "invited@example.com", StreamIDs: []int64{}, NotifyReferrerOnJoin: ptr(false)})
	bobs := box.take()[0]
	require.Len(t, getInvites(t, h, h.Owner), 2)
	takeEvents(t, h)

	_, err := h.Service.AcceptInvitation(ctx, h.RealmID, chat.AcceptInvitationRequest{Key: mail.Key, Email: ptr("someone.else@example.com"), FullName: "Invited", Password: chattest.Password})
	requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, "This invitation is for another email address.")

	resp := accept(t, h, chat.AcceptInvitationRequest{Key: mail.Key, Email: ptr("INVITED@example.com"), FullName: "Invited Person", Password: chattest.Password})
	assert.Equal(t, "Invited@Example.com", resp.Email, "the invited address")
	evs := takeEvents(t, h)
	only(t, evs, "realm_user", "add")
	assert.Equal(t, ids(h.Owner, alice), only(t, evs, "invites_changed", "").To)
	// The notification bot tells alice (in a direct message whose event
	// also reaches the bot).
	var msg sent
	for _, e := range evs {
		if e.Type == "message" && slices.Contains(e.To, alice.ID) {
			msg = e
		}
	}
	require.Equal(t, []int64{alice.ID}, msg.To)
	content := msg.JSON["message"].(map[string]any)["content"].(string)
	assert.Contains(t, content, "Invited Person")
	assert.Contains(t, content, "accepted your invitation to join Zulip!")
	assert.Equal(t, "Notification Bot", msg.JSON["message"].(map[string]any)["sender_full_name"])

	caller, err := h.Service.Authenticate(ctx, h.RealmID, resp.Email, resp.APIKey)
	require.NoError(t, err)
	assert.Equal(t, []int64{channel}, subscribedIDs(t, h, caller))
	me, err := h.Service.GetOwnUser(ctx, caller)
	require.NoError(t, err)
	assert.Equal(t, chat.RoleMember, me.Role)

	// Used, and bob's invitation of the same address spent with it.
	_, err = h.Service.AcceptInvitation(ctx, h.RealmID, chat.AcceptInvitationRequest{Key: mail.Key, FullName: "Invited Again", Password: chattest.Password})
	requireError(t, err, chat.KindConflict, chat.CodeBadRequest, "The invitation link has already been used.")
	_, err = h.Service.AcceptInvitation(ctx, h.RealmID, chat.AcceptInvitationRequest{Key: bobs.Key, FullName: "Invited Again", Password: chattest.Password})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "The invitation link has been revoked.")
	assert.Empty(t, getInvites(t, h, h.Owner))

	// Without notify_referrer_on_join, no message.
	sendInvites(t, h, bob, chat.SendInvitesRequest{InviteeEmails: "quiet@example.com", StreamIDs: []int64{}, NotifyReferrerOnJoin: ptr(false)})
	quiet := box.take()[0]
	takeEvents(t, h)
	accept(t, h, chat.AcceptInvitationRequest{Key: quiet.Key, FullName: "Quiet Person", Password: chattest.Password})
	for _, e := range takeEvents(t, h) {
		assert.NotEqual(t, "message", e.Type)
	}
}

// Keys and inputs that do not make an account get clear errors, and
// nothing changes.
func TestAcceptInviteErrors(t *testing.T) {
	ctx := context.Background()
	h, box := inviteHarness(t)
	link := createLink(t, h, h.Owner, chat.CreateInviteLinkRequest{})
	sendInvites(t, h, h.Owner, chat.SendInvitesRequest{InviteeEmails: "mail@example.com", StreamIDs: []int64{}})
	mail := box.take()[0]
	elsewhere := h.NewRealm(t, "http://elsewhere.example.com")
	takeEvents(t, h)

	for _, tc := range []struct {
		req     chat.AcceptInvitationRequest
		code    string
		msg     string
		realmID int64
		kind    chat.Kind
	}{
		{chat.AcceptInvitationRequest{Key: "", Email: ptr("a@example.com"), FullName: "A Person", Password: chattest.Password}, chat.CodeRequestVariableMissing, "Missing 'key' argument", 0, 0},
		{chat.AcceptInvitationRequest{Key: "not-a-key", Email: ptr("a@example.com"), FullName: "A Person", Password: chattest.Password}, chat.CodeBadRequest, "The invitation link is malformed or invalid.", 0, 0},
		{chat.AcceptInvitationRequest{Key: strings.ToUpper(mail.Key), FullName: "A Person", Password: chattest.Password}, chat.CodeBadRequest, "The invitation link is malformed or invalid.", 0, 0},
		{chat.AcceptInvitationRequest{Key: link, FullName: "A Person", Password: chattest.Password}, chat.CodeRequestVariableMissing, "Missing 'email' argument", 0, 0},
		{chat.AcceptInvitationRequest{Key: link, Email: ptr("not an address"), FullName: "A Person", Password: chattest.Password}, chat.CodeBadRequest, "Bad name or username", 0, 0},
		{chat.AcceptInvitationRequest{Key: link, Email: ptr(h.Owner.Email), FullName: "A Person", Password: chattest.Password}, chat.CodeBadRequest, "Email is already in use.", 0, chat.KindConflict},
		{chat.AcceptInvitationRequest{Key: link, Email: ptr("a@example.com"), FullName: "A", Password: chattest.Password}, chat.CodeBadRequest, "Name too short!", 0, 0},
		{chat.AcceptInvitationRequest{Key: link, Email: ptr("a@example.com"), FullName: "A*Person", Password: chattest.Password}, chat.CodeBadRequest, "Invalid characters in name!", 0, 0},
		{chat.AcceptInvitationRequest{Key: link, Email: ptr("a@example.com"), FullName: "A Person", Password: ""}, chat.CodeBadRequest, "The password is too weak.", 0, 0},
		{chat.AcceptInvitationRequest{Key: mail.Key, FullName: "A Person", Password: "abc"}, chat.CodeBadRequest, "The password is too weak.", 0, 0},
		// Another organization's key.
		{chat.AcceptInvitationRequest{Key: link, Email: ptr("a@example.com"), FullName: "A Person", Password: chattest.Password}, chat.CodeBadRequest, "The invitation link is malformed or invalid.", elsewhere.RealmID, 0},
		{chat.AcceptInvitationRequest{Key: link, Email: ptr("a@example.com"), FullName: "A Person", Password: chattest.Password}, chat.CodeBadRequest, "Invalid organization", 99999, 0},
	} {
		realm := h.RealmID
		if tc.realmID != 0 {
			realm = tc.realmID
		}
		_, err := h.Service.AcceptInvitation(ctx, realm, tc.req)
		requireError(t, err, orInvalid(tc.kind), tc.code, tc.msg)
	}
	assert.Empty(t, takeEvents(t, h))
	assert.Len(t, getInvites(t, h, h.Owner), 2)

	h.DeactivateRealm(t)
	_, err := h.Service.AcceptInvitation(ctx, h.RealmID, chat.AcceptInvitationRequest{Key: link, Email: ptr("a@example.com"), FullName: "A Person", Password: chattest.Password})
	requireError(t, err, chat.KindUnauthenticated, chat.CodeRealmDeactivated, "")
}

// Concurrent uses of one email invitation make one account.
func TestAcceptEmailInviteConcurrently(t *testing.T) {
	h, box := inviteHarness(t)
	sendInvites(t, h, h.Owner, chat.SendInvitesRequest{InviteeEmails: "once@example.com", StreamIDs: []int64{}})
	mail := box.take()[0]
	errs := race(func(i int) error {
		_, err := h.Service.AcceptInvitation(context.Background(), h.RealmID, chat.AcceptInvitationRequest{Key: mail.Key,
			FullName: "Racer", Password: chattest.Password})
		return err
	})
	ok, refused := requireNoInternal(t, errs)
	assert.Equal(t, 1, ok, "refused: %v", refused)
	for _, msg := range refused {
		assert.Contains(t, []string{"The invitation link has already been used.", "Email is already in use."}, msg)
	}
}
