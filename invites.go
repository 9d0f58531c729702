package chat

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/teamchat/chat/storage"
)

// Invitations: email invitations (POST /invites), each for one address
// and one account, and reusable invitation links (POST /invites/multiuse),
// good for any number of accounts until they expire or are revoked. Both
// carry a random key in a link of the reference's form,
// <organization URL>/join/<key>/; AcceptInvitation (invites_accept.go)
// makes an account from a key.
//
// The rules and texts are the reference's (zerver/views/invite.py,
// zerver/actions/invites.py, zerver/lib/invites.py), with these choices:
//
//   - invite_as: owners may invite any role, others roles no higher than
//     their own (the spec's and the reference documentation's rule); the
//     reference's code asks an administrator for moderators too.
//   - Mail: this server sends none itself. The host application gives a
//     sender (WithInvitationSender), called after the invitations are
//     stored; without one they are stored and listed but reach nobody.
//     A sender's failure is answered with INVITATION_FAILED listing the
//     addresses; their invitations stay and can be resent.
//   - No daily or license limit applies (the reference's self-hosted
//     default): daily_limit_reached and license_limit_reached are false.
//   - An invitation whose creator is deactivated is void, as the
//     reference's deactivation expires them.
//   - Resending, like listing, sees only invitations that can still be
//     accepted.
//
// invites_changed goes to the organization's administrators and the
// invitation's creator (the reference's notify_invites_changed).

// InvitationValidityMinutes is how long an invitation is valid when the
// request does not say (the reference's INVITATION_LINK_VALIDITY_MINUTES).
const InvitationValidityMinutes = 14400

// Invitation is what a host application needs to send an email
// invitation: the address, the link (with its key) and who invites to
// which organization.
type Invitation struct {
	RealmID   int64
	RealmName string
	RealmURL  string
	InviteID  int64
	Email     string
	// Link is <organization URL>/join/<Key>/; AcceptInvitation takes Key
	// (or the link).
	Link string
	Key  string
	// InvitedAs is the role the account will have (Role* values).
	InvitedAs    int
	InviterID    int64
	InviterName  string
	InviterEmail string
	// ExpiresAt is when the invitation stops working; nil: never.
	ExpiresAt *time.Time
	// Resend tells a resend (ResendEmailInvite) from the first mail.
	Resend bool
}

// WithInvitationSender sets the function that mails email invitations
// (the host application's mailer). It is called after the invitations
// are stored, once per address; an error is reported to the inviter.
func WithInvitationSender(f func(context.Context, Invitation) error) Option {
	return func(s *Service) { s.sendInvitation = f }
}

// InviteExpiry is the invite_expires_in_minutes parameter: a number of
// minutes, or null for an invitation that never expires.
type InviteExpiry struct {
	Never   bool
	Minutes int64
}

// ExpiresInMinutes is an InviteExpiry of m minutes.
func ExpiresInMinutes(m int64) *InviteExpiry { return &InviteExpiry{Minutes: m} }

// NeverExpires is the InviteExpiry of an invitation that never expires.
func NeverExpires() *InviteExpiry { return &InviteExpiry{Never: true} }

// UnmarshalJSON reads an integer or null (the reference's
// Json[int | None]).
func (e *InviteExpiry) UnmarshalJSON(b []byte) error {
	raw := strings.TrimSpace(string(b))
	if raw == "null" {
		*e = InviteExpiry{Never: true}
		return nil
	}
	var n int64
	if err := json.Unmarshal([]byte(raw), &n); err != nil {
		return InvalidArgument("invite_expires_in_minutes is not an integer")
	}
	*e = InviteExpiry{Minutes: n}
	return nil
}

// InvitesChangedEvent tells those who manage invitations to fetch them
// again (GET /invites).
type InvitesChangedEvent struct{}

// EventType implements EventBody.
func (InvitesChangedEvent) EventType() string { return "invites_changed" }

