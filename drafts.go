package chat

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/teamchat/chat/storage"
)

// DraftInput is a draft as a client sends it. Type, To, Topic and Content
// are required; Timestamp defaults to now.
type DraftInput struct {
	// Type is "stream", "private" or "" (not addressed yet).
	Type *string `json:"type"`
	// To is [channel ID] for a channel draft, user IDs for a direct one.
	To        *[]int64 `json:"to"`
	Topic     *string  `json:"topic"`
	Content   *string  `json:"content"`
	Timestamp *int64   `json:"timestamp"`
}

// Draft is a stored draft.
type Draft struct {
	ID        int64   `json:"id"`
	Type      string  `json:"type"`
	To        []int64 `json:"to"`
	Topic     string  `json:"topic"`
	Content   string  `json:"content"`
	Timestamp int64   `json:"timestamp"`
}

// GetDraftsResponse is the success body of GetDrafts.
type GetDraftsResponse struct {
	Count  int     `json:"count"`
	Drafts []Draft `json:"drafts"`
}

// CreateDraftsRequest is the input of CreateDrafts.
type CreateDraftsRequest struct {
	Drafts []DraftInput `json:"drafts"`
}

// CreateDraftsResponse is the success body of CreateDrafts: the new IDs in
// the order the drafts were sent.
type CreateDraftsResponse struct {
	IDs []int64 `json:"ids"`
}

// EditDraftRequest is the input of EditDraft.
type EditDraftRequest struct {
	DraftID int64      `json:"draft_id"`
	Draft   DraftInput `json:"draft"`
}

// DeleteDraftRequest is the input of DeleteDraft.
type DeleteDraftRequest struct {
	DraftID int64 `json:"draft_id"`
}

// EmptyResponse is the success body of operations that return nothing
// beyond the envelope.
type EmptyResponse struct{}

var (
	errDraftsDisabled = refused("User has disabled synchronizing drafts.")
	errNoSuchDraft    = NotFound("Draft does not exist")
)

