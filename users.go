package chat

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"net/mail"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/teamchat/chat/storage"
)

// Roles, as integers on the wire.
const (
	RoleOwner         = 100
	RoleAdministrator = 200
	RoleModerator     = 300
	RoleMember        = 400
	RoleGuest         = 600
)

// Bot types.
const (
	BotTypeGeneric         = 1
	BotTypeIncomingWebhook = 2
	BotTypeOutgoingWebhook = 3
	BotTypeEmbedded        = 4
)

func isAdmin(u *storage.User) bool { return u.Role == RoleOwner || u.Role == RoleAdministrator }

// ProfileFieldValue is one custom profile field value of a user.
type ProfileFieldValue struct {
	Value         string  `json:"value"`
	RenderedValue *string `json:"rendered_value,omitempty"`
}

// User is a user as other users see it (GET /users and GET /users/{id}).
type User struct {
	UserID        int64   `json:"user_id"`
	Email         string  `json:"email"`
	DeliveryEmail *string `json:"delivery_email"`
	FullName      string  `json:"full_name"`
	DateJoined    string  `json:"date_joined"`
	IsActive      bool    `json:"is_active"`
	IsOwner       bool    `json:"is_owner"`
	IsAdmin       bool    `json:"is_admin"`
	IsGuest       bool    `json:"is_guest"`
	IsBot         bool    `json:"is_bot"`
	BotType       *int    `json:"bot_type"`
	// BotOwnerID is present (possibly null) for bots only.
	BotOwnerID    *OptionalID `json:"bot_owner_id,omitempty"`
	Role          int         `json:"role"`
	Timezone      string      `json:"timezone"`
	AvatarURL     *string     `json:"avatar_url"`
	AvatarVersion int         `json:"avatar_version"`
	// ProfileData is present for humans when custom profile fields were asked for.
	ProfileData map[string]ProfileFieldValue `json:"profile_data,omitzero"`
	// IsSystemBot is set for the internal bots in register's
	// cross_realm_bots only.
	IsSystemBot *bool `json:"is_system_bot,omitempty"`
}

// OptionalID is an ID that is present on the wire but may be null.
type OptionalID struct{ ID *int64 }

// MarshalJSON writes the ID or null.
func (o OptionalID) MarshalJSON() ([]byte, error) {
	if o.ID == nil {
		return []byte("null"), nil
	}
	return []byte(fmt.Sprint(*o.ID)), nil
}

// OwnUser is the success body of GetOwnUser.
type OwnUser struct {
	AvatarURL     string `json:"avatar_url"`
	AvatarVersion int    `json:"avatar_version"`
	Email         string `json:"email"`
	FullName      string `json:"full_name"`
	IsAdmin       bool   `json:"is_admin"`
	IsOwner       bool   `json:"is_owner"`
	Role          int    `json:"role"`
	IsGuest       bool   `json:"is_guest"`
	IsBot         bool   `json:"is_bot"`
	IsActive      bool   `json:"is_active"`
	Timezone      string `json:"timezone"`
	DateJoined    string `json:"date_joined"`
	// MaxMessageID is the ID of the newest message the user received, or -1.
	MaxMessageID  int64  `json:"max_message_id"`
	UserID        int64  `json:"user_id"`
	DeliveryEmail string `json:"delivery_email"`
	// ProfileData is present for humans only.
	ProfileData map[string]ProfileFieldValue `json:"profile_data,omitzero"`
	// Settings are the caller's personal settings. They are for in-process
	// callers (the REST API serves them at GET /settings).
	Settings Settings `json:"-"`
}

// GetOwnUser returns the caller's own account.
func (s *Service) GetOwnUser(ctx context.Context, c Caller) (*OwnUser, error) {
	return s.reads().getOwnUser(ctx, c)
}