// Invite is an invitation as GET /invites shows it: email invitations
// have email and notify_referrer_on_join, links link_url.
type Invite struct {
	ID              int64 `json:"id"`
	InvitedByUserID int64 `json:"invited_by_user_id"`
	Invited         int64 `json:"invited"`
	// ExpiryDate is null for an invitation that never expires.
	ExpiryDate           *int64 `json:"expiry_date"`
	InvitedAs            int    `json:"invited_as"`
	Email                string `json:"email,omitempty"`
	NotifyReferrerOnJoin *bool  `json:"notify_referrer_on_join,omitempty"`
	LinkURL              string `json:"link_url,omitempty"`
	IsMultiuse           bool   `json:"is_multiuse"`
}

// GetInvitesResponse is the success body of GetInvites.
type GetInvitesResponse struct {
	Invites []Invite `json:"invites"`
}

// SendInvitesRequest is the input of SendInvites (POST /invites), its
// fields in the reference's parameter order.
type SendInvitesRequest struct {
	// GroupIDs are groups the new user joins (the inviter needs the
	// permission to add members to each).
	GroupIDs *[]int64 `json:"group_ids" null:"absent"`
	// IncludeRealmDefaultSubscriptions (default false) subscribes the new
	// user to the organization's default channels too.
	IncludeRealmDefaultSubscriptions *bool `json:"include_realm_default_subscriptions"`
	// InviteAs is the new user's role (default member).
	InviteAs *int `json:"invite_as"`
	// InviteExpiresInMinutes (default InvitationValidityMinutes; null:
	// never).
	InviteExpiresInMinutes *InviteExpiry `json:"invite_expires_in_minutes"`
	// InviteeEmails are the addresses, separated by commas or newlines
	// ("Name <address>" is read as the address).
	InviteeEmails string `json:"invitee_emails"`
	// NotifyReferrerOnJoin (default true): the notification bot tells the
	// inviter when the account is made.
	NotifyReferrerOnJoin *bool `json:"notify_referrer_on_join"`
	// StreamIDs are the channels the new user is subscribed to (default
	// channels, or ones the inviter may add subscribers to).
	StreamIDs []int64 `json:"stream_ids"`
}

// CreateInviteLinkRequest is the input of CreateInviteLink (POST
// /invites/multiuse); see SendInvitesRequest for the fields.
type CreateInviteLinkRequest struct {
	GroupIDs                         *[]int64      `json:"group_ids" null:"absent"`
	IncludeRealmDefaultSubscriptions *bool         `json:"include_realm_default_subscriptions"`
	InviteAs                         *int          `json:"invite_as"`
	InviteExpiresInMinutes           *InviteExpiry `json:"invite_expires_in_minutes"`
	StreamIDs                        *[]int64      `json:"stream_ids" null:"absent"`
}

// CreateInviteLinkResponse is the success body of CreateInviteLink.
type CreateInviteLinkResponse struct {
	InviteLink string `json:"invite_link"`
}

// InviteIDRequest names one invitation (DELETE /invites/{invite_id},
// DELETE /invites/multiuse/{invite_id}, POST /invites/{invite_id}/resend).
type InviteIDRequest struct {
	InviteID int64 `json:"invite_id"`
}

// Texts of the reference.
var (
	errNoSuchInvitation    = noSuch("No such invitation")
	errInviteAdminRequired = refused("Must be an organization administrator")
	errNoEmails            = BadRequest("You must specify at least one email address.")
	errNoSubscribeOthers   = refused("You do not have permission to subscribe other users to channels.")
)

// inviteRoles are the roles an invitation may give.
var inviteRoles = []int{RoleOwner, RoleAdministrator, RoleModerator, RoleMember, RoleGuest}

// mayInviteByEmail is the permission SendInvites checks: a member or more
// (not a bot) in can_invite_users_group (register's
// can_invite_others_to_realm).
func (r reads) mayInviteByEmail(ctx context.Context, realm *storage.Realm, me *storage.User) (bool, error) {
	if requireMemberOrAdmin(me) != nil {
		return false, nil
	}
	return r.inRealmGroup(ctx, realm, realm.CanInviteUsersGroupID, me)
}

