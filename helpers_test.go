package chat_test

import (
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
	"github.com/teamchat/chat/internal/schemacheck"
	"github.com/teamchat/chat/transport/rest"
)

// checkSchema encodes a Service response in the REST success envelope and
// validates it against the reference's schema for the operation.
func checkSchema(t *testing.T, method, path string, resp any) {
	t.Helper()
	body, err := rest.EncodeSuccess(resp, nil)
	require.NoError(t, err)
	schemacheck.Check(t, method, path, 200, body)
}

// requireError asserts err is a *chat.Error of the given kind and code, with
// msg (when not empty).
func requireError(t *testing.T, err error, kind chat.Kind, code, msg string) *chat.Error {
	t.Helper()
	require.Error(t, err)
	e := chat.AsError(err)
	require.Equal(t, kind, e.Kind, "kind of %v", err)
	require.Equal(t, code, e.Code, "code of %v", err)
	if msg != "" {
		require.Equal(t, msg, e.Msg)
	}
	return e
}

func ptr[T any](v T) *T { return &v }

// orInvalid is a table row's expected Kind: KindInvalid unless the row
// says otherwise (a refusal is KindForbidden, a missing object
// KindNotFound, a clash KindConflict, whatever the wire status).
func orInvalid(k chat.Kind) chat.Kind {
	if k == chat.KindInternal {
		return chat.KindInvalid
	}
	return k
}

// testSeed is the seed of a randomized test: 20261125, or the value of
// the environment variable env.
func testSeed(t *testing.T, env string) uint64 {
	t.Helper()
	if v := os.Getenv(env); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		require.NoError(t, err, env)
		return n
	}
	return 20261125
}

// checkEnvelope validates the success envelope of an endpoint the reference
// OpenAPI description does not document (its schema: JsonSuccessBase).
func checkEnvelope(t *testing.T, resp any) {
	t.Helper()
	body, err := rest.EncodeSuccess(resp, nil)
	require.NoError(t, err)
	schemacheck.CheckSchema(t, "JsonSuccessBase", body)
}
