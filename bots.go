package chat

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/teamchat/chat/storage"
)

// CreateBotRequest is the input of CreateBot.
type CreateBotRequest struct {
	FullName string `json:"full_name"`
	// ShortName makes the bot's email: {short_name}-bot@{organization host}.
	ShortName string `json:"short_name"`
	// BotType is 1 (generic, the default), 2 (incoming webhook) or 3
	// (outgoing webhook). Embedded bots are not offered.
	BotType *int `json:"bot_type"`
	// PayloadURL, InterfaceType (1 generic, the default; 2
	// Slack-compatible) and ServiceName (default: the short name) make an
	// outgoing-webhook bot's service.
	PayloadURL    *string `json:"payload_url"`
	InterfaceType *int    `json:"interface_type"`
	ServiceName   *string `json:"service_name"`
}

// CreateBotResponse is the success body of CreateBot.
type CreateBotResponse struct {
	UserID                      int64   `json:"user_id"`
	APIKey                      string  `json:"api_key"`
	AvatarURL                   string  `json:"avatar_url"`
	DefaultSendingStream        *string `json:"default_sending_stream"`
	DefaultEventsRegisterStream *string `json:"default_events_register_stream"`
	DefaultAllPublicStreams     bool    `json:"default_all_public_streams"`
}

// CreateBot creates a bot owned by the caller. Members of the
// organization's can_create_bots_group may create any kind; members of
// can_create_write_only_bots_group may create incoming-webhook bots. Guests
// never may.
func (s *Service) CreateBot(ctx context.Context, c Caller, req CreateBotRequest) (*CreateBotResponse, error) {
	me, realm, err := s.reads().member(ctx, c)
	if err != nil {
		return nil, err
	}
	botType := BotTypeGeneric
	if req.BotType != nil {
		botType = *req.BotType
	}
	if botType != BotTypeGeneric && botType != BotTypeIncomingWebhook && botType != BotTypeOutgoingWebhook {
		return nil, BadRequest("Invalid bot type")
	}
	var service *storage.BotService
	if botType == BotTypeOutgoingWebhook {
		service = &storage.BotService{RealmID: realm.ID, BaseURL: jsonOrPlain(ptrValue(req.PayloadURL)), Interface: WebhookInterfaceGeneric}
		if err := checkPayloadURL("payload_url", service.BaseURL); err != nil {
			return nil, err
		}
		if req.InterfaceType != nil {
			service.Interface = *req.InterfaceType
		}
		if err := checkInterface(service.Interface); err != nil {
			return nil, err
		}
		service.Name = strings.TrimSpace(ptrValue(req.ServiceName))
		if service.Name == "" {
			service.Name = strings.ToLower(strings.TrimSpace(req.ShortName))
		}
		var err error
		if service.Token, err = newAPIKey(); err != nil { // 32 letters and digits, as the reference
			return nil, s.internal(ctx, "create bot", err)
		}
	}
	allowed, err := s.reads().inRealmGroup(ctx, realm, realm.CanCreateBotsGroupID, me)
	if err == nil && !allowed && botType == BotTypeIncomingWebhook {
		allowed, err = s.reads().inRealmGroup(ctx, realm, realm.CanCreateWriteOnlyBotsGroupID, me)
	}
	if err != nil {
		return nil, s.internal(ctx, "create bot", err)
	}
	if !allowed {
		return nil, errInsufficient
	}
	short := strings.ToLower(strings.TrimSpace(req.ShortName))
	if short == "" || strings.ContainsAny(short, "@ ") {
		return nil, BadRequest("Bad name or username")
	}
	email := short + "-bot@" + dummyEmailDomain(realm)
	if _, err := s.checkNewEmail(email); err != nil {
		return nil, err
	}
	fullName, err := s.checkFullName(req.FullName)
	if err != nil {
		return nil, err
	}
	if err := s.reads().botNameFree(ctx, realm.ID, fullName, 0); err != nil {
		return nil, err
	}
	bt := botType
	u, key, err := s.addUserWith(ctx, realm, ProvisionUserRequest{Email: email, FullName: fullName,
		Role: RoleMember, BotType: &bt, BotOwnerID: &me.ID}, service)
	if err != nil {
		if e := AsError(err); e.Msg == "Email is already in use." {
			return nil, clash("Username already in use")
		}
		return nil, err
	}
	return &CreateBotResponse{UserID: u.ID, APIKey: key, AvatarURL: gravatarURL(u)}, nil
}

// inRealmGroup evaluates an organization permission group for a user. A
// realm made before the setting existed stores 0, read as
// role:administrators (the safe choice); new realms store their defaults.
func (r reads) inRealmGroup(ctx context.Context, realm *storage.Realm, groupID int64, u *storage.User) (bool, error) {
	scope, err := r.callerScope(ctx, realm.ID, u.ID)
	if err != nil {
		return false, err
	}
	return r.scopeInRealmGroup(ctx, realm.ID, groupID, scope)
}

