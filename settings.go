package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // timezones are checked against the IANA database on any machine

	"golang.org/x/text/language"
	"golang.org/x/text/language/display"

	"github.com/teamchat/chat/storage"
)

// settingRule checks one setting's value; it returns the error message.
type settingRule func(name string, v any) error

func intChoices(allowed ...int) settingRule {
	return func(name string, v any) error {
		if !slices.Contains(allowed, v.(int)) {
			return BadRequest("Invalid %s: allowed values are %s", name, joinInts(allowed))
		}
		return nil
	}
}

func stringChoices(allowed ...string) settingRule {
	return func(name string, v any) error {
		if !slices.Contains(allowed, v.(string)) {
			return BadRequest("Invalid %s: allowed values are %s", name, strings.Join(allowed, ", "))
		}
		return nil
	}
}

func intRange(lo, hi int) settingRule {
	return func(name string, v any) error {
		if n := v.(int); n < lo || n > hi {
			return BadRequest("Invalid %s: must be between %d and %d", name, lo, hi)
		}
		return nil
	}
}

// Languages are the language codes the server accepts for
// default_language: those the reference has translations for.
var Languages = []string{
	"ar", "be", "bg", "bn", "ca", "cs", "cy", "da", "de", "el", "en", "en-gb", "eo", "es", "fa", "fi",
	"fr", "gl", "gu", "hi", "hu", "id", "it", "ja", "ko", "lt", "lv", "ml", "mn", "nl", "no", "pa",
	"pl", "pt", "pt-br", "pt-pt", "ro", "ru", "si", "sk", "sr", "sv", "ta", "te", "tl", "tr", "uk",
	"ur", "uz", "vi", "zh-hans", "zh-hant",
}

