package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/importer/slack/slacktest"
	"github.com/teamchat/chat/storage/bunstore"
)

func moveCfg(db string, m moveConfig) config {
	cfg := defaultConfig(db)
	cfg.move = m
	return cfg
}

// runCmd runs one command with stdin and returns its output.
func runCmd(t *testing.T, cfg config, stdin string) (string, error) {
	var out, errs bytes.Buffer
	err := runMove(context.Background(), cfg, strings.NewReader(stdin), &out, &errs)
	return out.String() + errs.String(), err
}

// -export writes the organization, -import loads it into another
// database (keeping IDs), and the owner logs in there with the old
// password; -set-password changes it from the environment or standard
// input.
func TestExportImportSetPasswordFlags(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src.db"), filepath.Join(dir, "dst.db")
	archive := filepath.Join(dir, "org.tar.gz")

	_, err := runCmd(t, moveCfg(src, moveConfig{exportFile: archive}), "")
	require.ErrorContains(t, err, "the database holds no organization")
	_, _, stop := start(t, defaultConfig(src))
	stop()

	out, err := runCmd(t, moveCfg(src, moveConfig{exportFile: archive}), "")
	require.NoError(t, err)
	assert.Contains(t, out, `exported "Teamchat"`)
	info, err := os.Stat(archive)
	require.NoError(t, err)
	assert.Greater(t, info.Size(), int64(100))

	out, err = runCmd(t, moveCfg(dst, moveConfig{importFile: archive}), "")
	require.NoError(t, err)
	assert.Contains(t, out, "(IDs kept)")
	_, err = runCmd(t, moveCfg(dst, moveConfig{importFile: archive}), "")
	require.ErrorContains(t, err, "an organization is already served at", "the same URL twice")

	bad := filepath.Join(dir, "bad.tar.gz")
	require.NoError(t, os.WriteFile(bad, []byte("not an archive"), 0o600))
	_, err = runCmd(t, moveCfg(filepath.Join(dir, "other.db"), moveConfig{importFile: bad}), "")
	require.ErrorContains(t, err, "not a teamchat export")

	t.Setenv("TEAMCHAT_NEW_PASSWORD", "short")
	_, err = runCmd(t, moveCfg(dst, moveConfig{setPassword: "owner@teamchat.localhost"}), "")
	require.ErrorContains(t, err, "The password is too weak")
	t.Setenv("TEAMCHAT_NEW_PASSWORD", "a brand new long password")
	out, err = runCmd(t, moveCfg(dst, moveConfig{setPassword: "owner@teamchat.localhost"}), "")
	require.NoError(t, err)
	assert.Contains(t, out, "password of owner@teamchat.localhost set")
	_, err = runCmd(t, moveCfg(dst, moveConfig{setPassword: "nobody@teamchat.localhost"}), "")
	require.ErrorContains(t, err, "No user with email")
	require.NoError(t, os.Unsetenv("TEAMCHAT_NEW_PASSWORD"))
	_, err = runCmd(t, moveCfg(dst, moveConfig{setPassword: "owner@teamchat.localhost"}), "typed on standard input\n")
	require.NoError(t, err)
	assertLogin(t, dst, "owner@teamchat.localhost", "typed on standard input")
}

func assertLogin(t *testing.T, db, email, password string) {
	ctx := context.Background()
	st, err := bunstore.Open(ctx, db)
	require.NoError(t, err)
	defer st.Close()
	realms, err := st.ListRealms(ctx)
	require.NoError(t, err)
	svc := chat.New(st)
	defer svc.Close()
	_, err = svc.FetchAPIKey(ctx, realms[0].ID, chat.FetchAPIKeyRequest{Username: email, Password: password})
	assert.NoError(t, err)
}

// -import-slack imports the Slack fixture of importer/slack.
func TestImportSlackFlag(t *testing.T) {
	dir := t.TempDir()
	zipPath := filepath.Join(dir, "slack.zip")
	require.NoError(t, os.WriteFile(zipPath, slacktest.Zip(t, nil), 0o600))
	db := filepath.Join(dir, "slack.db")
	cfg := moveConfig{importSlack: zipPath}
	c := moveCfg(db, cfg)
	c.url, c.realmName = "http://acme.example.com", "Acme"
	out, err := runCmd(t, c, "")
	require.NoError(t, err)
	assert.Contains(t, out, "imported organization")
	assert.Contains(t, out, "partyparrot", "the warnings")
	assert.Contains(t, out, "-set-password")
	t.Setenv("TEAMCHAT_NEW_PASSWORD", "a long password for carol")
	c.move = moveConfig{setPassword: "carol@example.com"}
	_, err = runCmd(t, c, "")
	require.NoError(t, err)
	assertLogin(t, db, "carol@example.com", "a long password for carol")
}