// prepareInvite runs the checks SendInvites and CreateInviteLink share,
// up to the permission (permissionGroup): the caller is a member or more,
// the role is one an invitation may give.
func (s *Service) prepareInvite(ctx context.Context, c Caller, inviteAs *int, permissionGroup func(*storage.Realm) int64) (*channelCtx, int, error) {
	me, realm, err := s.reads().member(ctx, c)
	if err != nil {
		return nil, 0, err
	}
	role := RoleMember
	if inviteAs != nil {
		role = *inviteAs
	}
	if !slices.Contains(inviteRoles, role) {
		return nil, 0, BadRequest("Invalid invite_as: Value error, Not in the list of possible values")
	}
	cc, err := s.reads().loadChannelCtx(ctx, me, realm)
	if err != nil {
		return nil, 0, s.internal(ctx, "invite", err)
	}
	allowed, err := s.reads().scopeInRealmGroup(ctx, realm.ID, permissionGroup(realm), cc.groups)
	if err != nil {
		return nil, 0, s.internal(ctx, "invite", err)
	}
	if !allowed {
		return nil, 0, errInsufficient
	}
	if err := checkInviteRole(me, role); err != nil {
		return nil, 0, err
	}
	return cc, role, nil
}

// checkInviteRole: owners are invited by owners (the reference's
// OrganizationOwnerRequiredError), administrators by administrators (its
// message), and no one invites to a role above their own.
func checkInviteRole(me *storage.User, role int) error {
	switch {
	case role == RoleOwner && me.Role != RoleOwner:
		return errOwnerRequired
	case role == RoleAdministrator && !isAdmin(me):
		return errInviteAdminRequired
	case role < me.Role:
		return refused("Must be an organization moderator")
	}
	return nil
}

// expiry is the invitation's last valid second (nil: never), from the
// parameter (nil: the default). Like the reference it takes any integer
// (zero or less makes an invitation that has already expired); what the
// reference cannot represent (beyond the year 9999) is refused.
func (s *Service) expiry(e *InviteExpiry) (*int64, error) {
	if e == nil {
		e = ExpiresInMinutes(InvitationValidityMinutes)
	}
	if e.Never {
		return nil, nil
	}
	const maxUnix = 253402300799 // 9999-12-31T23:59:59Z
	now := s.nowUnix()
	if e.Minutes > (maxUnix-now)/60 {
		return nil, InvalidArgument("invite_expires_in_minutes is too large")
	}
	if e.Minutes <= -now/60 {
		return new(int64(0)), nil // long expired (and no overflow)
	}
	return new(now + e.Minutes*60), nil
}

// inviteChannels checks the channels of a new invitation (the
// reference's access_streams_for_invite): each must be one the caller
// can see (and not archived), and a default channel or one the caller may
// add subscribers to.
func (r reads) inviteChannels(ctx context.Context, cc *channelCtx, ids []int64) ([]int64, error) {
	var ordered []int64
	for _, id := range ids {
		if !slices.Contains(ordered, id) {
			ordered = append(ordered, id)
		}
	}
	if len(ordered) == 0 {
		return nil, nil
	}
	found, err := r.st.GetStreamsByID(ctx, cc.realm.ID, uniqueSorted(ordered))
	if err != nil {
		return nil, r.s.internal(ctx, "invite channels", err)
	}
	byID := map[int64]*storage.Stream{}
	for i := range found {
		byID[found[i].ID] = &found[i]
	}
	for _, id := range ordered {
		ch := byID[id]
		if ch == nil || ch.IsArchived || !cc.canSee(ch) {
			return nil, noSuch("Invalid channel ID %d. No invites were sent.", id)
		}
	}
	for _, id := range ordered {
		if ch := byID[id]; !ch.IsDefault && !cc.canAddSubscribers(ch) {
			return nil, errNoSubscribeOthers
		}
	}
	return ordered, nil
}

