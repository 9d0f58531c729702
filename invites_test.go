package chat_test

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/chattest"
)

// mailbox is a host's invitation sender that records what it is asked to
// send (and fails while fail is set).
type mailbox struct {
	mu   sync.Mutex
	sent []chat.Invitation
	fail error
}

func (m *mailbox) send(_ context.Context, inv chat.Invitation) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	m.sent = append(m.sent, inv)
	return nil
}

func (m *mailbox) take() []chat.Invitation {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := m.sent
	m.sent = nil
	return out
}

func (m *mailbox) setFail(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.fail = err
}

// inviteHarness is a harness whose Service mails invitations to a mailbox.
func inviteHarness(t *testing.T) (*chattest.Harness, *mailbox) {
	box := &mailbox{}
	return chattest.New(t, chattest.WithServiceOptions(chat.WithInvitationSender(box.send))), box
}

var inviteLinkForm = regexp.MustCompile(`^http://chat\.example\.com/join/([a-z2-7]{24})/$`)

// createLink makes a reusable link as as and returns it.
func createLink(t *testing.T, h *chattest.Harness, as chattest.User, req chat.CreateInviteLinkRequest) string {
	t.Helper()
	resp, err := h.Service.CreateInviteLink(context.Background(), as.Caller, req)
	require.NoError(t, err)
	checkSchema(t, "POST", "/invites/multiuse", resp)
	require.Regexp(t, inviteLinkForm, resp.InviteLink)
	return resp.InviteLink
}

// sendInvites sends email invitations as as.
func sendInvites(t *testing.T, h *chattest.Harness, as chattest.User, req chat.SendInvitesRequest) {
	t.Helper()
	resp, err := h.Service.SendInvites(context.Background(), as.Caller, req)
	require.NoError(t, err)
	checkSchema(t, "POST", "/invites", resp)
}

func getInvites(t *testing.T, h *chattest.Harness, as chattest.User) []chat.Invite {
	t.Helper()
	resp, err := h.Service.GetInvites(context.Background(), as.Caller)
	require.NoError(t, err)
	checkSchema(t, "GET", "/invites", resp)
	return resp.Invites
}

func inviteIDs(list []chat.Invite) []int64 {
	out := []int64{}
	for _, inv := range list {
		out = append(out, inv.ID)
	}
	return out
}

// findInvite returns the listed invitation with the email or link.
func findInvite(t *testing.T, list []chat.Invite, emailOrLink string) chat.Invite {
	t.Helper()
	for _, inv := range list {
		if inv.Email == emailOrLink || inv.LinkURL == emailOrLink {
			return inv
		}
	}
	t.Fatalf("no invitation %q among %+v", emailOrLink, list)
	return chat.Invite{}
}

// setRealmGroup sets an organization permission to a system group.
func setRealmGroup(t *testing.T, h *chattest.Harness, req func(*chat.GroupSettingUpdate) chat.UpdateRealmRequest, group string) {
	t.Helper()
	id := groupID(t, h, group)
	_, err := h.Service.UpdateRealm(context.Background(), h.Owner.Caller, req(&chat.GroupSettingUpdate{New: &chat.GroupSettingValue{GroupID: &id}}))
	require.NoError(t, err)
}

func inviteUsersGroup(u *chat.GroupSettingUpdate) chat.UpdateRealmRequest {
	return chat.UpdateRealmRequest{CanInviteUsersGroup: u}
}

func multiuseGroup(u *chat.GroupSettingUpdate) chat.UpdateRealmRequest {
	return chat.UpdateRealmRequest{CreateMultiuseInviteGroup: u}
}

// invitationErrors is the errors field of an INVITATION_FAILED error.
func invitationFailed(t *testing.T, err error, msg string, sent bool) [][]any {
	t.Helper()
	e := requireError(t, err, chat.KindInvalid, chat.CodeInvitationFailed, msg)
	assert.Equal(t, sent, e.Fields["sent_invitations"])
	assert.Equal(t, false, e.Fields["daily_limit_reached"])
	assert.Equal(t, false, e.Fields["license_limit_reached"])
	return e.Fields["errors"].([][]any)
}

