package chat

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"
	"golang.org/x/crypto/argon2"

	"github.com/teamchat/chat/storage"
)

const apiKeyAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// APIKeyLength is the length of every API key (facts §0).
const APIKeyLength = 32

// newAPIKey returns 32 characters of [A-Za-z0-9] from crypto/rand, without
// modulo bias.
func newAPIKey() (string, error) {
	out := make([]byte, 0, APIKeyLength)
	buf := make([]byte, 64)
	for len(out) < APIKeyLength {
		if _, err := rand.Read(buf); err != nil {
			return "", err
		}
		for _, b := range buf {
			// 62*4 = 248: reject bytes >= 248 so every character is equally likely.
			if b < 248 && len(out) < APIKeyLength {
				out = append(out, apiKeyAlphabet[int(b)%len(apiKeyAlphabet)])
			}
		}
	}
	return string(out), nil
}

func wellFormedAPIKey(k string) bool {
	if len(k) != APIKeyLength {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// PasswordHasher hashes and verifies passwords. Hash returns a
// self-describing encoded string; Verify must take constant time in the
// password's correctness.
type PasswordHasher interface {
	Hash(password string) (string, error)
	Verify(encoded, password string) bool
}

// Argon2id is the default PasswordHasher: argon2id with a 16-byte random
// salt, encoded in the PHC string format. Zero fields take the OWASP
// recommended parameters (t=2, m=19 MiB, p=1). Verify reads the parameters
// from the encoded hash, so changing them does not break stored passwords.
type Argon2id struct {
	Time      uint32
	MemoryKiB uint32
	Threads   uint8
}

func (a Argon2id) params() (uint32, uint32, uint8) {
	t, m, p := a.Time, a.MemoryKiB, a.Threads
	if t == 0 {
		t = 2
	}
	if m == 0 {
		m = 19 * 1024
	}
	if p == 0 {
		p = 1
	}
	return t, m, p
}

// Hash implements PasswordHasher.
func (a Argon2id) Hash(password string) (string, error) {
	t, m, p := a.params()
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	sum := argon2.IDKey([]byte(password), salt, t, m, p, 32)
	enc := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, m, t, p, enc.EncodeToString(salt), enc.EncodeToString(sum)), nil
}

// Verify implements PasswordHasher.
func (a Argon2id) Verify(encoded, password string) bool {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false
	}
	var m, t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil || t == 0 || p == 0 || m > 4<<20 || t > 100 {
		return false
	}
	enc := base64.RawStdEncoding
	salt, err := enc.DecodeString(parts[4])
	if err != nil {
		return false
	}
	want, err := enc.DecodeString(parts[5])
	if err != nil || len(want) == 0 {
		return false
	}
	got := argon2.IDKey([]byte(password), salt, t, m, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}

// Authenticate checks an (email, API key) pair in a realm and returns the
// Caller it identifies. Every failure is an Unauthenticated error: wrong or
// malformed keys and unknown emails answer UNAUTHORIZED, a deactivated user
// USER_DEACTIVATED and a deactivated organization REALM_DEACTIVATED. The
// email is compared case-insensitively with the user's real email.
func (s *Service) Authenticate(ctx context.Context, realmID int64, email, apiKey string) (c Caller, err error) {
	return s.reads().authenticate(ctx, realmID, email, apiKey)
}

// authenticate is Authenticate reading through r.
func (r reads) authenticate(ctx context.Context, realmID int64, email, apiKey string) (c Caller, err error) {
	if r.s.tel.traces {
		var sp trace.Span
		ctx, sp = r.s.span(ctx, "chat.authenticate")
		defer func() { endSpan(sp, err) }()
	}
	if !wellFormedAPIKey(apiKey) {
		return Caller{}, Unauthorized("Malformed API key")
	}
	realm, u, cached := r.c.getByEmail(realmID, email)
	if !cached {
		gen := r.c.generation(realmID)
		realm, u, err = r.st.GetRealmUserByEmail(ctx, realmID, email)
		if err == nil {
			r.c.put(gen, realm, u)
		}
	}
	if errors.Is(err, storage.ErrNotFound) {
		// An unknown email: the organization's state still decides the
		// answer, and the key is compared anyway so timing tells nothing.
		if realm, err := r.st.GetRealm(ctx, realmID); err == nil && realm.Deactivated {
			return Caller{}, errRealmDeactivated
		} else if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return Caller{}, r.s.internal(ctx, "authenticate", err)
		}
		subtle.ConstantTimeCompare([]byte("--------------------------------"), []byte(apiKey))
		return Caller{}, Unauthorized("Invalid API key")
	} else if err != nil {
		return Caller{}, r.s.internal(ctx, "authenticate", err)
	}
	if realm.Deactivated {
		return Caller{}, errRealmDeactivated
	}
	if subtle.ConstantTimeCompare([]byte(u.APIKey), []byte(apiKey)) != 1 {
		return Caller{}, Unauthorized("Invalid API key")
	}
	if !u.IsActive {
		return Caller{}, errUserDeactivated
	}
	return Caller{RealmID: realmID, UserID: u.ID}, nil
}

