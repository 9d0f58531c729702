package chat

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/teamchat/chat/internal/outbox"
	"github.com/teamchat/chat/internal/presencebuf"
	"github.com/teamchat/chat/internal/writelane"
	"github.com/teamchat/chat/storage"
	"github.com/teamchat/chat/storage/blob"
)

// FeatureLevel is the API feature level this server reports as
// service_feature_level. It is the level of the reference release we follow
// (Zulip 10.2, feature level 372): clients use it to decide which request and
// response shapes to use, and every endpoint we serve speaks the shapes of
// that level (modern error codes, ignored_parameters_unsupported on every
// success, user IDs as keys, group-setting values as integers or objects).
// Endpoints that are not implemented yet answer 404, which clients of that
// level already handle for optional features.
const FeatureLevel = 372

// Version is the server version reported as service_version and
// service_merge_base.
const Version = "teamchat-0.1.0"

// Versions are the server's version fields under both their names: the
// spec's service_* and the reference's zulip_*, which its clients read
// (its Python binding refuses a server without zulip_version). GET
// /server_settings and every POST /register answer carry them.
type Versions struct {
	FeatureLevel      int    `json:"service_feature_level"`
	Version           string `json:"service_version"`
	MergeBase         string `json:"service_merge_base"`
	ZulipFeatureLevel int    `json:"zulip_feature_level"`
	ZulipVersion      string `json:"zulip_version"`
	ZulipMergeBase    string `json:"zulip_merge_base"`
}

var serverVersions = Versions{FeatureLevel: FeatureLevel, Version: Version, MergeBase: Version,
	ZulipFeatureLevel: FeatureLevel, ZulipVersion: Version, ZulipMergeBase: Version}

// put writes the version fields into a JSON object being built.
func (v Versions) put(m map[string]any) {
	m["service_feature_level"], m["zulip_feature_level"] = v.FeatureLevel, v.ZulipFeatureLevel
	m["service_version"], m["zulip_version"] = v.Version, v.ZulipVersion
	m["service_merge_base"], m["zulip_merge_base"] = v.MergeBase, v.ZulipMergeBase
}

// Limits are the server's size limits (facts §7). The zero value of a field
// means "use the default".
type Limits struct {
	MaxMessageLength    int // 10000
	MaxTopicLength      int // 60
	MaxStreamNameLength int // 60
	MaxStreamDescLength int // 1024
	MaxUserNameLength   int // 100
	MinUserNameLength   int // 2
	MaxGroupNameLength  int // 100
	MinPasswordLength   int // 6
	MaxPasswordLength   int // 100
	// LoginAttempts failed password logins per account are allowed within
	// LoginWindow before fetch-api-key answers RATE_LIMIT_HIT.
	LoginAttempts int           // 5
	LoginWindow   time.Duration // 30 minutes
	// MaxFileUploadSizeMiB bounds an uploaded file; MaxEmojiFileSizeMiB a
	// custom emoji's image.
	MaxFileUploadSizeMiB int // 25
	MaxEmojiFileSizeMiB  int // 5
}

// DefaultLimits are the reference system's limits.
var DefaultLimits = Limits{
	MaxMessageLength:    10000,
	MaxTopicLength:      60,
	MaxStreamNameLength: 60,
	MaxStreamDescLength: 1024,
	MaxUserNameLength:   100,
	MinUserNameLength:   2,
	MaxGroupNameLength:  100,
	MinPasswordLength:   6,
	MaxPasswordLength:   100,
	LoginAttempts:       5,
	LoginWindow:         30 * time.Minute,

	MaxFileUploadSizeMiB: 25,
	MaxEmojiFileSizeMiB:  5,
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	pick := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	pick(&l.MaxMessageLength, d.MaxMessageLength)
	pick(&l.MaxFileUploadSizeMiB, d.MaxFileUploadSizeMiB)
	pick(&l.MaxEmojiFileSizeMiB, d.MaxEmojiFileSizeMiB)
	pick(&l.MaxTopicLength, d.MaxTopicLength)
	pick(&l.MaxStreamNameLength, d.MaxStreamNameLength)
	pick(&l.MaxStreamDescLength, d.MaxStreamDescLength)
	pick(&l.MaxUserNameLength, d.MaxUserNameLength)
	pick(&l.MinUserNameLength, d.MinUserNameLength)
	pick(&l.MaxGroupNameLength, d.MaxGroupNameLength)
	pick(&l.MinPasswordLength, d.MinPasswordLength)
	pick(&l.MaxPasswordLength, d.MaxPasswordLength)
	pick(&l.LoginAttempts, d.LoginAttempts)
	if l.LoginWindow <= 0 {
		l.LoginWindow = d.LoginWindow
	}
	return l
}

// Caller identifies who makes a call: a user of one realm. The Service loads
// and checks the user on every call, so a Caller never carries stale roles.
type Caller struct {
	RealmID int64
	UserID  int64
}

