package chat

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"net"
	"net/url"
	"strings"

	"github.com/teamchat/chat/markdown"
	"github.com/teamchat/chat/storage"
)

// Email address visibility values (who may see users' real emails).
const (
	EmailVisibleEveryone       = 1
	EmailVisibleMembers        = 2
	EmailVisibleAdministrators = 3
	EmailVisibleNobody         = 4
	EmailVisibleModerators     = 5
)

// CreateRealmRequest describes a new organization and its first owner.
type CreateRealmRequest struct {
	// Name is the organization's display name (1-40 characters).
	Name string
	// URL is where the organization is served, e.g. "https://chat.example.com"
	// or "http://127.0.0.1:9991". Its host picks the organization for HTTP
	// requests; it must be unique on the server.
	URL string
	// StringID is the short identifier (sender_realm_str); derived from the
	// host when empty.
	StringID string
	// Description is Markdown shown on the login page.
	Description string
	// EmailAddressVisibility is who may see users' real email addresses
	// (EmailVisible*): a cap for every account, which users may restrict
	// further in their own settings. Zero means EmailVisibleEveryone.
	EmailAddressVisibility int
	OwnerEmail             string
	OwnerFullName          string
	OwnerPassword          string
	// SkipOnboarding leaves out the default channels and the Welcome
	// Bot's messages a new organization is given (onboarding.go): for a
	// host that brings its own, or tests that start from nothing.
	SkipOnboarding bool
}

// CreateRealmResponse identifies the new organization and its owner.
type CreateRealmResponse struct {
	RealmID     int64
	OwnerID     int64
	OwnerAPIKey string
}

// CreateRealm creates an organization with its system user groups and its
// owner. It is a server-administration operation with no Caller: programs
// that embed the library call it in-process (examples/server does so on its
// first start); there is no REST route for it.
func (s *Service) CreateRealm(ctx context.Context, req CreateRealmRequest) (*CreateRealmResponse, error) {
	name := strings.TrimSpace(req.Name)
	if name == "" {
		return nil, BadRequest("Organization name can't be empty.")
	}
	if len([]rune(name)) > 40 {
		return nil, BadRequest("Organization name is too long (limit: 40 characters).")
	}
	u, err := url.Parse(req.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return nil, BadRequest("Invalid organization URL '%s': it must be http(s)://host[:port]", req.URL)
	}
	host := strings.ToLower(u.Host)
	stringID := req.StringID
	if stringID == "" {
		stringID = strings.SplitN(hostOnly(host), ".", 2)[0]
	}
	vis := req.EmailAddressVisibility
	if vis == 0 {
		vis = EmailVisibleEveryone
	}
	if vis < EmailVisibleEveryone || vis > EmailVisibleModerators {
		return nil, BadRequest("Invalid email_address_visibility")
	}
	email, err := s.checkNewEmail(req.OwnerEmail)
	if err != nil {
		return nil, err
	}
	fullName, err := s.checkFullName(req.OwnerFullName)
	if err != nil {
		return nil, err
	}
	if err := s.checkPassword(req.OwnerPassword); err != nil {
		return nil, err
	}
	hash, err := s.hasher.Hash(req.OwnerPassword)
	if err != nil {
		return nil, s.internal(ctx, "create realm", err)
	}
	key, err := newAPIKey()
	if err != nil {
		return nil, s.internal(ctx, "create realm", err)
	}
	now := s.nowUnix()
	realm := &storage.Realm{StringID: stringID, Name: name, Description: req.Description,
		URL: u.Scheme + "://" + host, Host: host, DateCreated: now, EmailAddressVisibility: vis,
		AllowMessageEditing: true, MessageContentEditLimitSeconds: new(int64(600)),
		MoveMessagesWithinStreamLimitSeconds: new(int64(7 * 86400)), MoveMessagesBetweenStreamsLimitSeconds: new(int64(7 * 86400)),
		MessageEditHistoryVisibilityPolicy: 1, EnableReadReceipts: true}
	owner := &storage.User{Email: email, FullName: fullName, Role: RoleOwner, IsActive: true,
		DateJoined: now, PasswordHash: hash, APIKey: key, AvatarSource: "G", AvatarVersion: 1}
	err = s.write(ctx, 0, func(w *writeTx) error {
		st := w
		if err := st.CreateRealm(ctx, realm); err != nil {
			return err
		}
		w.realmID = realm.ID
		groups, err := createSystemGroups(ctx, st, realm.ID, now)
		if err != nil {
			return err
		}
		if err := setRealmDefaultGroups(ctx, st, realm, groups); err != nil {
			return err
		}
		owner.RealmID = realm.ID
		if err := st.CreateUser(ctx, owner); err != nil {
			return err
		}
		if err := s.addToRoleGroups(ctx, w, realm, owner); err != nil {
			return err
		}
		emitUserAdded(w, realm, owner, map[string]ProfileFieldValue{})
		return createSystemBots(ctx, st, realm.ID, now)
	})
	if errors.Is(err, storage.ErrConflict) {
		return nil, clash("An organization is already served at %s", host)
	}
	if err != nil {
		return nil, s.internal(ctx, "create realm", err)
	}
	s.log.InfoContext(ctx, "organization created", "realm_id", realm.ID, "url", realm.URL, "owner_id", owner.ID)
	if !req.SkipOnboarding {
		if err := s.onboard(ctx, realm, Caller{RealmID: realm.ID, UserID: owner.ID}); err != nil {
			// The organization works without them: say so, and go on.
			s.log.ErrorContext(ctx, "organization created without its welcome channels and messages", "realm_id", realm.ID, "err", err)
		}
	}
	return &CreateRealmResponse{RealmID: realm.ID, OwnerID: owner.ID, OwnerAPIKey: key}, nil
}