// The organization's invitation settings: the reference's defaults
// (members send email invitations, administrators create links), stored
// per organization, changed with PATCH /realm (realm update_dict events)
// and shown in register, with can_invite_others_to_realm following them.
func TestInviteSettings(t *testing.T) {
	ctx := context.Background()
	h := chattest.New(t)
	member, guest := h.NewUser(t, chat.RoleMember), h.NewUser(t, chat.RoleGuest)
	members, admins := groupID(t, h, chat.GroupMembers), groupID(t, h, chat.GroupAdministrators)

	settings, err := h.Service.GetRealmSettings(ctx, member.Caller)
	require.NoError(t, err)
	assert.Equal(t, members, *settings.RealmCanInviteUsersGroup.GroupID)
	assert.Equal(t, admins, *settings.RealmCreateMultiuseInviteGroup.GroupID)
	state := register(t, h, member, chat.RegisterRequest{FetchEventTypes: &[]string{"realm", "realm_user"}}).state
	assert.Equal(t, members, settingGroupID(state["realm_can_invite_users_group"]))
	assert.Equal(t, admins, settingGroupID(state["realm_create_multiuse_invite_group"]))
	assert.Equal(t, true, state["can_invite_others_to_realm"])
	assert.Equal(t, false, register(t, h, guest, chat.RegisterRequest{FetchEventTypes: &[]string{"realm_user"}}).state["can_invite_others_to_realm"])
	takeEvents(t, h)

	setRealmGroup(t, h, inviteUsersGroup, chat.GroupAdministrators)
	ev := only(t, takeEvents(t, h), "realm", "update_dict")
	assert.Equal(t, map[string]any{"can_invite_users_group": float64(admins)}, ev.JSON["data"])
	assert.Equal(t, activeIDs(t, h), ev.To)
	assert.Equal(t, false, register(t, h, member, chat.RegisterRequest{FetchEventTypes: &[]string{"realm_user"}}).state["can_invite_others_to_realm"])
	assert.Equal(t, true, register(t, h, h.Owner, chat.RegisterRequest{FetchEventTypes: &[]string{"realm_user"}}).state["can_invite_others_to_realm"])

	// An anonymous group holding the member.
	_, err = h.Service.UpdateRealm(ctx, h.Owner.Caller, chat.UpdateRealmRequest{CreateMultiuseInviteGroup: &chat.GroupSettingUpdate{
		New: &chat.GroupSettingValue{DirectMembers: []int64{member.ID}, DirectSubgroups: []int64{}}}})
	require.NoError(t, err)
	ev = only(t, takeEvents(t, h), "realm", "update_dict")
	assert.Equal(t, map[string]any{"create_multiuse_invite_group": map[string]any{
		"direct_members": []any{float64(member.ID)}, "direct_subgroups": []any{}}}, ev.JSON["data"])
	createLink(t, h, member, chat.CreateInviteLinkRequest{})

	// role:everyone and role:internet are refused, as in the reference.
	for _, g := range []string{chat.GroupEveryone, chat.GroupInternet} {
		id := groupID(t, h, g)
		_, err = h.Service.UpdateRealm(ctx, h.Owner.Caller, chat.UpdateRealmRequest{CanInviteUsersGroup: &chat.GroupSettingUpdate{New: &chat.GroupSettingValue{GroupID: &id}}})
		requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "'can_invite_users_group' setting cannot be set to '"+g+"' group.")
		_, err = h.Service.UpdateRealm(ctx, h.Owner.Caller, chat.UpdateRealmRequest{CreateMultiuseInviteGroup: &chat.GroupSettingUpdate{New: &chat.GroupSettingValue{GroupID: &id}}})
		requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "'create_multiuse_invite_group' setting cannot be set to '"+g+"' group.")
	}
	// Only administrators change them.
	_, err = h.Service.UpdateRealm(ctx, member.Caller, chat.UpdateRealmRequest{CanInviteUsersGroup: &chat.GroupSettingUpdate{New: &chat.GroupSettingValue{GroupID: &members}}})
	requireError(t, err, chat.KindForbidden, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")
}

// Who may create links and send invitations: members and above in the
// organization's setting; guests and bots never, whatever it holds.
func TestInvitePermissions(t *testing.T) {
	ctx := context.Background()
	h, _ := inviteHarness(t)
	owner := h.Owner
	admin := h.NewUser(t, chat.RoleAdministrator)
	moderator := h.NewUser(t, chat.RoleModerator)
	member := h.NewUser(t, chat.RoleMember)
	guest := h.NewUser(t, chat.RoleGuest)
	bot := h.NewBot(t, owner)
	n := 0
	sendOne := func(as chattest.User) error {
		n++
		_, err := h.Service.SendInvites(ctx, as.Caller, chat.SendInvitesRequest{InviteeEmails: "new" + string(rune('a'+n)) + "@example.com", StreamIDs: []int64{}})
		return err
	}
	linkBy := func(as chattest.User) error {
		_, err := h.Service.CreateInviteLink(ctx, as.Caller, chat.CreateInviteLinkRequest{})
		return err
	}
	expect := func(fn func(chattest.User) error, allowed map[*chattest.User]bool) {
		t.Helper()
		for _, u := range []*chattest.User{&owner, &admin, &moderator, &member} {
			if allowed[u] {
				require.NoError(t, fn(*u), "role %d", u.Role)
			} else {
				requireError(t, fn(*u), chat.KindForbidden, chat.CodeBadRequest, "Insufficient permission")
			}
		}
		requireError(t, fn(guest), chat.KindForbidden, chat.CodeBadRequest, "Not allowed for guest users")
		requireError(t, fn(bot), chat.KindForbidden, chat.CodeBadRequest, "This endpoint does not accept bot requests.")
	}
	all := map[*chattest.User]bool{&owner: true, &admin: true, &moderator: true, &member: true}
	adminsOnly := map[*chattest.User]bool{&owner: true, &admin: true}

	// The defaults.
	expect(sendOne, all)
	expect(linkBy, adminsOnly)

	// Changed.
	setRealmGroup(t, h, inviteUsersGroup, chat.GroupModerators)
	setRealmGroup(t, h, multiuseGroup, chat.GroupMembers)
	expect(sendOne, map[*chattest.User]bool{&owner: true, &admin: true, &moderator: true})
	expect(linkBy, all)
	setRealmGroup(t, h, inviteUsersGroup, chat.GroupNobody)
	setRealmGroup(t, h, multiuseGroup, chat.GroupOwners)
	expect(sendOne, nil)
	expect(linkBy, map[*chattest.User]bool{&owner: true})

	// Even a guest named in the setting may not.
	_, err := h.Service.UpdateRealm(ctx, h.Owner.Caller, chat.UpdateRealmRequest{CreateMultiuseInviteGroup: &chat.GroupSettingUpdate{
		New: &chat.GroupSettingValue{DirectMembers: []int64{guest.ID, member.ID}, DirectSubgroups: []int64{}}}})
	require.NoError(t, err)
	requireError(t, linkBy(guest), chat.KindForbidden, chat.CodeBadRequest, "Not allowed for guest users")
	require.NoError(t, linkBy(member))
	requireError(t, linkBy(admin), chat.KindForbidden, chat.CodeBadRequest, "Insufficient permission")
}

