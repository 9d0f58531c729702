package chat

import (
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/teamchat/chat/internal/eventq"
	"github.com/teamchat/chat/narrow"
)

// QueueLimits bound the event queues of a Service (see WithQueueLimits).
// The zero value of a field means its default.
type QueueLimits struct {
	// IdleTimeout: a queue nobody polls for this long is collected
	// (default 10 minutes, the reference's); queue_lifespan_secs at
	// registration may ask for longer, up to MaxLifespan (7 days).
	IdleTimeout time.Duration
	MaxLifespan time.Duration
	// A long poll that sees no event ends with a heartbeat after a random
	// time between HeartbeatMin and HeartbeatMax (45 s and 55 s).
	HeartbeatMin, HeartbeatMax time.Duration
	// CollectEvery is how often idle queues are collected (1 minute).
	CollectEvery time.Duration
	// A queue whose client falls behind by more than MaxQueueEvents
	// events (default 100,000) or MaxQueueBytes bytes (32 MiB) is dropped:
	// its client re-registers, as with the reference. When all queues
	// together hold more than MaxTotalBytes (1 GiB), the largest is dropped.
	MaxQueueEvents int
	MaxQueueBytes  int
	MaxTotalBytes  int64
}

func (l QueueLimits) withDefaults() QueueLimits {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.IdleTimeout, 10*time.Minute)
	def(&l.MaxLifespan, 7*24*time.Hour)
	def(&l.HeartbeatMin, 45*time.Second)
	def(&l.HeartbeatMax, 55*time.Second)
	def(&l.CollectEvery, time.Minute)
	if l.HeartbeatMax < l.HeartbeatMin {
		l.HeartbeatMax = l.HeartbeatMin
	}
	if l.MaxQueueEvents <= 0 {
		l.MaxQueueEvents = 100_000
	}
	if l.MaxQueueBytes <= 0 {
		l.MaxQueueBytes = 32 << 20
	}
	if l.MaxTotalBytes <= 0 {
		l.MaxTotalBytes = 1 << 30
	}
	return l
}

// WithQueueLimits sets the event queues' timeouts and memory bounds.
func WithQueueLimits(l QueueLimits) Option { return func(s *Service) { s.queueLimit = l } }

// The Service's event queues are an internal/eventq hub: the machinery
// (queues, bounds, polls, collection) lives there; this package decides
// who receives each event and in which form (event_render.go), and what
// the queues are told of their users' standing (event_bus.go).
type (
	eventHub   = eventq.Hub[queueOptions]
	eventQueue = eventq.Queue[queueOptions]
)

// heartbeatEvent ends a long poll that saw no event.
var heartbeatEvent = []byte(`{"type":"heartbeat"}`)

func newEventHub(s *Service) *eventHub {
	lim := s.queueLimit
	return eventq.New[queueOptions](eventq.Config{
		Limits: eventq.Limits{MaxEvents: lim.MaxQueueEvents, MaxBytes: lim.MaxQueueBytes, MaxTotalBytes: lim.MaxTotalBytes,
			HeartbeatMin: lim.HeartbeatMin, HeartbeatMax: lim.HeartbeatMax, CollectEvery: lim.CollectEvery},
		Now: s.now, Log: s.log, Heartbeat: heartbeatEvent, RenderRun: renderFlagsRun, NewID: s.newQueueID})
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// queueOptions are a queue's registration choices.
type queueOptions struct {
	eventTypes       map[string]bool // nil: every type
	narrow           []narrow.Term
	applyMarkdown    bool
	clientGravatar   bool
	allPublicStreams bool

	bulkMessageDeletion      bool
	userSettingsObject       bool
	streamTyping             bool
	includeDeactivatedGroups bool
	emptyTopicName           bool
	linkifierURLTemplate     bool

	lifespan time.Duration
}

// variantKey names the form of a message event this queue shows.
func (o *queueOptions) variantKey(gravatarNull bool, local bool) uint8 {
	var k uint8
	if o.applyMarkdown {
		k |= 1
	}
	if o.clientGravatar && gravatarNull {
		k |= 2
	}
	if o.emptyTopicName {
		k |= 4
	}
	if local {
		k |= 8
	}
	return k
}

// capability reports a queue's client capability by name.
func (o *queueOptions) capability(name string) bool {
	switch name {
	case "include_deactivated_groups":
		return o.includeDeactivatedGroups
	case "user_settings_object":
		return o.userSettingsObject
	case "stream_typing_notifications":
		return o.streamTyping
	}
	return false
}