// RealmForHost returns the ID of the organization served at host (an HTTP
// Host header, with or without port). A host matches an organization's host
// exactly, or else when the two agree without their ports and no other
// organization does. When nothing matches and the server hosts exactly one
// organization, that one is used: a single-organization server answers on
// any name it is reached by. Otherwise the error is NONEXISTENT_SUBDOMAIN
// (HTTP 404).
func (s *Service) RealmForHost(ctx context.Context, host string) (int64, error) {
	return s.reads().realmForHost(ctx, host)
}

// realmForHost is RealmForHost reading through r.
func (r reads) realmForHost(ctx context.Context, host string) (int64, error) {
	host = strings.ToLower(host)
	if id, ok := r.s.realmHosts.Load(host); ok {
		return id.(int64), nil
	}
	resp, err := r.st.GetRealmByHost(ctx, host)
	if err == nil {
		// Exact matches are remembered: organizations are never deleted and
		// their hosts never change. Fallbacks are not, since a later
		// organization may claim the host.
		r.s.realmHosts.Store(host, resp.ID)
		return resp.ID, nil
	}
	if !errors.Is(err, storage.ErrNotFound) {
		return 0, r.s.internal(ctx, "realm for host", err)
	}
	// No exact match: compare without ports, then fall back to the only
	// organization of a single-organization server. Both questions read
	// at most two rows, however many organizations the server hosts.
	name := hostOnly(host)
	if strings.Contains(name, ":") {
		name = "[" + name + "]" // an IPv6 address, as hosts spell it
	}
	match, err := r.st.RealmsByHostname(ctx, name, 2)
	if err != nil {
		return 0, r.s.internal(ctx, "realm for host", err)
	}
	if len(match) == 1 {
		return match[0].ID, nil
	}
	first, err := r.st.FirstRealms(ctx, 2)
	if err != nil {
		return 0, r.s.internal(ctx, "realm for host", err)
	}
	if len(first) == 1 {
		return first[0].ID, nil
	}
	return 0, errInvalidSubdomain
}

// hostOnly strips a port from host.
func hostOnly(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		return h
	}
	return host
}