// invite_as: the five roles; owners invite owners, administrators invite
// administrators, and nobody invites above their own role.
func TestInviteRoles(t *testing.T) {
	ctx := context.Background()
	h, _ := inviteHarness(t)
	setRealmGroup(t, h, multiuseGroup, chat.GroupMembers)
	admin := h.NewUser(t, chat.RoleAdministrator)
	moderator := h.NewUser(t, chat.RoleModerator)
	member := h.NewUser(t, chat.RoleMember)
	ownerOnly := func(err error) {
		t.Helper()
		requireError(t, err, chat.KindForbidden, "UNAUTHORIZED_PRINCIPAL", "Must be an organization owner")
	}
	adminOnly := func(err error) {
		t.Helper()
		requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, "Must be an organization administrator")
	}
	moderatorOnly := func(err error) {
		t.Helper()
		requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, "Must be an organization moderator")
	}
	ok := func(err error) {
		t.Helper()
		require.NoError(t, err)
	}
	for _, tc := range []struct {
		as    chattest.User
		check map[int]func(error)
	}{
		{h.Owner, map[int]func(error){chat.RoleOwner: ok, chat.RoleAdministrator: ok, chat.RoleModerator: ok, chat.RoleMember: ok, chat.RoleGuest: ok}},
		{admin, map[int]func(error){chat.RoleOwner: ownerOnly, chat.RoleAdministrator: ok, chat.RoleModerator: ok, chat.RoleMember: ok, chat.RoleGuest: ok}},
		{moderator, map[int]func(error){chat.RoleOwner: ownerOnly, chat.RoleAdministrator: adminOnly, chat.RoleModerator: ok, chat.RoleMember: ok, chat.RoleGuest: ok}},
		{member, map[int]func(error){chat.RoleOwner: ownerOnly, chat.RoleAdministrator: adminOnly, chat.RoleModerator: moderatorOnly, chat.RoleMember: ok, chat.RoleGuest: ok}},
	} {
		for role, check := range tc.check {
			_, err := h.Service.CreateInviteLink(ctx, tc.as.Caller, chat.CreateInviteLinkRequest{InviteAs: ptr(role)})
			check(err)
			_, err = h.Service.SendInvites(ctx, tc.as.Caller, chat.SendInvitesRequest{InviteeEmails: "x@example.com", InviteAs: ptr(role), StreamIDs: []int64{}})
			check(err)
		}
	}
	// The role is listed as invited_as; the default is member.
	createLink(t, h, h.Owner, chat.CreateInviteLinkRequest{InviteAs: ptr(chat.RoleGuest)})
	createLink(t, h, h.Owner, chat.CreateInviteLinkRequest{})
	list := getInvites(t, h, h.Owner)
	assert.Equal(t, chat.RoleMember, list[len(list)-1].InvitedAs)
	assert.Equal(t, chat.RoleGuest, list[len(list)-2].InvitedAs)

	for _, bad := range []int{0, 500, 700, 101} {
		_, err := h.Service.CreateInviteLink(ctx, h.Owner.Caller, chat.CreateInviteLinkRequest{InviteAs: ptr(bad)})
		requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Invalid invite_as: Value error, Not in the list of possible values")
		_, err = h.Service.SendInvites(ctx, h.Owner.Caller, chat.SendInvitesRequest{InviteeEmails: "x@example.com", InviteAs: ptr(bad), StreamIDs: []int64{}})
		requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "Invalid invite_as: Value error, Not in the list of possible values")
	}
}