// inviteGroups checks the groups of a new invitation (the reference's
// access_user_groups_for_invite): named groups, not system groups nor
// deactivated, that the caller may add members to.
func (r reads) inviteGroups(ctx context.Context, cc *channelCtx, ids *[]int64) ([]int64, error) {
	if ids == nil {
		return nil, nil
	}
	var out []int64
	for _, id := range *ids {
		if slices.Contains(out, id) {
			continue
		}
		scope, g, err := r.groupForUpdate(ctx, cc.realm.ID, id, cc.me)
		if err != nil {
			return nil, r.s.internal(ctx, "invite groups", err)
		}
		if g.Deactivated {
			return nil, BadRequest("User group is deactivated.")
		}
		if !scope.canManage(cc.me, g) && !scope.in(g.CanAddMembersGroupID) {
			return nil, errInsufficient
		}
		out = append(out, id)
	}
	return out, nil
}

// newInviteKey is a random key: 120 bits as 24 lowercase base32
// characters, the reference's confirmation key form.
func newInviteKey() (string, error) {
	b := make([]byte, 15)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return strings.ToLower(base32.StdEncoding.EncodeToString(b)), nil
}

// inviteLink is the reference's link form.
func inviteLink(realm *storage.Realm, key string) string {
	return strings.TrimSuffix(realm.URL, "/") + "/join/" + key + "/"
}

// emailWithName is the reference's "Name <address>" form.
var emailWithName = regexp.MustCompile(`<(.*)>`)

// inviteeEmails splits invitee_emails at commas and newlines (the
// reference's get_invitee_emails_set), keeping each address once
// (compared case-insensitively) in order, and no empty ones.
func inviteeEmails(raw string) []string {
	var out []string
	seen := map[string]bool{}
	for _, part := range regexp.MustCompile(`[,\n]`).Split(raw, -1) {
		if m := emailWithName.FindStringSubmatch(part); m != nil {
			part = m[1]
		}
		email := strings.TrimSpace(part)
		if email == "" || seen[storage.Fold(email)] {
			continue
		}
		seen[storage.Fold(email)] = true
		out = append(out, email)
	}
	return out
}

// SendInvites invites people by email. Members and above in the
// organization's can_invite_users_group may; see the package comment
// on invitations for the rules. Addresses that are not valid fail the
// whole request; addresses of existing users are skipped (INVITATION_FAILED
// with sent_invitations true when others were invited).
func (s *Service) SendInvites(ctx context.Context, c Caller, req SendInvitesRequest) (*EmptyResponse, error) {
	cc, role, err := s.prepareInvite(ctx, c, req.InviteAs, func(r *storage.Realm) int64 { return r.CanInviteUsersGroupID })
	if err != nil {
		return nil, err
	}
	me, realm := cc.me, cc.realm
	expires, err := s.expiry(req.InviteExpiresInMinutes)
	if err != nil {
		return nil, err
	}
	emails := inviteeEmails(req.InviteeEmails)
	if len(emails) == 0 {
		return nil, errNoEmails
	}
	streams, err := s.reads().inviteChannels(ctx, cc, req.StreamIDs)
	if err != nil {
		return nil, err
	}
	groups, err := s.reads().inviteGroups(ctx, cc, req.GroupIDs)
	if err != nil {
		return nil, err
	}

	good, invalid, skipped, err := s.reads().invitees(ctx, realm.ID, emails)
	if err != nil {
		return nil, err
	}
	if len(invalid) > 0 {
		return nil, invitationFailed("Some emails did not validate, so we didn't send any invitations.", append(invalid, skipped...), false)
	}
	if len(good) == 0 {
		return nil, invitationFailed("We weren't able to invite anyone.", skipped, false)
	}

	notify := flag(req.NotifyReferrerOnJoin, true)
	defaults := flag(req.IncludeRealmDefaultSubscriptions, false)
	var created []*storage.Invite
	err = s.write(ctx, realm.ID, func(w *writeTx) error {
		created = nil
		for _, email := range good {
			key, err := newInviteKey()
			if err != nil {
				return err
			}
			inv := &storage.Invite{RealmID: realm.ID, ReferrerID: me.ID, Email: email, Key: key, InvitedAs: role,
				Created: s.nowUnix(), ExpiresAt: expires, IncludeRealmDefaultSubscriptions: defaults,
				NotifyReferrerOnJoin: notify, StreamIDs: streams, GroupIDs: groups}
			if err := w.CreateInvite(ctx, inv); err != nil {
				return err
			}
			created = append(created, inv)
		}
		w.emit(admins.plus(me.ID), InvitesChangedEvent{})
		return nil
	})
	if err != nil {
		return nil, s.internal(ctx, "send invites", err)
	}

	var failed [][]any
	for _, inv := range created {
		if err := s.mailInvitation(ctx, realm, me, inv, false); err != nil {
			failed = append(failed, []any{inv.Email, "Failed to send the invitation email.", false})
		}
	}
	switch {
	case len(failed) > 0:
		msg := "Some invitation emails could not be sent; those invitations can be resent."
		return nil, invitationFailed(msg, append(skipped, failed...), len(failed) < len(created))
	case len(skipped) > 0:
		return nil, invitationFailed("Some of those addresses are already using Zulip, so we didn't send them an invitation. "+
			"We did send invitations to everyone else!", skipped, true)
	}
	return &EmptyResponse{}, nil
}