// AuthenticationMethods is the deprecated map of enabled login methods.
type AuthenticationMethods struct {
	Password      bool `json:"password"`
	Dev           bool `json:"dev"`
	Email         bool `json:"email"`
	LDAP          bool `json:"ldap"`
	RemoteUser    bool `json:"remoteuser"`
	GitHub        bool `json:"github"`
	AzureAD       bool `json:"azuread"`
	GitLab        bool `json:"gitlab"`
	Apple         bool `json:"apple"`
	Google        bool `json:"google"`
	SAML          bool `json:"saml"`
	OpenIDConnect bool `json:"openid connect"`
}

// ExternalAuthenticationMethod is one external login button.
type ExternalAuthenticationMethod struct {
	Name        string  `json:"name"`
	DisplayName string  `json:"display_name"`
	DisplayIcon *string `json:"display_icon"`
	LoginURL    string  `json:"login_url"`
	SignupURL   string  `json:"signup_url"`
}

// ServerSettingsResponse is the success body of GetServerSettings. The
// realm_* fields are omitted when no organization is addressed (the root
// domain of a multi-organization server).
type ServerSettingsResponse struct {
	AuthenticationMethods         AuthenticationMethods          `json:"authentication_methods"`
	ExternalAuthenticationMethods []ExternalAuthenticationMethod `json:"external_authentication_methods"`
	Versions
	PushNotificationsEnabled    bool    `json:"push_notifications_enabled"`
	IsIncompatible              bool    `json:"is_incompatible"`
	EmailAuthEnabled            bool    `json:"email_auth_enabled"`
	RequireEmailFormatUsernames bool    `json:"require_email_format_usernames"`
	RealmURI                    string  `json:"realm_uri,omitempty"`
	RealmURL                    string  `json:"realm_url,omitempty"`
	RealmName                   string  `json:"realm_name,omitempty"`
	RealmIcon                   string  `json:"realm_icon,omitempty"`
	RealmDescription            *string `json:"realm_description,omitempty"`
	RealmWebPublicAccessEnabled *bool   `json:"realm_web_public_access_enabled,omitempty"`
}

// GetServerSettings answers the unauthenticated server probe. realmID is the
// organization the request addressed, or 0 for none. Password login (by
// email and password, through FetchAPIKey) is the one authentication method.
func (s *Service) GetServerSettings(ctx context.Context, realmID int64) (*ServerSettingsResponse, error) {
	return s.reads().getServerSettings(ctx, realmID)
}

// getServerSettings is GetServerSettings reading through r.
func (r reads) getServerSettings(ctx context.Context, realmID int64) (*ServerSettingsResponse, error) {
	resp := &ServerSettingsResponse{
		AuthenticationMethods:         AuthenticationMethods{Password: true, Email: true},
		ExternalAuthenticationMethods: []ExternalAuthenticationMethod{},
		Versions:                      serverVersions,
		EmailAuthEnabled:              true,
		RequireEmailFormatUsernames:   true,
	}
	if realmID == 0 {
		return resp, nil
	}
	realm, err := r.st.GetRealm(ctx, realmID)
	if errors.Is(err, storage.ErrNotFound) {
		return resp, nil
	} else if err != nil {
		return nil, r.s.internal(ctx, "server settings", err)
	}
	desc := markdown.Render(realm.Description)
	webPublic := false // web-public (anonymous) reading is not offered yet
	resp.RealmURL, resp.RealmURI = realm.URL, realm.URL
	resp.RealmName = realm.Name
	resp.RealmIcon = r.s.realmIconURL(realm)
	resp.RealmDescription = &desc
	resp.RealmWebPublicAccessEnabled = &webPublic
	return resp, nil
}

// realmIconURL is the organization's square logo: a Gravatar identicon
// derived from its identifier, as the reference uses until a logo is uploaded.
func (s *Service) realmIconURL(r *storage.Realm) string {
	sum := md5.Sum([]byte(strings.ToLower(r.StringID)))
	return "https://secure.gravatar.com/avatar/" + hex.EncodeToString(sum[:]) + "?d=identicon&s=100"
}