func languageCode(name string, v any) error {
	if !slices.Contains(Languages, v.(string)) {
		return BadRequest("Invalid %s: '%s' is not a language this server knows", name, v)
	}
	return nil
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// settingsOf returns a user's settings: the defaults overlaid with what the
// user changed. Stored settings hold only values that differ from
// DefaultSettings, so most users cost no decoding.
func settingsOf(u *storage.User) Settings {
	s := DefaultSettings
	if u.Settings != "" && u.Settings != "{}" {
		// A stored document always decodes: we wrote it with encodeSettings.
		_ = json.Unmarshal([]byte(u.Settings), &s)
	}
	return s
}

// encodeSettings stores the values of s that differ from DefaultSettings.
func encodeSettings(s Settings) string {
	v, d := reflect.ValueOf(s), reflect.ValueOf(DefaultSettings)
	diff := map[string]any{}
	for i := 0; i < v.NumField(); i++ {
		if !v.Field(i).Equal(d.Field(i)) {
			name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
			diff[name] = v.Field(i).Interface()
		}
	}
	if len(diff) == 0 {
		return ""
	}
	b, _ := json.Marshal(diff) // bools, ints and strings always encode
	return string(b)
}

// applyPatch validates every set field of p and returns s with them applied.
func applyPatch(s Settings, p SettingsPatch) (Settings, error) {
	pv := reflect.ValueOf(p)
	sv := reflect.ValueOf(&s).Elem()
	for i := 0; i < pv.NumField(); i++ {
		f := pv.Field(i)
		if f.IsNil() {
			continue
		}
		field := pv.Type().Field(i)
		name, _, _ := strings.Cut(field.Tag.Get("json"), ",")
		val := f.Elem().Interface()
		if rule := settingRules[name]; rule != nil {
			if err := rule(name, val); err != nil {
				return s, err
			}
		}
		sv.FieldByName(field.Name).Set(f.Elem())
	}
	return s, nil
}

// UpdateSettingsRequest is the input of UpdateSettings. Every field is
// optional; the settings proper are the promoted fields of SettingsPatch.
type UpdateSettingsRequest struct {
	FullName *string `json:"full_name"`
	// Email starts an email change: the new address must be confirmed with
	// the key sent to it (ConfirmEmailChange).
	Email *string `json:"email"`
	// NewPassword needs the current password in OldPassword.
	OldPassword *string `json:"old_password"`
	NewPassword *string `json:"new_password"`
	// Timezone is an IANA identifier, or "" for none.
	Timezone *string `json:"timezone"`
	SettingsPatch
}

// UpdateSettingsResponse is the (empty) success body of UpdateSettings.
type UpdateSettingsResponse struct{}

// EmailChangeNotice is what a host application needs to send the
// confirmation of an email change: the key goes to the new address.
type EmailChangeNotice struct {
	RealmID  int64
	UserID   int64
	OldEmail string
	NewEmail string
	Key      string
}

// WithEmailChangeNotifier sets the function called when a user asks to
// change their email (the host application mails the key to NewEmail).
// Without it no mail is sent; the pending change can still be confirmed
// in-process with the key.
func WithEmailChangeNotifier(f func(context.Context, EmailChangeNotice) error) Option {
	return func(s *Service) { s.notifyEmailChange = f }
}

// EmailChangeValidity is how long an email change waits for confirmation.
const EmailChangeValidity = 24 * time.Hour

// UpdateSettings changes the caller's own settings. It validates every
// parameter before it changes anything: one bad value rejects the whole
// request and leaves the account as it was.
func (s *Service) UpdateSettings(ctx context.Context, c Caller, req UpdateSettingsRequest) (*UpdateSettingsResponse, error) {
	me, realm, err := s.reads().actor(ctx, c)
	if err != nil {
		return nil, err
	}
	if me.IsBot {
		return nil, errBotRequest
	}
	next := *me
	columns := []string{}
	// While name changes are disabled, a user's new name is ignored
	// (the request still succeeds), as in the reference; administrators
	// are exempt.
	if req.FullName != nil && !(realm.NameChangesDisabled && !isAdmin(me)) {
		name, err := s.checkFullName(*req.FullName)
		if err != nil {
			return nil, err
		}
		if name != me.FullName {
			next.FullName = name
			columns = append(columns, "full_name")
		}
	}
	var newEmail string
	if req.Email != nil && !strings.EqualFold(strings.TrimSpace(*req.Email), me.Email) {
		if realm.EmailChangesDisabled && !isAdmin(me) {
			return nil, refused("Email address changes are disabled in this organization.")
		}
		if newEmail, err = s.checkNewEmail(*req.Email); err != nil {
			return nil, err
		}
		if err := s.reads().emailFree(ctx, realm.ID, newEmail, me.ID); err != nil {
			return nil, err
		}
	}
	if req.NewPassword != nil {
		// Without old_password the check fails like a wrong one, as in
		// the reference.
		old := ""
		if req.OldPassword != nil {
			old = *req.OldPassword
		}
		if err := s.checkOwnPassword(ctx, realm.ID, me, old); err != nil {
			return nil, err
		}
		if err := s.checkPassword(*req.NewPassword); err != nil {
			return nil, err
		}
		if next.PasswordHash, err = s.hasher.Hash(*req.NewPassword); err != nil {
			return nil, s.internal(ctx, "update settings", err)
		}
		columns = append(columns, "password_hash")
	}
	if req.Timezone != nil {
		if err := checkTimezone(*req.Timezone); err != nil {
			return nil, err
		}
		next.Timezone = *req.Timezone
		columns = append(columns, "timezone")
	}
	if _, err := applyPatch(settingsOf(me), req.SettingsPatch); err != nil {
		return nil, err
	}
	dropDrafts := req.EnableDraftsSynchronization != nil && !*req.EnableDraftsSynchronization

	var change *storage.EmailChange
	err = s.write(ctx, realm.ID, func(w *writeTx) error {
		// The settings patch applies to the stored settings as they are
		// now, so concurrent changes of other settings are not lost.
		fresh, err := w.GetUser(ctx, realm.ID, me.ID)
		if err != nil {
			return err
		}
		before := settingsOf(fresh)
		after, err := applyPatch(before, req.SettingsPatch)
		if err != nil {
			return err
		}
		cols := columns
		if next.Settings = encodeSettings(after); next.Settings != fresh.Settings {
			cols = append(slices.Clone(cols), "settings")
		}
		if len(cols) > 0 {
			if err := w.UpdateUser(ctx, &next, cols...); err != nil {
				return err
			}
		}
		if dropDrafts {
			if err := w.DeleteUserDrafts(ctx, realm.ID, me.ID); err != nil {
				return err
			}
		}
		emitSettingsChanges(w, realm, fresh, &next, before, after)
		if err := s.notificationSettingsChanged(ctx, w, &next, before, after); err != nil {
			return err
		}
		if before.PresenceEnabled != after.PresenceEnabled {
			if err := s.presenceEnabledChanged(ctx, w, realm, &next, after.PresenceEnabled); err != nil {
				return err
			}
		}
		if newEmail != "" {
			key, err := newAPIKey()
			if err != nil {
				return err
			}
			change = &storage.EmailChange{RealmID: realm.ID, UserID: me.ID, NewEmail: newEmail, Key: key, DateCreated: s.nowUnix()}
			return w.CreateEmailChange(ctx, change)
		}
		return nil
	})
	if err != nil {
		return nil, s.internal(ctx, "update settings", err)
	}
	if change != nil && s.notifyEmailChange != nil {
		notice := EmailChangeNotice{RealmID: realm.ID, UserID: me.ID, OldEmail: me.Email, NewEmail: change.NewEmail, Key: change.Key}
		if err := s.notifyEmailChange(ctx, notice); err != nil {
			s.log.ErrorContext(ctx, "email change notification failed", "user_id", me.ID, "err", err)
		}
	}
	return &UpdateSettingsResponse{}, nil
}

// checkOwnPassword verifies a user's current password, with the same
// per-account attempt limit as logins.
func (s *Service) checkOwnPassword(ctx context.Context, realmID int64, u *storage.User, password string) error {
	key := fmt.Sprintf("%d:%s", realmID, strings.ToLower(u.Email))
	if wait := s.logins.begin(key, s.now()); wait > 0 {
		secs := math.Ceil(wait.Seconds())
		return RateLimited(fmt.Sprintf("You're making too many attempts! Try again in %d seconds.", int(secs)), secs)
	}
	if u.PasswordHash == "" || !s.hasher.Verify(u.PasswordHash, password) {
		return BadRequest("Wrong password!")
	}
	s.logins.clear(key)
	return nil
}

// emailFree checks that no other user of the realm has the email.
func (r reads) emailFree(ctx context.Context, realmID int64, email string, self int64) error {
	other, err := r.st.GetUserByEmail(ctx, realmID, email)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return nil
	case err != nil:
		return r.s.internal(ctx, "check email", err)
	case other.ID != self:
		return clash("Email is already in use.")
	}
	return nil
}