// mailInvitation hands an email invitation to the host's sender (a
// failure is logged and returned); without a sender it does nothing.
func (s *Service) mailInvitation(ctx context.Context, realm *storage.Realm, inviter *storage.User, inv *storage.Invite, resend bool) error {
	if s.sendInvitation == nil {
		s.log.WarnContext(ctx, "no invitation sender configured: the invitation was stored but not mailed", "invite_id", inv.ID)
		return nil
	}
	msg := Invitation{RealmID: realm.ID, RealmName: realm.Name, RealmURL: realm.URL, InviteID: inv.ID, Email: inv.Email,
		Link: inviteLink(realm, inv.Key), Key: inv.Key, InvitedAs: inv.InvitedAs,
		InviterID: inviter.ID, InviterName: inviter.FullName, InviterEmail: inviter.Email, Resend: resend}
	if inv.ExpiresAt != nil {
		t := time.Unix(*inv.ExpiresAt, 0).UTC()
		msg.ExpiresAt = &t
	}
	if err := s.sendInvitation(ctx, msg); err != nil {
		s.log.ErrorContext(ctx, "invitation sender failed", "invite_id", inv.ID, "err", err)
		return err
	}
	return nil
}

// CreateInviteLink creates a reusable invitation link. Members and above
// in the organization's create_multiuse_invite_group may (by default
// administrators); the role, channels and groups follow the rules of
// SendInvites.
func (s *Service) CreateInviteLink(ctx context.Context, c Caller, req CreateInviteLinkRequest) (*CreateInviteLinkResponse, error) {
	cc, role, err := s.prepareInvite(ctx, c, req.InviteAs, func(r *storage.Realm) int64 { return r.CreateMultiuseInviteGroupID })
	if err != nil {
		return nil, err
	}
	me, realm := cc.me, cc.realm
	expires, err := s.expiry(req.InviteExpiresInMinutes)
	if err != nil {
		return nil, err
	}
	var ids []int64
	if req.StreamIDs != nil {
		ids = *req.StreamIDs
	}
	streams, err := s.reads().inviteChannels(ctx, cc, ids)
	if err != nil {
		return nil, err
	}
	groups, err := s.reads().inviteGroups(ctx, cc, req.GroupIDs)
	if err != nil {
		return nil, err
	}
	key, err := newInviteKey()
	if err != nil {
		return nil, s.internal(ctx, "create invite link", err)
	}
	inv := &storage.Invite{RealmID: realm.ID, ReferrerID: me.ID, IsMultiuse: true, Key: key, InvitedAs: role,
		Created: s.nowUnix(), ExpiresAt: expires, IncludeRealmDefaultSubscriptions: flag(req.IncludeRealmDefaultSubscriptions, false),
		StreamIDs: streams, GroupIDs: groups}
	err = s.write(ctx, realm.ID, func(w *writeTx) error {
		if err := w.CreateInvite(ctx, inv); err != nil {
			return err
		}
		w.emit(admins.plus(me.ID), InvitesChangedEvent{})
		return nil
	})
	if err != nil {
		return nil, s.internal(ctx, "create invite link", err)
	}
	return &CreateInviteLinkResponse{InviteLink: inviteLink(realm, key)}, nil
}

