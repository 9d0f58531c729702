package storage

import "context"

// FleetStore is what the app servers sharing one database know of each
// other (the fleet): who is serving and where peers reach them, a secret
// they share, which event queues moved from the server that made them to
// another, and the queues a server saved for its own restart.
type FleetStore interface {
	// RegisterServer records a starting server and sets s.ID.
	RegisterServer(ctx context.Context, s *Server) error
	// BeatServer records that server id was alive at seenAt, and whether
	// it is draining (stopping: not to be handed anything).
	BeatServer(ctx context.Context, id, seenAt int64, draining bool) error
	// ListServers returns the servers seen at or after since, by ID.
	ListServers(ctx context.Context, since int64) ([]Server, error)
	// RemoveServer deletes a server's record (it stopped) and the moves
	// of queues to it.
	RemoveServer(ctx context.Context, id int64) error
	// ForgetServers deletes the servers not seen since before, and the
	// moves of queues to servers that are no longer recorded.
	ForgetServers(ctx context.Context, before int64) error
	// FleetSecret returns the secret the servers share, storing candidate
	// first if there is none yet.
	FleetSecret(ctx context.Context, candidate string) (string, error)

	// RecordQueueMoves records that the queues now live on server (a
	// queue that moved before is moved again).
	RecordQueueMoves(ctx context.Context, server int64, queueIDs []string, now int64) error
	// ListQueueMoves returns every recorded move.
	ListQueueMoves(ctx context.Context) ([]QueueMove, error)
	// GetQueueMove returns where one queue moved (ErrNotFound: it did
	// not).
	GetQueueMove(ctx context.Context, queueID string) (*QueueMove, error)

	// SaveEventQueues stores queues for the next server to start.
	SaveEventQueues(ctx context.Context, qs []SavedEventQueue) error
	// TakeSavedEventQueues deletes and returns every saved queue.
	TakeSavedEventQueues(ctx context.Context) ([]SavedEventQueue, error)
}

// Server is one app server of the fleet.
type Server struct {
	ID int64 `bun:"id,pk,autoincrement"`
	// Address is where its peers reach it (host:port).
	Address   string `bun:"address"`
	StartedAt int64  `bun:"started_at"`
	SeenAt    int64  `bun:"seen_at"`
	Draining  bool   `bun:"draining"`
}

// QueueMove says that an event queue now lives on ServerID.
type QueueMove struct {
	QueueID  string `bun:"queue_id,pk"`
	ServerID int64  `bun:"server_id"`
	MovedAt  int64  `bun:"moved_at"`
}

// SavedEventQueue is an event queue a stopping server saved: State is
// the queue's contents as package chat encodes them.
type SavedEventQueue struct {
	QueueID string `bun:"queue_id,pk"`
	RealmID int64  `bun:"realm_id"`
	UserID  int64  `bun:"user_id"`
	SavedAt int64  `bun:"saved_at"`
	State   string `bun:"state"`
}