// Channels of an invitation: visible, not archived, and default or open
// to the inviter's adding subscribers; groups: named, active, not system
// groups, and open to the inviter's adding members. The first bad one is
// named and nothing is created.
func TestInviteChannelsAndGroups(t *testing.T) {
	ctx := context.Background()
	h, box := inviteHarness(t)
	setRealmGroup(t, h, multiuseGroup, chat.GroupMembers)
	member := h.NewUser(t, chat.RoleMember)
	other := h.NewUser(t, chat.RoleMember)
	public := newChannelBy(t, h, other, "public", false)
	private := newChannelBy(t, h, other, "private", true)
	mine := newChannelBy(t, h, member, "mine", true)
	archived := newChannel(t, h, "archived", false)
	_, err := h.Service.ArchiveChannel(ctx, h.Owner.Caller, chat.ArchiveChannelRequest{StreamID: archived})
	require.NoError(t, err)
	crew := createGroup(t, h, other, "crew")       // can_add_members_group: its creator
	open := createGroup(t, h, h.Owner, "open")     // changed below to let members add
	gone := createGroup(t, h, h.Owner, "gone")     // deactivated below
	ownGroup := createGroup(t, h, member, "mine!") // the member manages it
	members := groupID(t, h, chat.GroupMembers)
	_, err = h.Service.UpdateUserGroup(ctx, h.Owner.Caller, chat.UpdateUserGroupRequest{UserGroupID: open,
		CanAddMembersGroup: &chat.GroupSettingUpdate{New: &chat.GroupSettingValue{GroupID: &members}}})
	require.NoError(t, err)
	_, err = h.Service.DeactivateUserGroup(ctx, h.Owner.Caller, chat.DeactivateUserGroupRequest{UserGroupID: gone})
	require.NoError(t, err)
	takeEvents(t, h)

	invalid := func(id int64) string {
		return "Invalid channel ID " + strconv.FormatInt(id, 10) + ". No invites were sent."
	}
	for _, tc := range []struct {
		streams, groups []int64
		msg             string
		kind            chat.Kind
	}{
		{[]int64{public, 99999}, nil, invalid(99999), chat.KindNotFound},
		{[]int64{public, private}, nil, invalid(private), chat.KindNotFound}, // not visible to the member
		{[]int64{archived}, nil, invalid(archived), chat.KindNotFound},
		{[]int64{public}, []int64{99999}, "Invalid user group", chat.KindNotFound},
		{nil, []int64{members}, "Insufficient permission", chat.KindForbidden}, // a system group
		{nil, []int64{crew}, "Insufficient permission", chat.KindForbidden},
		{nil, []int64{open, gone}, "User group is deactivated.", 0},
		{[]int64{99999}, []int64{99999}, invalid(99999), chat.KindNotFound}, // channels first
	} {
		_, err := h.Service.CreateInviteLink(ctx, member.Caller, chat.CreateInviteLinkRequest{StreamIDs: &tc.streams, GroupIDs: &tc.groups})
		requireError(t, err, orInvalid(tc.kind), chat.CodeBadRequest, tc.msg)
		_, err = h.Service.SendInvites(ctx, member.Caller, chat.SendInvitesRequest{InviteeEmails: "x@example.com", StreamIDs: tc.streams, GroupIDs: &tc.groups})
		requireError(t, err, orInvalid(tc.kind), chat.CodeBadRequest, tc.msg)
	}
	assert.Empty(t, getInvites(t, h, member), "nothing was created")
	assert.Empty(t, box.take(), "nor mailed")
	assert.Empty(t, takeEvents(t, h))

	// Allowed: public channels, private ones the inviter is in, groups
	// the inviter manages or may add members to; repeats count once.
	createLink(t, h, member, chat.CreateInviteLinkRequest{StreamIDs: &[]int64{public, mine, public}, GroupIDs: &[]int64{open, ownGroup, open}})
	sendInvites(t, h, member, chat.SendInvitesRequest{InviteeEmails: "x@example.com", StreamIDs: []int64{mine}, GroupIDs: &[]int64{ownGroup}})
	// An administrator may name private channels they are not in and any
	// group but system ones.
	admin := h.NewUser(t, chat.RoleAdministrator)
	createLink(t, h, admin, chat.CreateInviteLinkRequest{StreamIDs: &[]int64{private}, GroupIDs: &[]int64{crew}})
	_, err = h.Service.CreateInviteLink(ctx, admin.Caller, chat.CreateInviteLinkRequest{GroupIDs: &[]int64{members}})
	requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, "Insufficient permission")
	// A default channel may be named whoever can see it.
	_, err = h.Service.UpdateChannel(ctx, h.Owner.Caller, chat.UpdateChannelRequest{StreamID: public, IsDefaultStream: ptr(true)})
	require.NoError(t, err)
	createLink(t, h, member, chat.CreateInviteLinkRequest{StreamIDs: &[]int64{public}, IncludeRealmDefaultSubscriptions: ptr(true)})
}