// getOwnUser is GetOwnUser reading through r.
func (r reads) getOwnUser(ctx context.Context, c Caller) (*OwnUser, error) {
	me, realm, err := r.actor(ctx, c)
	if err != nil {
		return nil, err
	}
	resp := &OwnUser{
		AvatarURL:     avatarURL(me),
		AvatarVersion: me.AvatarVersion,
		Email:         apiEmail(realm, me),
		FullName:      me.FullName,
		IsAdmin:       isAdmin(me),
		IsOwner:       me.Role == RoleOwner,
		Role:          me.Role,
		IsGuest:       me.Role == RoleGuest,
		IsBot:         me.IsBot,
		IsActive:      me.IsActive,
		Timezone:      me.Timezone,
		DateJoined:    isoTime(me.DateJoined),
		UserID:        me.ID,
		DeliveryEmail: me.Email,
		Settings:      settingsOf(me),
	}
	if resp.MaxMessageID, err = r.maxMessageID(ctx, realm.ID, me.ID); err != nil {
		return nil, r.s.internal(ctx, "get own user", err)
	}
	if !me.IsBot {
		values, err := r.c.profileValues.Load(realm.ID, me.ID, func() ([]storage.ProfileFieldValue, error) {
			return r.st.ListProfileFieldValues(ctx, realm.ID, []int64{me.ID})
		})
		if err != nil {
			return nil, r.s.internal(ctx, "get own user", err)
		}
		resp.ProfileData = profileData(values)[me.ID]
		if resp.ProfileData == nil {
			resp.ProfileData = map[string]ProfileFieldValue{}
		}
	}
	return resp, nil
}

// GetUsersRequest is the input of GetUsers.
type GetUsersRequest struct {
	// ClientGravatar (default true): send avatar_url null for users on
	// Gravatar whose email the caller can see, so the client computes it.
	ClientGravatar *bool `json:"client_gravatar"`
	// IncludeCustomProfileFields (default false) adds profile_data.
	IncludeCustomProfileFields *bool `json:"include_custom_profile_fields"`
}

// GetUsersResponse is the success body of GetUsers.
type GetUsersResponse struct {
	Members []User `json:"members"`
}

// GetUsers lists every user of the organization, deactivated ones included
// (with is_active false), ordered by ID. The internal bots are not the
// organization's users (see system_bots.go).
func (s *Service) GetUsers(ctx context.Context, c Caller, req GetUsersRequest) (*GetUsersResponse, error) {
	members, _, err := s.reads().listUsers(ctx, c, req)
	if err != nil {
		return nil, err
	}
	return &GetUsersResponse{Members: members}, nil
}

// listUsers is GetUsers, with the internal bots apart (register's
// cross_realm_bots).
func (r reads) listUsers(ctx context.Context, c Caller, req GetUsersRequest) (members, systemBots []User, err error) {
	me, realm, err := r.actor(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	all, err := r.st.ListUsers(ctx, realm.ID)
	if err != nil {
		return nil, nil, r.s.internal(ctx, "get users", err)
	}
	opts, err := r.userViewOptions(ctx, realm.ID, nil, req.ClientGravatar, req.IncludeCustomProfileFields)
	if err != nil {
		return nil, nil, err
	}
	members, systemBots = make([]User, 0, len(all)), []User{}
	for i := range all {
		if all[i].IsSystemBot {
			systemBots = append(systemBots, crossRealmBot(realm, me, &all[i], opts))
			continue
		}
		members = append(members, viewUser(realm, me, &all[i], opts))
	}
	return members, systemBots, nil
}

// GetUserRequest is the input of GetUser.
type GetUserRequest struct {
	UserID                     int64 `json:"user_id"`
	ClientGravatar             *bool `json:"client_gravatar"`
	IncludeCustomProfileFields *bool `json:"include_custom_profile_fields"`
}

// GetUserByEmailRequest is the input of GetUserByEmail.
type GetUserByEmailRequest struct {
	// Email is the user's real email (when the caller may see it) or the
	// API email (user{id}@{host} when real emails are hidden).
	Email                      string `json:"email"`
	ClientGravatar             *bool  `json:"client_gravatar"`
	IncludeCustomProfileFields *bool  `json:"include_custom_profile_fields"`
}

// GetUserResponse is the success body of GetUser and GetUserByEmail.
type GetUserResponse struct {
	User User `json:"user"`
}

var errNoSuchUser = noSuch("No such user")

// user is a user of the organization, active or not: errNoSuchUser when
// there is none (op names the operation in an internal error).
func (r reads) user(ctx context.Context, realmID, id int64, op string) (*storage.User, error) {
	u, err := r.st.GetUser(ctx, realmID, id)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, errNoSuchUser
	} else if err != nil {
		return nil, r.s.internal(ctx, op, err)
	}
	return u, nil
}

// organization is an organization named by an unauthenticated call,
// deactivated or not: BAD_REQUEST "Invalid organization" when there is
// none.
func (r reads) organization(ctx context.Context, realmID int64, op string) (*storage.Realm, error) {
	realm, err := r.st.GetRealm(ctx, realmID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, BadRequest("Invalid organization")
	} else if err != nil {
		return nil, r.s.internal(ctx, op, err)
	}
	return realm, nil
}