// GetInvites lists the invitations the caller manages that can still be
// accepted: administrators all of the organization's, others their own.
// Guests and bots may not.
func (s *Service) GetInvites(ctx context.Context, c Caller) (*GetInvitesResponse, error) {
	return s.reads().getInvites(ctx, c)
}

// getInvites is GetInvites reading through r.
func (r reads) getInvites(ctx context.Context, c Caller) (*GetInvitesResponse, error) {
	me, realm, err := r.member(ctx, c)
	if err != nil {
		return nil, err
	}
	f := storage.InviteFilter{ValidAt: r.s.nowUnix()}
	if !isAdmin(me) {
		f.ReferrerID = me.ID
	}
	rows, err := r.st.ListInvites(ctx, realm.ID, f)
	if err != nil {
		return nil, r.s.internal(ctx, "get invites", err)
	}
	out := &GetInvitesResponse{Invites: make([]Invite, 0, len(rows))}
	for _, row := range rows {
		v := Invite{ID: row.ID, InvitedByUserID: row.ReferrerID, Invited: row.Created, ExpiryDate: row.ExpiresAt,
			InvitedAs: row.InvitedAs, IsMultiuse: row.IsMultiuse}
		if row.IsMultiuse {
			v.LinkURL = inviteLink(realm, row.Key)
		} else {
			v.Email, v.NotifyReferrerOnJoin = row.Email, new(row.NotifyReferrerOnJoin)
		}
		out.Invites = append(out.Invites, v)
	}
	return out, nil
}

// manageableInvite loads an invitation the caller may revoke or resend
// (the reference's access_invite_by_id and access_multiuse_invite_by_id):
// their own, or, for administrators, anyone's (an owner's invitation of
// an owner takes an owner).
func (r reads) manageableInvite(ctx context.Context, me *storage.User, realm *storage.Realm, id int64, multiuse bool) (*storage.Invite, error) {
	inv, err := r.st.GetInvite(ctx, realm.ID, id)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, errNoSuchInvitation
	} else if err != nil {
		return nil, err
	}
	// An email invitation that was used or revoked is gone, as the
	// reference deletes it.
	if inv.IsMultiuse != multiuse || !multiuse && inv.Status != storage.InviteActive {
		return nil, errNoSuchInvitation
	}
	if inv.ReferrerID != me.ID {
		if inv.InvitedAs == RoleOwner && me.Role != RoleOwner {
			return nil, errOwnerRequired
		}
		if !isAdmin(me) {
			return nil, errInviteAdminRequired
		}
	}
	if inv.Status == storage.InviteRevoked {
		return nil, clash("Invitation has already been revoked")
	}
	return inv, nil
}

// RevokeEmailInvite revokes an email invitation (its creator, or an
// administrator).
func (s *Service) RevokeEmailInvite(ctx context.Context, c Caller, req InviteIDRequest) (*EmptyResponse, error) {
	return s.revokeInvite(ctx, c, req.InviteID, false)
}