// scopeInRealmGroup is inRealmGroup for groups already loaded.
func (r reads) scopeInRealmGroup(ctx context.Context, realmID, groupID int64, scope *groupScope) (bool, error) {
	if groupID == 0 {
		var err error
		if groupID, err = r.systemGroupID(ctx, realmID, GroupAdministrators); err != nil {
			return false, err
		}
	}
	return scope.in(groupID), nil
}

// botNameFree checks that no other active bot of the realm has the name.
// It reads the realm's active bots, not its users.
func (r reads) botNameFree(ctx context.Context, realmID int64, name string, self int64) error {
	yes := true
	users, err := r.st.FindUsers(ctx, realmID, storage.UserFilter{Bot: &yes, Active: &yes})
	if err != nil {
		return r.s.internal(ctx, "check bot name", err)
	}
	for _, u := range users {
		if u.IsBot && u.IsActive && !u.IsSystemBot && u.ID != self && strings.EqualFold(u.FullName, name) {
			return clash("Name is already in use!")
		}
	}
	return nil
}

// Bot is a bot as its owner (or an administrator) sees it.
type Bot struct {
	UserID                      int64   `json:"user_id"`
	Username                    string  `json:"username"`
	FullName                    string  `json:"full_name"`
	APIKey                      string  `json:"api_key"`
	AvatarURL                   string  `json:"avatar_url"`
	BotType                     int     `json:"bot_type"`
	OwnerID                     *int64  `json:"owner_id"`
	Owner                       *string `json:"owner"`
	IsActive                    bool    `json:"is_active"`
	DefaultSendingStream        *string `json:"default_sending_stream"`
	DefaultEventsRegisterStream *string `json:"default_events_register_stream"`
	DefaultAllPublicStreams     bool    `json:"default_all_public_streams"`
	// Services are an outgoing-webhook bot's: base_url, interface, token.
	Services []any `json:"services"`
}

// GetBotsResponse is the success body of GetBots.
type GetBotsResponse struct {
	Bots []Bot `json:"bots"`
}

// GetBots lists the bots the caller owns; administrators see every bot of
// the organization. Deactivated bots are included with is_active false.
func (s *Service) GetBots(ctx context.Context, c Caller) (*GetBotsResponse, error) {
	return s.reads().getBots(ctx, c)
}

// getBots is GetBots reading through r.
func (r reads) getBots(ctx context.Context, c Caller) (*GetBotsResponse, error) {
	me, realm, err := r.actor(ctx, c)
	if err != nil {
		return nil, err
	}
	yes := true
	filter := storage.UserFilter{Bot: &yes}
	if !isAdmin(me) {
		filter.BotOwnerIDs = []int64{me.ID}
	}
	users, err := r.st.FindUsers(ctx, realm.ID, filter)
	if err != nil {
		return nil, r.s.internal(ctx, "get bots", err)
	}
	users = slices.DeleteFunc(users, func(u storage.User) bool { return u.IsSystemBot })
	var ownerIDs []int64
	for _, u := range users {
		if u.BotOwnerID != nil {
			ownerIDs = append(ownerIDs, *u.BotOwnerID)
		}
	}
	owners, err := r.st.FindUsers(ctx, realm.ID, storage.UserFilter{IDs: nonNil(ownerIDs)})
	if err != nil {
		return nil, r.s.internal(ctx, "get bots", err)
	}
	emails := map[int64]string{}
	for _, u := range owners {
		emails[u.ID] = apiEmail(realm, &u)
	}
	var botIDs []int64
	for i := range users {
		botIDs = append(botIDs, users[i].ID)
	}
	services, err := r.botServices(ctx, realm.ID, botIDs)
	if err != nil {
		return nil, r.s.internal(ctx, "get bots", err)
	}
	resp := &GetBotsResponse{Bots: []Bot{}}
	for i := range users {
		u := &users[i]
		if !u.IsBot || !canAdminUser(me, u) {
			continue
		}
		b := Bot{UserID: u.ID, Username: u.Email, FullName: u.FullName, APIKey: u.APIKey, AvatarURL: gravatarURL(u),
			OwnerID: u.BotOwnerID, IsActive: u.IsActive, Services: services[u.ID]}
		if b.Services == nil {
			b.Services = []any{}
		}
		if u.BotType != nil {
			b.BotType = *u.BotType
		}
		if u.BotOwnerID != nil {
			e := emails[*u.BotOwnerID]
			b.Owner = &e
		}
		resp.Bots = append(resp.Bots, b)
	}
	return resp, nil
}