// GetUser returns one user by ID, deactivated users and bots included.
// An unknown ID answers BAD_REQUEST "No such user".
func (s *Service) GetUser(ctx context.Context, c Caller, req GetUserRequest) (*GetUserResponse, error) {
	return s.reads().getUser(ctx, c, req)
}

// getUser is GetUser reading through r.
func (r reads) getUser(ctx context.Context, c Caller, req GetUserRequest) (*GetUserResponse, error) {
	me, realm, err := r.actor(ctx, c)
	if err != nil {
		return nil, err
	}
	u, err := r.user(ctx, realm.ID, req.UserID, "get user")
	if err != nil {
		return nil, err
	}
	return r.getUserResponse(ctx, realm, me, u, req.ClientGravatar, req.IncludeCustomProfileFields)
}

func (r reads) getUserResponse(ctx context.Context, realm *storage.Realm, me, u *storage.User, clientGravatar, profile *bool) (*GetUserResponse, error) {
	opts, err := r.userViewOptions(ctx, realm.ID, []int64{u.ID}, clientGravatar, profile)
	if err != nil {
		return nil, err
	}
	return &GetUserResponse{User: viewUser(realm, me, u, opts)}, nil
}

// GetUserByEmail returns one user by email. The real email only finds the
// user when the caller may see it, so the lookup never reveals a hidden
// address; the API email always works.
func (s *Service) GetUserByEmail(ctx context.Context, c Caller, req GetUserByEmailRequest) (*GetUserResponse, error) {
	me, realm, err := s.reads().actor(ctx, c)
	if err != nil {
		return nil, err
	}
	u, err := s.reads().userByAPIOrRealEmail(ctx, realm, me, req.Email)
	if err != nil {
		return nil, err
	}
	return s.reads().getUserResponse(ctx, realm, me, u, req.ClientGravatar, req.IncludeCustomProfileFields)
}

// userByAPIOrRealEmail resolves an email as the viewer may use it: the real
// email of a user whose email the viewer can see, or a dummy API email.
func (r reads) userByAPIOrRealEmail(ctx context.Context, realm *storage.Realm, viewer *storage.User, email string) (*storage.User, error) {
	u, err := r.st.GetUserByEmail(ctx, realm.ID, email)
	if err == nil && canSeeEmail(realm, viewer, u) {
		return u, nil
	}
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return nil, r.s.internal(ctx, "user by email", err)
	}
	var id int64
	local, domain, ok := strings.Cut(strings.ToLower(email), "@")
	if ok && domain == dummyEmailDomain(realm) && strings.HasPrefix(local, "user") {
		if _, err := fmt.Sscanf(local, "user%d", &id); err == nil && fmt.Sprintf("user%d", id) == local {
			u, err := r.st.GetUser(ctx, realm.ID, id)
			if err == nil && apiEmail(realm, u) == strings.ToLower(email) {
				return u, nil
			}
			if err != nil && !errors.Is(err, storage.ErrNotFound) {
				return nil, r.s.internal(ctx, "user by email", err)
			}
		}
	}
	return nil, errNoSuchUser
}

// CreateUserRequest is the input of CreateUser.
type CreateUserRequest struct {
	Email    string `json:"email"`
	Password string `json:"password"`
	FullName string `json:"full_name"`
}

// CreateUserResponse is the success body of CreateUser.
type CreateUserResponse struct {
	UserID int64 `json:"user_id"`
}

// CreateUser creates a member account with a password. Organization
// administrators may call it, and so may users the server has granted the
// create-users permission (storage.User.CanCreateUsers). The reference asks
// for both; we let either suffice, as our issue tracker decided.
func (s *Service) CreateUser(ctx context.Context, c Caller, req CreateUserRequest) (*CreateUserResponse, error) {
	me, realm, err := s.reads().actor(ctx, c)
	if err != nil {
		return nil, err
	}
	if !isAdmin(me) && !me.CanCreateUsers {
		return nil, errAdminRequired
	}
	if req.Password == "" {
		return nil, s.checkPassword("")
	}
	u, _, err := s.addUser(ctx, realm, ProvisionUserRequest{Email: req.Email, FullName: req.FullName, Password: req.Password})
	if err != nil {
		return nil, err
	}
	return &CreateUserResponse{UserID: u.ID}, nil
}