// actor loads and checks the calling user and their realm. Every
// authenticated operation starts here: roles and deactivation take effect on
// the next call.
func (r reads) actor(ctx context.Context, c Caller) (*storage.User, *storage.Realm, error) {
	realm, u, cached := r.c.get(c.RealmID, c.UserID)
	var err error
	if !cached {
		gen := r.c.generation(c.RealmID)
		realm, u, err = r.st.GetRealmUser(ctx, c.RealmID, c.UserID)
		if err == nil {
			r.c.put(gen, realm, u)
		}
	}
	if errors.Is(err, storage.ErrNotFound) {
		// Tell an unknown organization from an unknown user.
		if realm, err := r.st.GetRealm(ctx, c.RealmID); errors.Is(err, storage.ErrNotFound) {
			return nil, nil, Unauthorized("Invalid organization")
		} else if err != nil {
			return nil, nil, r.s.internal(ctx, "load realm", err)
		} else if realm.Deactivated {
			return nil, nil, errRealmDeactivated
		}
		return nil, nil, Unauthorized("Invalid user")
	} else if err != nil {
		return nil, nil, r.s.internal(ctx, "load caller", err)
	}
	if realm.Deactivated {
		return nil, nil, errRealmDeactivated
	}
	if !u.IsActive {
		return nil, nil, errUserDeactivated
	}
	return u, realm, nil
}