// Email invitations: the addresses (commas, newlines, "Name <address>",
// repeats), the mail handed to the host's sender, the listing, and the
// reference's INVITATION_FAILED answers.
func TestSendInvites(t *testing.T) {
	ctx := context.Background()
	h, box := inviteHarness(t)
	member := h.NewUser(t, chat.RoleMember)
	existing := h.NewUser(t, chat.RoleMember)
	gone := h.NewUser(t, chat.RoleMember)
	h.Deactivate(t, gone)
	takeEvents(t, h)

	sendInvites(t, h, member, chat.SendInvitesRequest{InviteeEmails: "alice@example.com, Bob Builder <bob@example.com>\nALICE@example.com,,",
		StreamIDs: []int64{}, NotifyReferrerOnJoin: ptr(false)})
	ev := only(t, takeEvents(t, h), "invites_changed", "")
	assert.Equal(t, ids(h.Owner, member), ev.To, "administrators and the inviter")
	mails := box.take()
	require.Len(t, mails, 2)
	for i, want := range []string{"alice@example.com", "bob@example.com"} {
		m := mails[i]
		assert.Equal(t, want, m.Email)
		assert.Equal(t, h.RealmID, m.RealmID)
		assert.Equal(t, "Test Organization", m.RealmName)
		assert.Equal(t, "http://chat.example.com", m.RealmURL)
		assert.Equal(t, member.ID, m.InviterID)
		assert.Equal(t, member.FullName, m.InviterName)
		assert.Equal(t, member.Email, m.InviterEmail)
		assert.Equal(t, chat.RoleMember, m.InvitedAs)
		assert.False(t, m.Resend)
		assert.Regexp(t, inviteLinkForm, m.Link)
		assert.Equal(t, "http://chat.example.com/join/"+m.Key+"/", m.Link)
		require.NotNil(t, m.ExpiresAt)
		assert.Equal(t, h.Clock.Now().Add(14400*time.Minute), *m.ExpiresAt, "the default validity")
	}
	assert.NotEqual(t, mails[0].Key, mails[1].Key)

	list := getInvites(t, h, member)
	require.Len(t, list, 2)
	alice := findInvite(t, list, "alice@example.com")
	assert.Equal(t, chat.Invite{ID: mails[0].InviteID, InvitedByUserID: member.ID, Invited: h.Clock.Now().Unix(),
		ExpiryDate: ptr(h.Clock.Now().Unix() + 14400*60), InvitedAs: chat.RoleMember, Email: "alice@example.com",
		NotifyReferrerOnJoin: ptr(false)}, alice)

	// Existing users are skipped, the others invited.
	_, err := h.Service.SendInvites(ctx, member.Caller, chat.SendInvitesRequest{
		InviteeEmails: "carol@example.com," + existing.Email + "," + gone.Email, StreamIDs: []int64{}})
	errs := invitationFailed(t, err, "Some of those addresses are already using Zulip, so we didn't send them an invitation. We did send invitations to everyone else!", true)
	assert.Equal(t, [][]any{{existing.Email, "Already has an account.", false}, {gone.Email, "Account has been deactivated.", true}}, errs)
	require.Len(t, box.take(), 1)
	assert.Len(t, getInvites(t, h, member), 3)
	only(t, takeEvents(t, h), "invites_changed", "")

	// Nobody new: nothing is sent.
	_, err = h.Service.SendInvites(ctx, member.Caller, chat.SendInvitesRequest{InviteeEmails: existing.Email + "\n" + h.Owner.Email, StreamIDs: []int64{}})
	errs = invitationFailed(t, err, "We weren't able to invite anyone.", false)
	assert.Equal(t, [][]any{{existing.Email, "Already has an account.", false}, {h.Owner.Email, "Already has an account.", false}}, errs)

	// An address that is not valid stops everything.
	_, err = h.Service.SendInvites(ctx, member.Caller, chat.SendInvitesRequest{InviteeEmails: "dave@example.com, not an address, " + existing.Email, StreamIDs: []int64{}})
	errs = invitationFailed(t, err, "Some emails did not validate, so we didn't send any invitations.", false)
	assert.Equal(t, [][]any{{"not an address", "Invalid address.", false}, {existing.Email, "Already has an account.", false}}, errs)

	for _, raw := range []string{"", " , \n"} {
		_, err = h.Service.SendInvites(ctx, member.Caller, chat.SendInvitesRequest{InviteeEmails: raw, StreamIDs: []int64{}})
		requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "You must specify at least one email address.")
	}
	assert.Empty(t, box.take())
	assert.Empty(t, takeEvents(t, h))
	assert.Len(t, getInvites(t, h, member), 3)

	// The sender fails: the invitations are kept and can be resent.
	box.setFail(errors.New("smtp down"))
	_, err = h.Service.SendInvites(ctx, member.Caller, chat.SendInvitesRequest{InviteeEmails: "erin@example.com, frank@example.com", StreamIDs: []int64{}})
	errs = invitationFailed(t, err, "Some invitation emails could not be sent; those invitations can be resent.", false)
	assert.Equal(t, [][]any{{"erin@example.com", "Failed to send the invitation email.", false}, {"frank@example.com", "Failed to send the invitation email.", false}}, errs)
	erin := findInvite(t, getInvites(t, h, member), "erin@example.com")
	_, err = h.Service.ResendEmailInvite(ctx, member.Caller, chat.InviteIDRequest{InviteID: erin.ID})
	errs = invitationFailed(t, err, "The invitation email could not be sent.", false)
	assert.Equal(t, [][]any{{"erin@example.com", "Failed to send the invitation email.", false}}, errs)
	box.setFail(nil)
	_, err = h.Service.ResendEmailInvite(ctx, member.Caller, chat.InviteIDRequest{InviteID: erin.ID})
	require.NoError(t, err)
	resent := box.take()
	require.Len(t, resent, 1)
	assert.True(t, resent[0].Resend)
	assert.Equal(t, "erin@example.com", resent[0].Email)

	// Without a sender the invitations are stored all the same.
	plain := chattest.New(t)
	sendInvites(t, plain, plain.Owner, chat.SendInvitesRequest{InviteeEmails: "x@example.com", StreamIDs: []int64{}})
	assert.Len(t, getInvites(t, plain, plain.Owner), 1)
}