// checkNewEmail validates an address for a new account.
func (s *Service) checkNewEmail(email string) (string, error) {
	email = strings.TrimSpace(email)
	a, err := mail.ParseAddress(email)
	if err != nil || a.Address != email || a.Name != "" || !strings.Contains(email[strings.LastIndex(email, "@")+1:], ".") && !strings.HasSuffix(email, "@localhost") {
		return "", BadRequest("Bad name or username")
	}
	if len(email) > 254 || isSystemBotAddress(email) {
		return "", BadRequest("Bad name or username")
	}
	return email, nil
}

// checkFullName applies the reference's full-name rules (facts §7).
func (s *Service) checkFullName(raw string) (string, error) {
	name := strings.TrimSpace(raw)
	n := utf8.RuneCountInString(name)
	if n > s.limits.MaxUserNameLength {
		return "", BadRequest("Name too long!")
	}
	if n < s.limits.MinUserNameLength {
		return "", BadRequest("Name too short!")
	}
	if strings.ContainsAny(name, "*`\\>\"@") {
		return "", BadRequest("Invalid characters in name!")
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return "", BadRequest("Invalid characters in name!")
		}
	}
	if i := strings.LastIndexByte(name, '|'); i >= 0 && i < len(name)-1 && strings.Trim(name[i+1:], "0123456789") == "" {
		return "", BadRequest("Invalid format!")
	}
	return name, nil
}

// checkPassword applies the password length rules.
func (s *Service) checkPassword(p string) error {
	n := utf8.RuneCountInString(p)
	if n < s.limits.MinPasswordLength || strings.TrimSpace(p) == "" {
		return BadRequest("The password is too weak.")
	}
	if n > s.limits.MaxPasswordLength {
		return BadRequest("The password is too long (limit: %d characters).", s.limits.MaxPasswordLength)
	}
	return nil
}

type userView struct {
	clientGravatar, profileFields bool
	// profile holds the custom profile values by user, when asked for.
	profile map[int64]map[string]ProfileFieldValue
}

// userViewOptions reads the view parameters (client_gravatar default true,
// include_custom_profile_fields default false) and loads the profile values
// of userIDs (nil: the whole realm) when they are asked for.
func (r reads) userViewOptions(ctx context.Context, realmID int64, userIDs []int64, clientGravatar, profile *bool) (userView, error) {
	v := userView{clientGravatar: true}
	if clientGravatar != nil {
		v.clientGravatar = *clientGravatar
	}
	if profile != nil && *profile {
		v.profileFields = true
		values, err := r.st.ListProfileFieldValues(ctx, realmID, userIDs)
		if err != nil {
			return v, r.s.internal(ctx, "profile values", err)
		}
		v.profile = profileData(values)
	}
	return v, nil
}

// viewUser formats u as viewer sees it.
func viewUser(realm *storage.Realm, viewer, u *storage.User, opts userView) User {
	out := User{
		UserID:        u.ID,
		Email:         apiEmail(realm, u),
		FullName:      u.FullName,
		DateJoined:    isoTime(u.DateJoined),
		IsActive:      u.IsActive,
		IsOwner:       u.Role == RoleOwner,
		IsAdmin:       isAdmin(u),
		IsGuest:       u.Role == RoleGuest,
		IsBot:         u.IsBot,
		BotType:       u.BotType,
		Role:          u.Role,
		Timezone:      u.Timezone,
		AvatarVersion: u.AvatarVersion,
	}
	visible := canSeeEmail(realm, viewer, u)
	if visible {
		e := u.Email
		out.DeliveryEmail = &e
	}
	if !(opts.clientGravatar && visible && u.AvatarSource != "U") {
		url := avatarURL(u)
		out.AvatarURL = &url
	}
	if u.IsBot {
		out.BotOwnerID = &OptionalID{ID: u.BotOwnerID}
	} else if opts.profileFields {
		out.ProfileData = opts.profile[u.ID]
		if out.ProfileData == nil {
			out.ProfileData = map[string]ProfileFieldValue{}
		}
	}
	return out
}

// visibilityRank orders email visibility values from most open to most
// restricted (everyone, members, moderators, administrators, nobody).
var visibilityRank = map[int]int{EmailVisibleEveryone: 0, EmailVisibleMembers: 1, EmailVisibleModerators: 2,
	EmailVisibleAdministrators: 3, EmailVisibleNobody: 4}