// UpdateBotRequest is the input of UpdateBot.
type UpdateBotRequest struct {
	BotID      int64   `json:"bot_id"`
	FullName   *string `json:"full_name"`
	BotOwnerID *int64  `json:"bot_owner_id"`
	// ServicePayloadURL and ServiceInterface (default 1) change an
	// outgoing-webhook bot's service.
	ServicePayloadURL *string `json:"service_payload_url"`
	ServiceInterface  *int    `json:"service_interface"`
}

// UpdateBotResponse is the success body of UpdateBot.
type UpdateBotResponse struct {
	FullName                    string  `json:"full_name"`
	AvatarURL                   string  `json:"avatar_url"`
	DefaultSendingStream        *string `json:"default_sending_stream"`
	DefaultEventsRegisterStream *string `json:"default_events_register_stream"`
	DefaultAllPublicStreams     bool    `json:"default_all_public_streams"`
	// BotOwner is the new owner's email, when the owner changed.
	BotOwner *string `json:"bot_owner,omitempty"`
	// ServiceInterface and ServicePayloadURL echo a service change
	// (null otherwise); ConfigData is always null (no embedded bots).
	ServiceInterface  *int    `json:"service_interface"`
	ServicePayloadURL *string `json:"service_payload_url"`
	ConfigData        any     `json:"config_data"`
}

// UpdateBot renames a bot or gives it to another owner. The bot's owner
// and administrators may.
func (s *Service) UpdateBot(ctx context.Context, c Caller, req UpdateBotRequest) (*UpdateBotResponse, error) {
	_, realm, bot, err := s.reads().ownedBot(ctx, c, req.BotID)
	if err != nil {
		return nil, err
	}
	next := *bot
	var columns []string
	resp := &UpdateBotResponse{}
	if req.FullName != nil {
		name, err := s.checkFullName(*req.FullName)
		if err != nil {
			return nil, err
		}
		if name != bot.FullName {
			if err := s.reads().botNameFree(ctx, realm.ID, name, bot.ID); err != nil {
				return nil, err
			}
			next.FullName = name
			columns = append(columns, "full_name")
		}
	}
	if req.BotOwnerID != nil {
		next.BotOwnerID = req.BotOwnerID
		columns = append(columns, "bot_owner_id")
	}
	var service *storage.BotService
	if req.ServicePayloadURL != nil {
		if bot.BotType == nil || *bot.BotType != BotTypeOutgoingWebhook {
			return nil, BadRequest("This bot has no outgoing webhook service")
		}
		iface := WebhookInterfaceGeneric
		if req.ServiceInterface != nil {
			iface = *req.ServiceInterface
		}
		if err := checkInterface(iface); err != nil {
			return nil, err
		}
		payloadURL := jsonOrPlain(*req.ServicePayloadURL)
		if err := checkPayloadURL("service_payload_url", payloadURL); err != nil {
			return nil, err
		}
		service = &storage.BotService{BaseURL: payloadURL, Interface: iface}
		resp.ServiceInterface, resp.ServicePayloadURL = &iface, &payloadURL
	}
	if len(columns) > 0 || service != nil {
		err := s.write(ctx, realm.ID, func(w *writeTx) error {
			return s.updateBotTx(ctx, w, realm, bot, &next, columns, service, resp)
		})
		if err != nil {
			return nil, s.internal(ctx, "update bot", err)
		}
	}
	resp.FullName, resp.AvatarURL = next.FullName, gravatarURL(&next)
	return resp, nil
}

