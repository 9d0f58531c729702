package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/storage"
	"github.com/teamchat/chat/storage/bunstore"
)

// printInvite creates a reusable invitation link as the organization's
// owner and prints it with the curl command that accepts it (-invite).
// It opens the database next to a running server (or none) and serves
// nothing; the running server accepts the link. The link works for
// cfg.inviteMinutes minutes (0: the default, 10 days), for any number of
// people, with the member role.
func printInvite(ctx context.Context, cfg config, out io.Writer) error {
	store, err := bunstore.Open(ctx, cfg.db)
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	defer store.Close()
	realms, err := store.ListRealms(ctx)
	if err != nil {
		return err
	}
	if len(realms) == 0 {
		return errors.New("-invite: no organization yet: start the server once first")
	}
	realm := realms[0]
	owner, active, bot := chat.RoleOwner, true, false
	owners, err := store.FindUsers(ctx, realm.ID, storage.UserFilter{Role: &owner, Active: &active, Bot: &bot})
	if err != nil {
		return err
	}
	if len(owners) == 0 {
		return errors.New("-invite: the organization has no active owner")
	}
	svc := chat.New(store, chat.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	req := chat.CreateInviteLinkRequest{}
	if cfg.inviteMinutes != 0 {
		req.InviteExpiresInMinutes = chat.ExpiresInMinutes(int64(cfg.inviteMinutes))
	}
	resp, err := svc.CreateInviteLink(ctx, chat.Caller{RealmID: realm.ID, UserID: owners[0].ID}, req)
	if err != nil {
		return fmt.Errorf("-invite: %w", err)
	}
	key := strings.TrimSuffix(resp.InviteLink[strings.LastIndex(strings.TrimSuffix(resp.InviteLink, "/"), "/")+1:], "/")
	valid := "10 days"
	if cfg.inviteMinutes != 0 {
		valid = fmt.Sprintf("%d minutes", cfg.inviteMinutes)
	}
	fmt.Fprintf(out, "Invitation link to %q (any number of people, as members, for %s):\n  %s\n", realm.Name, valid, resp.InviteLink)
	fmt.Fprintf(out, "To join, each person runs (with their own email, name and password):\n")
	fmt.Fprintf(out, "  curl -sS %s/api/v1/invites/accept -d key=%s -d email=YOU@example.com -d 'full_name=Your Name' -d 'password=a long password'\n",
		realm.URL, key)
	fmt.Fprintf(out, "The answer carries user_id, email and api_key; use them as: curl -sS -u EMAIL:API_KEY %s/api/v1/users/me\n", realm.URL)
	return nil
}