// Expiry follows the injected clock: the default validity, a chosen one,
// never; an expired invitation is neither listed nor accepted.
func TestInviteExpiry(t *testing.T) {
	ctx := context.Background()
	h, box := inviteHarness(t)
	start := h.Clock.Now().Unix()
	def := createLink(t, h, h.Owner, chat.CreateInviteLinkRequest{})
	hour := createLink(t, h, h.Owner, chat.CreateInviteLinkRequest{InviteExpiresInMinutes: chat.ExpiresInMinutes(60)})
	never := createLink(t, h, h.Owner, chat.CreateInviteLinkRequest{InviteExpiresInMinutes: chat.NeverExpires()})
	now := createLink(t, h, h.Owner, chat.CreateInviteLinkRequest{InviteExpiresInMinutes: chat.ExpiresInMinutes(0)})
	sendInvites(t, h, h.Owner, chat.SendInvitesRequest{InviteeEmails: "mail@example.com", StreamIDs: []int64{}, InviteExpiresInMinutes: chat.ExpiresInMinutes(30)})
	mail := box.take()[0]

	list := getInvites(t, h, h.Owner)
	require.Len(t, list, 5, "the one that expires this second too")
	assert.Equal(t, ptr(start+14400*60), findInvite(t, list, def).ExpiryDate)
	assert.Equal(t, ptr(start+3600), findInvite(t, list, hour).ExpiryDate)
	assert.Nil(t, findInvite(t, list, never).ExpiryDate)
	assert.Equal(t, ptr(start), findInvite(t, list, now).ExpiryDate)
	assert.Equal(t, ptr(start+1800), findInvite(t, list, "mail@example.com").ExpiryDate)

	h.Clock.Advance(time.Second)
	assert.Len(t, getInvites(t, h, h.Owner), 4)
	_, err := h.Service.AcceptInvitation(ctx, h.RealmID, chat.AcceptInvitationRequest{Key: now, Email: ptr("a@example.com"), FullName: "A Person", Password: chattest.Password})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "The invitation link has expired.")

	h.Clock.Advance(30 * time.Minute) // 30 min 1 s: the email invitation is over
	_, err = h.Service.AcceptInvitation(ctx, h.RealmID, chat.AcceptInvitationRequest{Key: mail.Key, FullName: "Mail Person", Password: chattest.Password})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "The invitation link has expired.")
	_, err = h.Service.ResendEmailInvite(ctx, h.Owner.Caller, chat.InviteIDRequest{InviteID: mail.InviteID})
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "No such invitation")

	h.Clock.Set(time.Unix(start+3600, 0)) // the last valid second of the hour
	accepted, err := h.Service.AcceptInvitation(ctx, h.RealmID, chat.AcceptInvitationRequest{Key: hour, Email: ptr("b@example.com"), FullName: "B Person", Password: chattest.Password})
	require.NoError(t, err)
	require.NotZero(t, accepted.UserID)
	h.Clock.Advance(time.Second)
	_, err = h.Service.AcceptInvitation(ctx, h.RealmID, chat.AcceptInvitationRequest{Key: hour, Email: ptr("c@example.com"), FullName: "C Person", Password: chattest.Password})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "The invitation link has expired.")

	h.Clock.Advance(10*24*time.Hour - time.Hour) // past the default's 10 days
	list = getInvites(t, h, h.Owner)
	assert.Equal(t, []int64{findInvite(t, list, never).ID}, inviteIDs(list))
	_, err = h.Service.AcceptInvitation(ctx, h.RealmID, chat.AcceptInvitationRequest{Key: def, Email: ptr("d@example.com"), FullName: "D Person", Password: chattest.Password})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "The invitation link has expired.")
	h.Clock.Advance(1000 * 24 * time.Hour)
	_, err = h.Service.AcceptInvitation(ctx, h.RealmID, chat.AcceptInvitationRequest{Key: never, Email: ptr("e@example.com"), FullName: "E Person", Password: chattest.Password})
	require.NoError(t, err, "never expires")

	// Values the reference cannot represent are refused.
	_, err = h.Service.CreateInviteLink(ctx, h.Owner.Caller, chat.CreateInviteLinkRequest{InviteExpiresInMinutes: chat.ExpiresInMinutes(1 << 62)})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "invite_expires_in_minutes is too large")
	// A negative validity makes an invitation that has already expired,
	// as in the reference.
	past := createLink(t, h, h.Owner, chat.CreateInviteLinkRequest{InviteExpiresInMinutes: chat.ExpiresInMinutes(-(1 << 62))})
	assert.NotContains(t, inviteIDs(getInvites(t, h, h.Owner)), findInviteByLink(t, h, past))
}