// draftUser loads the caller and checks that they keep drafts on the server.
func (r reads) draftUser(ctx context.Context, c Caller) (*storage.User, *storage.Realm, error) {
	me, realm, err := r.actor(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	if !settingsOf(me).EnableDraftsSynchronization {
		return nil, nil, errDraftsDisabled
	}
	return me, realm, nil
}

// GetDrafts lists the caller's drafts, most recently edited first.
func (s *Service) GetDrafts(ctx context.Context, c Caller) (*GetDraftsResponse, error) {
	return s.reads().getDrafts(ctx, c)
}

// getDrafts is GetDrafts reading through r.
func (r reads) getDrafts(ctx context.Context, c Caller) (*GetDraftsResponse, error) {
	me, _, err := r.draftUser(ctx, c)
	if err != nil {
		return nil, err
	}
	rows, err := r.st.ListDrafts(ctx, me.RealmID, me.ID)
	if err != nil {
		return nil, r.s.internal(ctx, "get drafts", err)
	}
	// The reference lists them oldest edit first (the store keeps newest
	// first, the order of the registration snapshot).
	slices.SortStableFunc(rows, func(a, b storage.Draft) int {
		return cmp.Or(cmp.Compare(a.Timestamp, b.Timestamp), cmp.Compare(a.ID, b.ID))
	})
	resp := &GetDraftsResponse{Count: len(rows), Drafts: make([]Draft, 0, len(rows))}
	for i := range rows {
		resp.Drafts = append(resp.Drafts, draftView(&rows[i]))
	}
	return resp, nil
}

// CreateDrafts stores new drafts; all are validated before any is stored.
func (s *Service) CreateDrafts(ctx context.Context, c Caller, req CreateDraftsRequest) (*CreateDraftsResponse, error) {
	me, realm, err := s.reads().draftUser(ctx, c)
	if err != nil {
		return nil, err
	}
	rows := make([]storage.Draft, len(req.Drafts))
	for i, in := range req.Drafts {
		if err := s.reads().checkDraft(ctx, me, realm, in, fmt.Sprintf("drafts[%d]", i), &rows[i]); err != nil {
			return nil, err
		}
	}
	resp := &CreateDraftsResponse{IDs: make([]int64, 0, len(rows))}
	err = s.write(ctx, realm.ID, func(w *writeTx) error {
		resp.IDs = resp.IDs[:0]
		ev := DraftsEvent{Op: "add"}
		for i := range rows {
			if err := w.CreateDraft(ctx, &rows[i]); err != nil {
				return err
			}
			resp.IDs = append(resp.IDs, rows[i].ID)
			ev.Drafts = append(ev.Drafts, draftView(&rows[i]))
		}
		if len(rows) > 0 {
			w.emit(toUsers(me.ID), ev)
		}
		return nil
	})
	if err != nil {
		return nil, s.internal(ctx, "create drafts", err)
	}
	return resp, nil
}

// EditDraft replaces one of the caller's drafts.
func (s *Service) EditDraft(ctx context.Context, c Caller, req EditDraftRequest) (*EmptyResponse, error) {
	me, realm, err := s.reads().draftUser(ctx, c)
	if err != nil {
		return nil, err
	}
	var row storage.Draft
	if err := s.reads().checkDraft(ctx, me, realm, req.Draft, "draft", &row); err != nil {
		return nil, err
	}
	row.ID = req.DraftID
	err = s.write(ctx, realm.ID, func(w *writeTx) error {
		if err := w.UpdateDraft(ctx, &row); err != nil {
			return err
		}
		view := draftView(&row)
		w.emit(toUsers(me.ID), DraftsEvent{Op: "update", Draft: &view})
		return nil
	})
	if errors.Is(err, storage.ErrNotFound) {
		return nil, errNoSuchDraft
	} else if err != nil {
		return nil, s.internal(ctx, "edit draft", err)
	}
	return &EmptyResponse{}, nil
}

// DeleteDraft deletes one of the caller's drafts.
func (s *Service) DeleteDraft(ctx context.Context, c Caller, req DeleteDraftRequest) (*EmptyResponse, error) {
	me, _, err := s.reads().draftUser(ctx, c)
	if err != nil {
		return nil, err
	}
	err = s.write(ctx, me.RealmID, func(w *writeTx) error {
		if err := w.DeleteDraft(ctx, me.RealmID, me.ID, req.DraftID); err != nil {
			return err
		}
		w.emit(toUsers(me.ID), DraftsEvent{Op: "remove", DraftID: req.DraftID})
		return nil
	})
	if errors.Is(err, storage.ErrNotFound) {
		return nil, errNoSuchDraft
	} else if err != nil {
		return nil, s.internal(ctx, "delete draft", err)
	}
	return &EmptyResponse{}, nil
}

// checkDraft validates a client draft (where names it in errors) and fills row.
func (r reads) checkDraft(ctx context.Context, me *storage.User, realm *storage.Realm, in DraftInput, where string, row *storage.Draft) error {
	missing := func(key string) error {
		return BadRequest(`%s["%s"] field is missing: Field required`, where, key)
	}
	switch {
	case in.Type == nil:
		return missing("type")
	case in.To == nil:
		return missing("to")
	case in.Topic == nil:
		return missing("topic")
	case in.Content == nil:
		return missing("content")
	}
	if strings.ContainsRune(*in.Content, 0) || strings.ContainsRune(*in.Topic, 0) {
		return BadRequest("Content must not contain null bytes")
	}
	*row = storage.Draft{RealmID: me.RealmID, UserID: me.ID, Type: *in.Type, Content: *in.Content, Timestamp: r.s.nowUnix()}
	if in.Timestamp != nil {
		if *in.Timestamp < 0 {
			return BadRequest("Timestamp must not be negative.")
		}
		row.Timestamp = *in.Timestamp
	}
	to := []int64{}
	switch *in.Type {
	case "":
		// Not addressed yet: recipients and topic are ignored.
	case "stream":
		if len(*in.To) != 1 {
			return BadRequest("Must specify exactly 1 channel ID for channel messages")
		}
		cc, err := r.loadChannelCtx(ctx, me, realm)
		if err != nil {
			return r.s.internal(ctx, "check draft", err)
		}
		if _, err := r.visibleChannel(ctx, cc, (*in.To)[0]); err != nil {
			return err
		}
		to = *in.To
		row.Topic = truncateTopic(strings.TrimSpace(*in.Topic), r.s.limits.MaxTopicLength)
	case "private":
		for _, id := range *in.To {
			_, err := r.st.GetUser(ctx, me.RealmID, id)
			if errors.Is(err, storage.ErrNotFound) {
				return noSuch("Invalid user ID %d", id)
			} else if err != nil {
				return r.s.internal(ctx, "check draft", err)
			}
		}
		to = *in.To
	default:
		return BadRequest(`Invalid %s["type"]: allowed values are "", "stream", "private"`, where)
	}
	b, _ := json.Marshal(to) // a list of integers always encodes
	row.To = string(b)
	return nil
}

func draftView(d *storage.Draft) Draft {
	to := []int64{}
	_ = json.Unmarshal([]byte(d.To), &to) // written by checkDraft
	return Draft{ID: d.ID, Type: d.Type, To: to, Topic: d.Topic, Content: d.Content, Timestamp: d.Timestamp}
}

// truncateTopic cuts a topic to max characters, ending it with "..." as the
// reference does.
func truncateTopic(topic string, max int) string {
	r := []rune(topic)
	if len(r) <= max {
		return topic
	}
	return string(r[:max-3]) + "..."
}
