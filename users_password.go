package chat

import (
	"context"
	"errors"

	"github.com/teamchat/chat/storage"
)

// SetUserPasswordRequest is the input of SetUserPassword.
type SetUserPasswordRequest struct {
	// Email is the user's (compared case-insensitively).
	Email    string
	Password string
}

// SetUserPassword sets a user's password: an administrative operation of
// the host (examples/server -set-password), with no Caller, for the first
// login of imported users (who have no usable password) or a forgotten
// one. The password must meet the organization's rules, as at signup. It
// goes through the write path like any change of a user; the user's API
// key is kept.
func (s *Service) SetUserPassword(ctx context.Context, realmID int64, req SetUserPasswordRequest) error {
	if err := s.checkPassword(req.Password); err != nil {
		return err
	}
	u, err := s.reads().passwordAccount(ctx, realmID, req.Email)
	if err != nil {
		return err
	}
	hash, err := s.hasher.Hash(req.Password)
	if err != nil {
		return s.internal(ctx, "set user password", err)
	}
	next := *u
	next.PasswordHash = hash
	err = s.write(ctx, realmID, func(w *writeTx) error { return w.UpdateUser(ctx, &next, "password_hash") })
	if err != nil {
		return s.internal(ctx, "set user password", err)
	}
	s.InvalidateCaches(realmID)
	return nil
}

// passwordAccount is the human account of an email, whose password
// SetUserPassword sets.
func (r reads) passwordAccount(ctx context.Context, realmID int64, email string) (*storage.User, error) {
	u, err := r.st.GetUserByEmail(ctx, realmID, email)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, NotFound("No user with email %s", email)
	}
	if err != nil {
		return nil, r.s.internal(ctx, "set user password", err)
	}
	if u.IsBot {
		return nil, BadRequest("A bot has no password")
	}
	return u, nil
}
