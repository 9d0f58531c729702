package chat

import (
	"context"
	"errors"
	"strings"

	"github.com/teamchat/chat/storage"
)

// The internal bots: the Notification Bot (edit and move notices,
// failed scheduled messages, accepted invitations), the Welcome Bot (a
// new organization's first messages) and the Email Gateway (mail posted
// to a channel's address). The reference keeps them in a realm of their
// own, shared by every organization, and lists them in register's
// cross_realm_bots; here every row carries its realm, so each
// organization has its own three, made with it, marked IsSystemBot and at
// an address of their own domain that no account of the organization can
// have. They are not the organization's users: GET /users, realm_users,
// the bots list, user groups and user counts leave them out, and no
// administrator may change them.

// SystemBotDomain is the domain of the internal bots' addresses (the
// reference's INTERNAL_BOT_DOMAIN); accounts may not use it.
const SystemBotDomain = "teamchat.internal"

// systemBotKind is one of the internal bots.
type systemBotKind struct{ local, name string }

var (
	notificationBotKind = systemBotKind{"notification-bot", "Notification Bot"}
	welcomeBotKind      = systemBotKind{"welcome-bot", "Welcome Bot"}
	emailGatewayBotKind = systemBotKind{"emailgateway", "Email Gateway"}
	systemBotKinds      = []systemBotKind{notificationBotKind, welcomeBotKind, emailGatewayBotKind}
)

// email is the bot's address.
func (k systemBotKind) email() string { return k.local + "@" + SystemBotDomain }

// newSystemBot is the row of an internal bot of the realm.
func newSystemBot(realmID, now int64, k systemBotKind) (*storage.User, error) {
	key, err := newAPIKey()
	if err != nil {
		return nil, err
	}
	kind := BotTypeGeneric
	return &storage.User{RealmID: realmID, Email: k.email(), FullName: k.name, Role: RoleMember, IsActive: true,
		IsBot: true, IsSystemBot: true, BotType: &kind, DateJoined: now, APIKey: key, AvatarSource: "G", AvatarVersion: 1}, nil
}

// createSystemBots makes the realm's internal bots (in CreateRealm's
// transaction: nobody is told, they are nobody's users).
func createSystemBots(ctx context.Context, st storage.Store, realmID, now int64) error {
	for _, k := range systemBotKinds {
		bot, err := newSystemBot(realmID, now, k)
		if err != nil {
			return err
		}
		if err := st.CreateUser(ctx, bot); err != nil {
			return err
		}
	}
	return nil
}

// errSystemBotTaken: an account holds an internal bot's address (made
// before the domain was reserved).
var errSystemBotTaken = errors.New("an account holds an internal bot's address")

// systemBot returns the realm's internal bot of that kind, making it for
// an organization created before it was made with every organization.
func (s *Service) systemBot(ctx context.Context, realm *storage.Realm, k systemBotKind) (*storage.User, error) {
	u, err := s.reads().systemBot(ctx, realm.ID, k)
	if !errors.Is(err, storage.ErrNotFound) {
		return u, err
	}
	bot, err := newSystemBot(realm.ID, s.nowUnix(), k)
	if err != nil {
		return nil, err
	}
	err = s.write(ctx, realm.ID, func(w *writeTx) error {
		// Looked for again under the organization's write lock: another
		// request may have made it since.
		if u, err = w.reads().systemBot(ctx, realm.ID, k); !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		w.keepCallers()
		u = bot
		return w.CreateUser(ctx, bot)
	})
	if err != nil {
		return nil, err
	}
	return u, nil
}

// systemBot is the realm's internal bot of that kind: storage.ErrNotFound
// when it was not made yet, errSystemBotTaken when an account holds its
// address.
func (r reads) systemBot(ctx context.Context, realmID int64, k systemBotKind) (*storage.User, error) {
	u, err := r.st.GetUserByEmail(ctx, realmID, k.email())
	switch {
	case err != nil:
		return nil, err
	case !u.IsSystemBot:
		return nil, errSystemBotTaken
	}
	return u, nil
}

// notificationBot returns the organization's Notification Bot.
func (s *Service) notificationBot(ctx context.Context, realm *storage.Realm) (*storage.User, error) {
	return s.systemBot(ctx, realm, notificationBotKind)
}

// activeSystemBots counts the realm's active internal bots, through r.
func (r reads) activeSystemBots(ctx context.Context, realmID int64) (int, error) {
	n := 0
	for _, k := range systemBotKinds {
		u, err := r.st.GetUserByEmail(ctx, realmID, k.email())
		if errors.Is(err, storage.ErrNotFound) {
			continue
		} else if err != nil {
			return 0, err
		}
		if u.IsSystemBot && u.IsActive {
			n++
		}
	}
	return n, nil
}

// isSystemBotAddress reports whether an address is at the internal bots'
// domain.
func isSystemBotAddress(email string) bool {
	return strings.HasSuffix(strings.ToLower(email), "@"+SystemBotDomain)
}

// crossRealmBot is an internal bot as register's cross_realm_bots lists it.
func crossRealmBot(realm *storage.Realm, me, u *storage.User, opts userView) User {
	v := viewUser(realm, me, u, opts)
	yes := true
	v.IsSystemBot = &yes
	v.ProfileData = nil
	return v
}