// Service implements every operation of the chat API. It is safe for
// concurrent use. Create it with New.
type Service struct {
	store  storage.Store
	now    func() time.Time
	log    *slog.Logger
	limits Limits
	hasher PasswordHasher
	logins *attemptLimiter

	notifyEmailChange func(context.Context, EmailChangeNotice) error
	sendInvitation    func(context.Context, Invitation) error

	maintenanceEvery time.Duration
	// presenceFlushEvery is how often Run writes buffered presence.
	presenceFlushEvery time.Duration
	records            *recordCache
	linkifiers         *linkifierCache
	messages           *messageCache
	messageCacheBytes  int
	markAllBatch       int
	blobs              blob.Store
	signingKey         []byte
	// gatewayDomain is the email gateway's (WithEmailGateway); "" when
	// there is none.
	gatewayDomain string

	sinks      []func(Event)
	queueLimit QueueLimits
	// tel is the Service's metrics and tracing (telemetry.go).
	tel telemetry

	// The Service's machinery. A Service is never copied (go vet's
	// copylocks sees to it): a rule that reads elsewhere is given other
	// reads (reads.go), not another Service.
	realmHosts   sync.Map // exact host -> realm ID (see RealmForHost)
	standIn      sync.Once
	standInValue string
	publishMu    sync.Mutex                // one transaction's events reach the sinks at a time
	writes       *writelane.Gate[*writeOp] // the write path's queues (write.go)
	hub          *eventHub
	busOrigin    string   // this Service on the event bus (event_bus.go)
	marks        busMarks // its markers on the bus
	presence     *presencebuf.Buffer
	received     receivedIndex // what max_message_id is answered from (max_message_id.go)
	unread       *unreadCache  // the remembered unread states (unread_cache.go)
	// The outbox runners of the background deliveries, and what they
	// deliver with (scheduled_delivery.go, outgoing_webhooks.go,
	// notifications_delivery.go).
	scheduler        *outbox.Runner[dueScheduled]
	webhooks         *outbox.Runner[claimedWebhook]
	notify           *outbox.Runner[notifyClaim]
	webhookDeliverer WebhookDeliverer
	webhookBudget    time.Duration // webhookAttemptBudget (tests shorten it)
	notifier         Notifier
	fleet            fleetState // the other servers on the database (fleet.go)
}

// Option configures a Service.
type Option func(*Service)

// WithClock sets the clock the Service reads time from (tests move it).
func WithClock(now func() time.Time) Option { return func(s *Service) { s.now = now } }

// WithLogger sets the structured logger; the default discards logs.
func WithLogger(l *slog.Logger) Option { return func(s *Service) { s.log = l } }

// WithLimits overrides size limits; zero fields keep their defaults.
func WithLimits(l Limits) Option { return func(s *Service) { s.limits = l } }

// WithPasswordHasher replaces the password hashing scheme (the default is
// argon2id with OWASP parameters; tests use a cheaper cost).
func WithPasswordHasher(h PasswordHasher) Option { return func(s *Service) { s.hasher = h } }

// New returns a Service on store.
func New(store storage.Store, opts ...Option) *Service {
	s := &Service{
		store:             store,
		unread:            newUnreadCache(),
		now:               time.Now,
		log:               slog.New(slog.NewTextHandler(io.Discard, nil)),
		hasher:            Argon2id{},
		messageCacheBytes: defaultMessageCacheBytes,
		presence:          presencebuf.New(),
		webhookBudget:     webhookAttemptBudget,

		markAllBatch: 2000,
	}
	s.scheduler, s.webhooks, s.notify = newScheduler(s), newWebhookRunner(s), newNotifyRunner(s)
	for _, o := range opts {
		o(s)
	}
	s.limits = s.limits.withDefaults()
	s.records = newRecordCache(s.now)
	s.messages = newMessageCache(s.messageCacheBytes, s.now)
	s.linkifiers = newLinkifierCache(s.records, s.now)
	if s.signingKey == nil {
		s.signingKey = make([]byte, 32)
		_, _ = rand.Read(s.signingKey)
	}
	s.logins = newAttemptLimiter(s.limits.LoginAttempts, s.limits.LoginWindow)
	s.queueLimit = s.queueLimit.withDefaults()
	s.hub = newEventHub(s)
	s.busOrigin = randomHex(8)
	s.writes = newWriteLanes(s, writeLimit(store))
	s.startTelemetry()
	return s
}

// Limits returns the limits in force.
func (s *Service) Limits() Limits { return s.limits }

// Logger returns the Service's logger, for transports that log alongside it.
func (s *Service) Logger() *slog.Logger { return s.log }

// Close stops event delivery, ends every pending long poll and releases
// the store.
func (s *Service) Close() error {
	s.hub.Stop()
	s.flushPresence(context.Background())
	return s.store.Close()
}

// StopEvents ends every pending long poll and drops every event queue
// (their clients re-register, elsewhere if this server is going away),
// and stops listening to the event bus. A host calls it as it begins to
// shut its HTTP server down (http.Server.RegisterOnShutdown), so that the
// shutdown does not wait for long polls that may last a minute.
func (s *Service) StopEvents() { s.hub.Stop() }

// DropEventQueues drops every event queue of this Service and ends their
// long polls; their clients get BAD_EVENT_QUEUE_ID and register again
// (reloading their state). Events keep flowing to new queues.
func (s *Service) DropEventQueues() { s.hub.DropAll() }

func (s *Service) nowUnix() int64 { return s.now().UTC().Unix() }

// internal logs an unexpected error with its detail and returns the generic
// error that is safe to send to a client, naming op as the operation that
// failed. An expected error (a *Error) is returned as it is, naming op
// unless it names an operation already.
func (s *Service) internal(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e.withOp(op)
	}
	switch {
	case ctx.Err() != nil:
		// The caller went away (client disconnect, deadline): not a fault here.
		s.log.DebugContext(ctx, "operation abandoned", "op", op, "err", err)
		e = Internal(err)
	case errors.Is(err, storage.ErrUnavailable):
		s.log.WarnContext(ctx, "database unavailable", "op", op, "err", err)
		e = Unavailable(err)
		s.countError(ctx, KindUnavailable)
	default:
		s.log.ErrorContext(ctx, "internal error", "op", op, "err", err)
		e = Internal(err)
		s.countError(ctx, KindInternal)
	}
	e.op, e.logged = op, true
	return e
}