// emailVisibility is who may see the user's real email: the stricter of the
// organization's setting (a cap for everyone) and the user's own
// email_address_visibility setting.
func emailVisibility(realm *storage.Realm, u *storage.User) int {
	own := DefaultSettings.EmailAddressVisibility
	if u.Settings != "" && u.Settings != "{}" { // not copying the defaults for every sender of a window
		own = settingsOf(u).EmailAddressVisibility
	}
	if visibilityRank[realm.EmailAddressVisibility] > visibilityRank[own] {
		return realm.EmailAddressVisibility
	}
	return own
}

// canSeeEmail reports whether viewer may see target's real email (see
// emailVisibility). Users always see their own, and bots' addresses are public.
func canSeeEmail(realm *storage.Realm, viewer, target *storage.User) bool {
	if viewer.ID == target.ID || target.IsBot {
		return true
	}
	switch emailVisibility(realm, target) {
	case EmailVisibleEveryone:
		return true
	case EmailVisibleMembers:
		return viewer.Role <= RoleMember
	case EmailVisibleModerators:
		return viewer.Role <= RoleModerator
	case EmailVisibleAdministrators:
		return viewer.Role <= RoleAdministrator
	default:
		return false
	}
}

// apiEmail is the address that identifies a user in the API: the real one
// when the user shows it to everyone (and for bots), else the dummy
// user{id}@{host}.
func apiEmail(realm *storage.Realm, u *storage.User) string {
	if u.IsBot || emailVisibility(realm, u) == EmailVisibleEveryone {
		return u.Email
	}
	return fmt.Sprintf("user%d@%s", u.ID, dummyEmailDomain(realm))
}

func dummyEmailDomain(realm *storage.Realm) string { return hostOnly(realm.Host) }

// gravatarURL is the Gravatar identicon URL of a user (facts §10).
func gravatarURL(u *storage.User) string {
	sum := md5.Sum([]byte(strings.ToLower(u.Email)))
	// Appended by hand: every user of a registration's realm_users and
	// every GET /users/me has one (fmt cost a third of it).
	const prefix, query = "https://secure.gravatar.com/avatar/", "?d=identicon&version="
	b := make([]byte, 0, len(prefix)+2*len(sum)+len(query)+4)
	b = append(b, prefix...)
	b = hex.AppendEncode(b, sum[:])
	b = append(b, query...)
	b = strconv.AppendInt(b, int64(u.AvatarVersion), 10)
	return string(b)
}

// isoTime formats Unix seconds as ISO 8601 with a UTC offset
// (2006-01-02T15:04:05+00:00), digit by digit for the years 0 to 9999
// (time.Format reads its layout on every call, and every user of a
// registration has a date_joined).
func isoTime(unix int64) string {
	t := time.Unix(unix, 0).UTC()
	y, mo, d := t.Date()
	if y < 0 || y > 9999 {
		return t.Format("2006-01-02T15:04:05+00:00")
	}
	h, mi, s := t.Clock()
	b := [25]byte{0, 0, 0, 0, '-', 0, 0, '-', 0, 0, 'T', 0, 0, ':', 0, 0, ':', 0, 0, '+', '0', '0', ':', '0', '0'}
	two := func(at, v int) { b[at], b[at+1] = byte('0'+v/10), byte('0'+v%10) }
	two(0, y/100)
	two(2, y%100)
	two(5, int(mo))
	two(8, d)
	two(11, h)
	two(14, mi)
	two(17, s)
	return string(b[:])
}

// ProvisionUserRequest describes an account made by the server's operator.
type ProvisionUserRequest struct {
	Email    string
	FullName string
	// Password may be empty: the account then has no password login and
	// uses its API key only.
	Password string
	// Role is one of the Role* constants; zero means RoleMember.
	Role int
	// BotType makes a bot account (BotType* constants); nil for humans.
	BotType    *int
	BotOwnerID *int64
	// CanCreateUsers grants the create-users permission.
	CanCreateUsers bool
}

// ProvisionUserResponse identifies the new account.
type ProvisionUserResponse struct {
	UserID int64
	Email  string
	APIKey string
}

// ProvisionUser creates an account of any role in an organization. It is a
// server-administration operation with no Caller, the counterpart of the
// reference's management commands: programs that embed the library use it to
// provision accounts, and chattest uses it to make users of every role.
// It validates like CreateUser.
func (s *Service) ProvisionUser(ctx context.Context, realmID int64, req ProvisionUserRequest) (*ProvisionUserResponse, error) {
	realm, err := s.reads().organization(ctx, realmID, "provision user")
	if err != nil {
		return nil, err
	}
	u, key, err := s.addUser(ctx, realm, req)
	if err != nil {
		return nil, err
	}
	return &ProvisionUserResponse{UserID: u.ID, Email: u.Email, APIKey: key}, nil
}