// admin is actor for operations only administrators (and owners) may do:
// anyone else gets errAdminRequired.
func (r reads) admin(ctx context.Context, c Caller) (*storage.User, *storage.Realm, error) {
	me, realm, err := r.actor(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	if !isAdmin(me) {
		return nil, nil, errAdminRequired
	}
	return me, realm, nil
}

// member is actor for operations guests and bots may not do (the
// reference's member-or-admin endpoints): they get errGuestNotAllowed and
// errBotRequest.
func (r reads) member(ctx context.Context, c Caller) (*storage.User, *storage.Realm, error) {
	me, realm, err := r.actor(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	if err := requireMemberOrAdmin(me); err != nil {
		return nil, nil, err
	}
	return me, realm, nil
}

// FetchAPIKeyRequest is the input of FetchAPIKey.
type FetchAPIKeyRequest struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// FetchAPIKeyResponse is the success body of FetchAPIKey.
type FetchAPIKeyResponse struct {
	APIKey string `json:"api_key"`
	Email  string `json:"email"`
	UserID int64  `json:"user_id"`
}

// FetchAPIKey exchanges a username (the real email) and password for the
// account's API key. It needs no Caller. A wrong username or password
// answers 401 AUTHENTICATION_FAILED; after Limits.LoginAttempts failures for
// one account within Limits.LoginWindow it answers RATE_LIMIT_HIT until the
// window has passed (a success clears the count).
func (s *Service) FetchAPIKey(ctx context.Context, realmID int64, req FetchAPIKeyRequest) (*FetchAPIKeyResponse, error) {
	if req.Username == "" {
		return nil, MissingArgument("username")
	}
	key := fmt.Sprintf("%d:%s", realmID, strings.ToLower(req.Username))
	now := s.now()
	// The attempt is counted before the password is checked, so concurrent
	// guesses cannot all slip under the limit; a success clears the count.
	if wait := s.logins.begin(key, now); wait > 0 {
		secs := math.Ceil(wait.Seconds())
		return nil, RateLimited(fmt.Sprintf("You're making too many attempts to sign in. Try again in %d seconds or contact your organization administrator for help.", int(secs)), secs)
	}
	u, err := s.reads().login(ctx, realmID, req.Username, req.Password)
	if err != nil {
		return nil, err
	}
	s.logins.clear(key)
	return &FetchAPIKeyResponse{APIKey: u.APIKey, Email: u.Email, UserID: u.ID}, nil
}

// login is the account a username (the real email) and password name, or
// AUTHENTICATION_FAILED; a deactivated organization or account answers as
// Authenticate does.
func (r reads) login(ctx context.Context, realmID int64, username, password string) (*storage.User, error) {
	realm, err := r.st.GetRealm(ctx, realmID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, errAuthFailed
	} else if err != nil {
		return nil, r.s.internal(ctx, "fetch api key", err)
	}
	if realm.Deactivated {
		return nil, errRealmDeactivated
	}
	u, err := r.st.GetUserByEmail(ctx, realmID, username)
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return nil, r.s.internal(ctx, "fetch api key", err)
	}
	if u == nil || u.IsBot || u.PasswordHash == "" {
		// No password to check: verify against a stand-in hash anyway, so
		// that an unknown account answers as slowly as a wrong password
		// and timing does not tell which accounts exist.
		r.s.hasher.Verify(r.s.standInHash(), password)
		return nil, errAuthFailed
	}
	if !r.s.hasher.Verify(u.PasswordHash, password) {
		return nil, errAuthFailed
	}
	if !u.IsActive {
		return nil, errUserDeactivated
	}
	return u, nil
}

// RegenerateAPIKeyResponse is the success body of RegenerateAPIKey.
type RegenerateAPIKeyResponse struct {
	APIKey string `json:"api_key"`
}

// RegenerateAPIKey replaces the caller's API key; the old key stops working
// at once.
func (s *Service) RegenerateAPIKey(ctx context.Context, c Caller) (*RegenerateAPIKeyResponse, error) {
	u, _, err := s.reads().actor(ctx, c)
	if err != nil {
		return nil, err
	}
	key, err := newAPIKey()
	if err != nil {
		return nil, s.internal(ctx, "regenerate api key", err)
	}
	u.APIKey = key
	err = s.write(ctx, u.RealmID, func(w *writeTx) error { return w.UpdateUser(ctx, u, "api_key") })
	if err != nil {
		return nil, s.internal(ctx, "regenerate api key", err)
	}
	return &RegenerateAPIKeyResponse{APIKey: key}, nil
}

// attemptLimiter counts attempts per key in a sliding window.
type attemptLimiter struct {
	mu     sync.Mutex
	max    int
	window time.Duration
	fails  map[string][]time.Time
	writes int
}

func newAttemptLimiter(max int, window time.Duration) *attemptLimiter {
	return &attemptLimiter{max: max, window: window, fails: map[string][]time.Time{}}
}

// prune drops failures older than the window; the caller holds mu.
func (l *attemptLimiter) prune(key string, now time.Time) []time.Time {
	ts := l.fails[key]
	i := 0
	for i < len(ts) && now.Sub(ts[i]) >= l.window {
		i++
	}
	ts = ts[i:]
	if len(ts) == 0 {
		delete(l.fails, key)
		return nil
	}
	l.fails[key] = ts
	return ts
}

// begin counts an attempt for key and returns 0, or, when the key has used
// its attempts within the window, how long it must wait (nothing counted).
func (l *attemptLimiter) begin(key string, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	ts := l.prune(key, now)
	if len(ts) >= l.max {
		return l.window - now.Sub(ts[len(ts)-l.max])
	}
	l.fails[key] = append(ts, now)
	// Sweep every key now and then so abandoned keys do not accumulate.
	if l.writes++; l.writes%1024 == 0 {
		for k := range l.fails {
			l.prune(k, now)
		}
	}
	return 0
}

func (l *attemptLimiter) clear(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.fails, key)
}

// standInHash is a hash of a random password made with the Service's
// hasher (once), verified when a login names no account with a password.
func (s *Service) standInHash() string {
	s.standIn.Do(func() {
		secret, err := newAPIKey()
		if err == nil {
			s.standInValue, err = s.hasher.Hash(secret)
		}
		if err != nil {
			s.log.Error("stand-in password hash", "err", err)
		}
	})
	return s.standInValue
}