// updateBotTx writes UpdateBot's changes: next's columns and, when
// change is not nil, the service's new URL and interface. The new owner
// and the service are read here, under the write lock: the owner may
// have been deactivated since the request was checked.
func (s *Service) updateBotTx(ctx context.Context, w *writeTx, realm *storage.Realm, bot, next *storage.User, columns []string,
	change *storage.BotService, resp *UpdateBotResponse) error {
	r := w.reads()
	if slices.Contains(columns, "bot_owner_id") {
		owner, err := r.newBotOwner(ctx, realm.ID, *next.BotOwnerID)
		if err != nil {
			return err
		}
		e := apiEmail(realm, owner)
		resp.BotOwner = &e
	}
	if change != nil {
		service, err := r.outgoingService(ctx, realm.ID, bot.ID)
		if err != nil {
			return err
		}
		service.BaseURL, service.Interface = change.BaseURL, change.Interface
		if err := w.UpdateBotService(ctx, service); err != nil {
			return err
		}
		emitBotUpdate(w, bot, map[string]any{"services": []any{serviceView(*service)}})
		if len(columns) == 0 {
			return nil
		}
	}
	if err := w.UpdateUser(ctx, next, columns...); err != nil {
		return err
	}
	if next.FullName != bot.FullName {
		emitUserUpdate(w, bot.ID, map[string]any{"full_name": next.FullName})
		emitBotUpdate(w, next, map[string]any{"full_name": next.FullName})
	}
	if !equalPtr(next.BotOwnerID, bot.BotOwnerID) {
		// As the reference: a previous owner who is no administrator
		// loses the bot, a new one gains it whole, the other managers
		// see the owner change, and everyone the user's new owner.
		aud := botAudience(next)
		if bot.BotOwnerID != nil && !r.isAdminID(ctx, realm.ID, *bot.BotOwnerID) {
			w.emit(toUsers(*bot.BotOwnerID), RealmBotEvent{Op: "delete", Bot: map[string]any{"user_id": bot.ID}})
			aud.Except = append(aud.Except, *bot.BotOwnerID)
		}
		if !r.isAdminID(ctx, realm.ID, *next.BotOwnerID) {
			view := newBotEventView(next)
			services, err := r.botServices(ctx, realm.ID, []int64{bot.ID})
			if err != nil {
				return err
			}
			if services[bot.ID] != nil {
				view.Services = services[bot.ID]
			}
			w.emit(toUsers(*next.BotOwnerID), RealmBotEvent{Op: "add", Bot: view})
			aud.Except = append(aud.Except, *next.BotOwnerID)
		}
		w.emit(aud, RealmBotEvent{Op: "update", Bot: map[string]any{"user_id": bot.ID, "owner_id": *next.BotOwnerID}})
		emitUserUpdate(w, bot.ID, map[string]any{"bot_owner_id": *next.BotOwnerID})
	}
	return nil
}

// newBotOwner is the user a bot is given to: an active human.
func (r reads) newBotOwner(ctx context.Context, realmID, id int64) (*storage.User, error) {
	owner, err := r.st.GetUser(ctx, realmID, id)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return nil, noSuch("Failed to change owner, no such user")
	case err != nil:
		return nil, err
	case !owner.IsActive:
		return nil, BadRequest("Failed to change owner, user is deactivated")
	case owner.IsBot:
		return nil, BadRequest("Failed to change owner, bots can't own other bots")
	}
	return owner, nil
}

// outgoingService is an outgoing webhook bot's service.
func (r reads) outgoingService(ctx context.Context, realmID, botID int64) (*storage.BotService, error) {
	list, err := r.st.ListBotServices(ctx, realmID, []int64{botID})
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, BadRequest("This bot has no outgoing webhook service")
	}
	return &list[0], nil
}

// BotRequest names a bot.
type BotRequest struct {
	BotID int64 `json:"bot_id"`
}

// DeactivateBot deactivates a bot. Its owner and administrators may.
func (s *Service) DeactivateBot(ctx context.Context, c Caller, req BotRequest) (*EmptyResponse, error) {
	_, realm, bot, err := s.reads().ownedBot(ctx, c, req.BotID)
	if err != nil {
		return nil, err
	}
	if bot.IsActive {
		if err := s.deactivate(ctx, realm.ID, bot, nil); err != nil {
			return nil, err
		}
	}
	return &EmptyResponse{}, nil
}

// RegenerateBotAPIKey gives a bot a new API key; the old one stops
// working at once. Its owner and administrators may.
func (s *Service) RegenerateBotAPIKey(ctx context.Context, c Caller, req BotRequest) (*RegenerateAPIKeyResponse, error) {
	_, _, bot, err := s.reads().ownedBot(ctx, c, req.BotID)
	if err != nil {
		return nil, err
	}
	key, err := newAPIKey()
	if err != nil {
		return nil, s.internal(ctx, "regenerate bot api key", err)
	}
	bot.APIKey = key
	err = s.write(ctx, bot.RealmID, func(w *writeTx) error {
		if err := w.UpdateUser(ctx, bot, "api_key"); err != nil {
			return err
		}
		emitBotUpdate(w, bot, map[string]any{"api_key": key})
		return nil
	})
	if err != nil {
		return nil, s.internal(ctx, "regenerate bot api key", err)
	}
	return &RegenerateAPIKeyResponse{APIKey: key}, nil
}

// ownedBot loads the caller and a bot the caller may administer.
func (r reads) ownedBot(ctx context.Context, c Caller, botID int64) (*storage.User, *storage.Realm, *storage.User, error) {
	me, realm, err := r.actor(ctx, c)
	if err != nil {
		return nil, nil, nil, err
	}
	bot, err := r.st.GetUser(ctx, realm.ID, botID)
	if errors.Is(err, storage.ErrNotFound) || err == nil && (!bot.IsBot || bot.IsSystemBot) {
		return nil, nil, nil, noSuch("No such bot")
	} else if err != nil {
		return nil, nil, nil, r.s.internal(ctx, "load bot", err)
	}
	if !canAdminUser(me, bot) {
		return nil, nil, nil, errInsufficient
	}
	return me, realm, bot, nil
}