// findInviteByLink reads an invitation's ID from the store by its link.
func findInviteByLink(t *testing.T, h *chattest.Harness, link string) int64 {
	t.Helper()
	key := inviteLinkForm.FindStringSubmatch(link)[1]
	inv, err := h.Store.GetInviteByKey(context.Background(), h.RealmID, key)
	require.NoError(t, err)
	return inv.ID
}

// GET /invites: administrators see every invitation that can still be
// accepted, others their own; guests may not look. A deactivated
// inviter's invitations are void.
func TestGetInvitesVisibility(t *testing.T) {
	ctx := context.Background()
	h, _ := inviteHarness(t)
	setRealmGroup(t, h, multiuseGroup, chat.GroupMembers)
	admin := h.NewUser(t, chat.RoleAdministrator)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	guest := h.NewUser(t, chat.RoleGuest)
	aliceLink := createLink(t, h, alice, chat.CreateInviteLinkRequest{})
	sendInvites(t, h, alice, chat.SendInvitesRequest{InviteeEmails: "from-alice@example.com", StreamIDs: []int64{}})
	bobLink := createLink(t, h, bob, chat.CreateInviteLinkRequest{})
	ownerLink := createLink(t, h, h.Owner, chat.CreateInviteLinkRequest{InviteAs: ptr(chat.RoleOwner)})

	mineOnly := getInvites(t, h, alice)
	require.Len(t, mineOnly, 2)
	assert.Equal(t, chat.Invite{ID: findInviteByLink(t, h, aliceLink), InvitedByUserID: alice.ID, Invited: h.Clock.Now().Unix(),
		ExpiryDate: ptr(h.Clock.Now().Unix() + 14400*60), InvitedAs: chat.RoleMember, LinkURL: aliceLink, IsMultiuse: true},
		findInvite(t, mineOnly, aliceLink))
	assert.Equal(t, alice.ID, findInvite(t, mineOnly, "from-alice@example.com").InvitedByUserID)
	assert.Len(t, getInvites(t, h, bob), 1)
	for _, u := range []chattest.User{admin, h.Owner} {
		all := getInvites(t, h, u)
		assert.Len(t, all, 4)
		findInvite(t, all, ownerLink)
		findInvite(t, all, bobLink)
	}
	_, err := h.Service.GetInvites(ctx, guest.Caller)
	requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, "Not allowed for guest users")

	h.Deactivate(t, bob)
	assert.Len(t, getInvites(t, h, admin), 3)
	_, err = h.Service.AcceptInvitation(ctx, h.RealmID, chat.AcceptInvitationRequest{Key: bobLink, Email: ptr("x@example.com"), FullName: "X Person", Password: chattest.Password})
	requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "The invitation link has been revoked.")
}

// Revoking: the creator or an administrator (an owner for an owner's
// invitation of an owner); each kind by its own route; invites_changed
// to administrators and the creator.
func TestRevokeInvites(t *testing.T) {
	ctx := context.Background()
	h, box := inviteHarness(t)
	setRealmGroup(t, h, multiuseGroup, chat.GroupMembers)
	admin := h.NewUser(t, chat.RoleAdministrator)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	guest := h.NewUser(t, chat.RoleGuest)
	sendInvites(t, h, alice, chat.SendInvitesRequest{InviteeEmails: "one@example.com, two@example.com", StreamIDs: []int64{}})
	mails := box.take()
	one, two := mails[0], mails[1]
	link := createLink(t, h, alice, chat.CreateInviteLinkRequest{})
	linkID := findInviteByLink(t, h, link)
	ownerLink := createLink(t, h, h.Owner, chat.CreateInviteLinkRequest{InviteAs: ptr(chat.RoleOwner)})
	ownerLinkID := findInviteByLink(t, h, ownerLink)
	takeEvents(t, h)

	revoke := func(as chattest.User, id int64) error {
		_, err := h.Service.RevokeEmailInvite(ctx, as.Caller, chat.InviteIDRequest{InviteID: id})
		return err
	}
	revokeLink := func(as chattest.User, id int64) error {
		_, err := h.Service.RevokeInviteLink(ctx, as.Caller, chat.InviteIDRequest{InviteID: id})
		return err
	}
	requireError(t, revoke(bob, one.InviteID), chat.KindForbidden, chat.CodeBadRequest, "Must be an organization administrator")
	requireError(t, revokeLink(bob, linkID), chat.KindForbidden, chat.CodeBadRequest, "Must be an organization administrator")
	requireError(t, revoke(guest, one.InviteID), chat.KindForbidden, chat.CodeBadRequest, "Not allowed for guest users")
	requireError(t, revoke(alice, linkID), chat.KindNotFound, chat.CodeBadRequest, "No such invitation")
	requireError(t, revokeLink(alice, one.InviteID), chat.KindNotFound, chat.CodeBadRequest, "No such invitation")
	requireError(t, revoke(alice, 99999), chat.KindNotFound, chat.CodeBadRequest, "No such invitation")
	requireError(t, revokeLink(admin, ownerLinkID), chat.KindForbidden, "UNAUTHORIZED_PRINCIPAL", "Must be an organization owner")
	assert.Empty(t, takeEvents(t, h))

	resp, err := h.Service.RevokeEmailInvite(ctx, alice.Caller, chat.InviteIDRequest{InviteID: one.InviteID})
	require.NoError(t, err)
	checkSchema(t, "DELETE", "/invites/{invite_id}", resp)
	ev := only(t, takeEvents(t, h), "invites_changed", "")
	assert.Equal(t, ids(h.Owner, admin, alice), ev.To)
	require.NoError(t, revoke(admin, two.InviteID), "an administrator revokes another's")
	assert.Equal(t, ids(h.Owner, admin, alice), only(t, takeEvents(t, h), "invites_changed", "").To)
	requireError(t, revoke(alice, one.InviteID), chat.KindNotFound, chat.CodeBadRequest, "No such invitation")

	resp, err = h.Service.RevokeInviteLink(ctx, admin.Caller, chat.InviteIDRequest{InviteID: linkID})
	require.NoError(t, err)
	checkSchema(t, "DELETE", "/invites/multiuse/{invite_id}", resp)
	assert.Equal(t, ids(h.Owner, admin, alice), only(t, takeEvents(t, h), "invites_changed", "").To)
	requireError(t, revokeLink(alice, linkID), chat.KindConflict, chat.CodeBadRequest, "Invitation has already been revoked")
	require.NoError(t, revokeLink(h.Owner, ownerLinkID))
	assert.Empty(t, getInvites(t, h, h.Owner))

	// Revoked keys are refused.
	for _, key := range []string{one.Key, link} {
		_, err := h.Service.AcceptInvitation(ctx, h.RealmID, chat.AcceptInvitationRequest{Key: key, Email: ptr("one@example.com"), FullName: "One Person", Password: chattest.Password})
		requireError(t, err, chat.KindInvalid, chat.CodeBadRequest, "The invitation link has been revoked.")
	}
	_, err = h.Service.ResendEmailInvite(ctx, alice.Caller, chat.InviteIDRequest{InviteID: one.InviteID})
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "No such invitation")
}