func checkTimezone(tz string) error {
	if tz == "" {
		return nil
	}
	if tz == "Local" || strings.HasPrefix(tz, "/") || strings.Contains(tz, "..") {
		return BadRequest("Not a recognized time zone")
	}
	if _, err := time.LoadLocation(tz); err != nil {
		return BadRequest("Not a recognized time zone")
	}
	return nil
}

// GetSettingsResponse is the success body of GetSettings.
type GetSettingsResponse struct {
	UserSettings SettingsWithTimezone `json:"user_settings"`
}

// SettingsWithTimezone is Settings with the user's timezone, as the
// reference presents user_settings.
type SettingsWithTimezone struct {
	Settings
	Timezone string `json:"timezone"`
}

// GetSettings returns the caller's settings.
func (s *Service) GetSettings(ctx context.Context, c Caller) (*GetSettingsResponse, error) {
	return s.reads().getSettings(ctx, c)
}

// getSettings is GetSettings reading through r.
func (r reads) getSettings(ctx context.Context, c Caller) (*GetSettingsResponse, error) {
	me, _, err := r.actor(ctx, c)
	if err != nil {
		return nil, err
	}
	return &GetSettingsResponse{UserSettings: SettingsWithTimezone{Settings: settingsOf(me), Timezone: me.Timezone}}, nil
}

// ConfirmEmailChangeRequest is the input of ConfirmEmailChange.
type ConfirmEmailChangeRequest struct {
	Key string `json:"key"`
}

// ConfirmEmailChangeResponse is the success body of ConfirmEmailChange.
type ConfirmEmailChangeResponse struct {
	UserID int64  `json:"user_id"`
	Email  string `json:"email"`
}

var errBadConfirmation = BadRequest("Invalid or expired confirmation key")

// ConfirmEmailChange applies a pending email change. The key is the
// credential (it was sent to the new address), so no Caller is needed.
func (s *Service) ConfirmEmailChange(ctx context.Context, realmID int64, req ConfirmEmailChangeRequest) (*ConfirmEmailChangeResponse, error) {
	if req.Key == "" {
		return nil, MissingArgument("key")
	}
	change, err := s.reads().emailChange(ctx, realmID, req.Key)
	if err != nil {
		return nil, err
	}
	if time.Duration(s.nowUnix()-change.DateCreated)*time.Second > EmailChangeValidity {
		err := s.write(ctx, realmID, func(w *writeTx) error { return w.DeleteEmailChange(ctx, realmID, change.ID) })
		if err != nil {
			return nil, s.internal(ctx, "confirm email change", err)
		}
		return nil, errBadConfirmation
	}
	var resp *ConfirmEmailChangeResponse
	err = s.write(ctx, realmID, func(w *writeTx) error {
		// Read again inside the transaction: a newer request may have
		// replaced the change since, and the organization's settings
		// decide who is told.
		change, err := w.reads().emailChange(ctx, realmID, req.Key)
		if err != nil {
			return err
		}
		realm, err := w.GetRealm(ctx, realmID)
		if err != nil {
			return err
		}
		u, err := w.GetUser(ctx, realmID, change.UserID)
		if err != nil {
			return err
		}
		if !u.IsActive {
			return errUserDeactivated
		}
		if err := w.reads().emailFree(ctx, realmID, change.NewEmail, u.ID); err != nil {
			return err
		}
		old := *u
		u.Email = change.NewEmail
		if err := w.UpdateUser(ctx, u, "email"); err != nil {
			return err
		}
		emitEmailChange(w, realm, &old, u)
		resp = &ConfirmEmailChangeResponse{UserID: u.ID, Email: u.Email}
		return w.DeleteEmailChange(ctx, realmID, change.ID)
	})
	if errors.Is(err, storage.ErrConflict) {
		return nil, clash("Email is already in use.")
	}
	if err != nil {
		return nil, s.internal(ctx, "confirm email change", err)
	}
	return resp, nil
}

// emailChange is the pending email change of key: errBadConfirmation when
// there is none.
func (r reads) emailChange(ctx context.Context, realmID int64, key string) (*storage.EmailChange, error) {
	change, err := r.st.GetEmailChangeByKey(ctx, realmID, key)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, errBadConfirmation
	} else if err != nil {
		return nil, r.s.internal(ctx, "confirm email change", err)
	}
	return change, nil
}

// languageName is a language's name in itself, as language_name shows it.
func languageName(code string) string {
	tag, err := language.Parse(code)
	if err != nil {
		return code
	}
	if name := display.Self.Name(tag); name != "" {
		return name
	}
	return code
}