// addUser validates and stores a new account with its role-group
// memberships, and returns it with its API key.
func (s *Service) addUser(ctx context.Context, realm *storage.Realm, req ProvisionUserRequest) (*storage.User, string, error) {
	return s.addUserWith(ctx, realm, req, nil)
}

// addUserWith is addUser for a bot with a service (an outgoing webhook's),
// stored with the account and shown in its realm_bot event.
func (s *Service) addUserWith(ctx context.Context, realm *storage.Realm, req ProvisionUserRequest, service *storage.BotService) (*storage.User, string, error) {
	role := req.Role
	if role == 0 {
		role = RoleMember
	}
	switch role {
	case RoleOwner, RoleAdministrator, RoleModerator, RoleMember, RoleGuest:
	default:
		return nil, "", BadRequest("Invalid role")
	}
	fullName, err := s.checkFullName(req.FullName)
	if err != nil {
		return nil, "", err
	}
	email, err := s.checkNewEmail(req.Email)
	if err != nil {
		return nil, "", err
	}
	var hash string
	if req.Password != "" {
		if err := s.checkPassword(req.Password); err != nil {
			return nil, "", err
		}
		if hash, err = s.hasher.Hash(req.Password); err != nil {
			return nil, "", s.internal(ctx, "provision user", err)
		}
	}
	key, err := newAPIKey()
	if err != nil {
		return nil, "", s.internal(ctx, "provision user", err)
	}
	u := &storage.User{RealmID: realm.ID, Email: email, FullName: fullName, Role: role,
		IsActive: true, IsBot: req.BotType != nil, BotType: req.BotType, BotOwnerID: req.BotOwnerID,
		DateJoined: s.nowUnix(), PasswordHash: hash, APIKey: key, AvatarSource: "G", AvatarVersion: 1,
		CanCreateUsers: req.CanCreateUsers}
	err = s.write(ctx, realm.ID, func(w *writeTx) error {
		if u.BotOwnerID != nil {
			owner, err := w.GetUser(ctx, realm.ID, *u.BotOwnerID)
			if errors.Is(err, storage.ErrNotFound) {
				return noSuch("No such bot owner")
			} else if err != nil {
				return err
			}
			// Checked again under the write lock: the owner may have
			// been deactivated since the caller was loaded.
			if !owner.IsActive || owner.IsBot {
				return noSuch("No such bot owner")
			}
		}
		if err := w.CreateUser(ctx, u); err != nil {
			return err
		}
		if err := s.addToRoleGroups(ctx, w, realm, u); err != nil {
			return err
		}
		var services []any
		if service != nil {
			service.BotID = u.ID
			if err := w.CreateBotService(ctx, service); err != nil {
				return err
			}
			services = append(services, serviceView(*service))
		}
		emitUserAddedWith(w, realm, u, map[string]ProfileFieldValue{}, services)
		if u.IsBot {
			return nil // as the reference: bots join no default channel
		}
		return s.subscribeToDefaultChannels(ctx, w, u)
	})
	if errors.Is(err, storage.ErrConflict) {
		return nil, "", clash("Email is already in use.")
	}
	if err != nil {
		return nil, "", s.internal(ctx, "provision user", err)
	}
	return u, key, nil
}

// UserPermissions are the server-granted permissions of an account.
type UserPermissions struct {
	// CanCreateUsers lets a non-administrator call CreateUser.
	CanCreateUsers bool
	// CanChangeUserEmails lets an owner change other users' emails.
	CanChangeUserEmails bool
}

// SetUserPermissions grants or revokes the server-level permissions of an
// account. Like ProvisionUser it is a server-administration operation with
// no Caller (the reference uses a management command for it).
func (s *Service) SetUserPermissions(ctx context.Context, realmID, userID int64, p UserPermissions) error {
	u, err := s.reads().user(ctx, realmID, userID, "set permissions")
	if err != nil {
		return err
	}
	u.CanCreateUsers, u.CanChangeUserEmails = p.CanCreateUsers, p.CanChangeUserEmails
	err = s.write(ctx, realmID, func(w *writeTx) error {
		return w.UpdateUser(ctx, u, "can_create_users", "can_change_user_emails")
	})
	if err != nil {
		return s.internal(ctx, "set permissions", err)
	}
	return nil
}