// Resending: the creator or an administrator, email invitations only,
// with the same link; the mail names the invitation's creator.
func TestResendInvite(t *testing.T) {
	ctx := context.Background()
	h, box := inviteHarness(t)
	admin := h.NewUser(t, chat.RoleAdministrator)
	alice := h.NewUser(t, chat.RoleMember)
	bob := h.NewUser(t, chat.RoleMember)
	sendInvites(t, h, alice, chat.SendInvitesRequest{InviteeEmails: "new@example.com", StreamIDs: []int64{}})
	first := box.take()[0]
	sendInvites(t, h, h.Owner, chat.SendInvitesRequest{InviteeEmails: "boss@example.com", StreamIDs: []int64{}, InviteAs: ptr(chat.RoleOwner)})
	boss := box.take()[0]
	link := createLink(t, h, h.Owner, chat.CreateInviteLinkRequest{})
	takeEvents(t, h)

	resp, err := h.Service.ResendEmailInvite(ctx, alice.Caller, chat.InviteIDRequest{InviteID: first.InviteID})
	require.NoError(t, err)
	checkSchema(t, "POST", "/invites/{invite_id}/resend", resp)
	again := box.take()
	require.Len(t, again, 1)
	assert.Equal(t, first.Link, again[0].Link, "the same link")
	assert.True(t, again[0].Resend)
	_, err = h.Service.ResendEmailInvite(ctx, admin.Caller, chat.InviteIDRequest{InviteID: first.InviteID})
	require.NoError(t, err)
	byAdmin := box.take()
	require.Len(t, byAdmin, 1)
	assert.Equal(t, alice.ID, byAdmin[0].InviterID, "still from its creator")

	_, err = h.Service.ResendEmailInvite(ctx, bob.Caller, chat.InviteIDRequest{InviteID: first.InviteID})
	requireError(t, err, chat.KindForbidden, chat.CodeBadRequest, "Must be an organization administrator")
	_, err = h.Service.ResendEmailInvite(ctx, admin.Caller, chat.InviteIDRequest{InviteID: boss.InviteID})
	requireError(t, err, chat.KindForbidden, "UNAUTHORIZED_PRINCIPAL", "Must be an organization owner")
	_, err = h.Service.ResendEmailInvite(ctx, h.Owner.Caller, chat.InviteIDRequest{InviteID: findInviteByLink(t, h, link)})
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "No such invitation")
	assert.Empty(t, box.take())
	assert.Empty(t, takeEvents(t, h), "resending changes no invitation")

	// A used invitation is gone.
	_, err = h.Service.AcceptInvitation(ctx, h.RealmID, chat.AcceptInvitationRequest{Key: first.Key, FullName: "New Person", Password: chattest.Password})
	require.NoError(t, err)
	_, err = h.Service.ResendEmailInvite(ctx, alice.Caller, chat.InviteIDRequest{InviteID: first.InviteID})
	requireError(t, err, chat.KindNotFound, chat.CodeBadRequest, "No such invitation")
}