// RevokeInviteLink revokes a reusable invitation link (its creator, or an
// administrator).
func (s *Service) RevokeInviteLink(ctx context.Context, c Caller, req InviteIDRequest) (*EmptyResponse, error) {
	return s.revokeInvite(ctx, c, req.InviteID, true)
}

func (s *Service) revokeInvite(ctx context.Context, c Caller, id int64, multiuse bool) (*EmptyResponse, error) {
	me, realm, err := s.reads().member(ctx, c)
	if err != nil {
		return nil, err
	}
	err = s.write(ctx, realm.ID, func(w *writeTx) error {
		inv, err := w.reads().manageableInvite(ctx, me, realm, id, multiuse)
		if err != nil {
			return err
		}
		if err := w.SetInviteStatus(ctx, realm.ID, inv.ID, storage.InviteRevoked); err != nil {
			return err
		}
		w.emit(admins.plus(inv.ReferrerID), InvitesChangedEvent{})
		return nil
	})
	if err != nil {
		return nil, s.internal(ctx, "revoke invite", err)
	}
	return &EmptyResponse{}, nil
}

// ResendEmailInvite mails an email invitation again, with the same link
// and expiry (its creator, or an administrator). An invitation that can
// no longer be accepted is not found.
func (s *Service) ResendEmailInvite(ctx context.Context, c Caller, req InviteIDRequest) (*EmptyResponse, error) {
	r := s.reads()
	me, realm, err := r.member(ctx, c)
	if err != nil {
		return nil, err
	}
	inv, inviter, err := r.resendableInvite(ctx, me, realm, req.InviteID)
	if err != nil {
		return nil, err
	}
	if err := s.mailInvitation(ctx, realm, inviter, inv, true); err != nil {
		return nil, invitationFailed("The invitation email could not be sent.",
			[][]any{{inv.Email, "Failed to send the invitation email.", false}}, false)
	}
	return &EmptyResponse{}, nil
}

// resendableInvite is an email invitation me may resend, with its
// inviter: one that can still be accepted (not expired, its inviter
// active), or errNoSuchInvitation.
func (r reads) resendableInvite(ctx context.Context, me *storage.User, realm *storage.Realm, id int64) (*storage.Invite, *storage.User, error) {
	inv, err := r.manageableInvite(ctx, me, realm, id, false)
	if err != nil {
		return nil, nil, r.s.internal(ctx, "resend invite", err)
	}
	if inv.ExpiresAt != nil && *inv.ExpiresAt < r.s.nowUnix() {
		return nil, nil, errNoSuchInvitation
	}
	inviter := me
	if inv.ReferrerID != me.ID {
		if inviter, err = r.st.GetUser(ctx, realm.ID, inv.ReferrerID); err != nil {
			return nil, nil, r.s.internal(ctx, "resend invite", err)
		}
		if !inviter.IsActive {
			return nil, nil, errNoSuchInvitation
		}
	}
	return inv, inviter, nil
}

// invitees sorts an invitation's addresses (the reference's
// validate_email_is_valid, then get_existing_user_errors): good ones,
// invalid ones, and those of existing accounts (skipped), each with its
// reason in the reference's INVITATION_FAILED form.
func (r reads) invitees(ctx context.Context, realmID int64, emails []string) (good []string, invalid, skipped [][]any, err error) {
	for _, email := range emails {
		if _, err := r.s.checkNewEmail(email); err != nil {
			invalid = append(invalid, []any{email, "Invalid address.", false})
			continue
		}
		u, err := r.st.GetUserByEmail(ctx, realmID, email)
		switch {
		case errors.Is(err, storage.ErrNotFound):
			good = append(good, email)
		case err != nil:
			return nil, nil, nil, r.s.internal(ctx, "send invites", err)
		case u.IsActive:
			skipped = append(skipped, []any{email, "Already has an account.", false})
		default:
			skipped = append(skipped, []any{email, "Account has been deactivated.", true})
		}
	}
	return good, invalid, skipped, nil
}
