package chat

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/teamchat/chat/internal/wire"
	"github.com/teamchat/chat/storage"
)

// Kind says what an error means; the wire status is the reference's for
// that error, carried on it.
func TestKindAndWireStatusAreSeparate(t *testing.T) {
	cases := []struct {
		err    *Error
		kind   Kind
		status int
	}{
		{BadRequest("x"), KindInvalid, 400},
		{refused("x"), KindForbidden, 400},
		{Forbidden("x"), KindForbidden, 403},
		{noSuch("x"), KindNotFound, 400},
		{NotFound("x"), KindNotFound, 404},
		{clash("x"), KindConflict, 400},
		{Unauthorized("x"), KindUnauthenticated, 401},
		{RateLimited("x", 1), KindRateLimited, 429},
		{Unavailable(nil), KindUnavailable, 503},
		{Internal(nil), KindInternal, 500},
		// Built outside the package, without a status: the usual one of
		// its Kind.
		{&Error{Kind: KindTooLarge, Code: CodeBadRequest}, KindTooLarge, 413},
		{&Error{Kind: KindConflict, Code: CodeBadRequest}, KindConflict, 409},
		{&Error{Kind: KindNotFound, Code: CodeBadRequest}, KindNotFound, 404},
	}
	for _, c := range cases {
		assert.Equal(t, c.kind, c.err.Kind, "%v", c.err)
		assert.Equal(t, c.status, wire.Of(c.err).Status, "%v", c.err)
	}
	assert.Equal(t, 500, wire.Of(errors.New("foreign")).Status, "a foreign error is internal")
}

// The operation travels on the error: Error shows it, the transports read
// it, and errors.Is and errors.As see through it.
func TestErrorsCarryTheirOperation(t *testing.T) {
	s := New(storage.Store(nil))
	ctx := context.Background()

	err := s.internal(ctx, "archive channel", errCannotAdminister)
	assert.Equal(t, "archive channel: BAD_REQUEST: You do not have permission to administer this channel.", err.Error())
	assert.Equal(t, "archive channel", wire.Of(err).Op)
	assert.ErrorIs(t, err, errCannotAdminister, "the shared error is wrapped, not changed")
	assert.Empty(t, errCannotAdminister.op)
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, KindForbidden, e.Kind)
	assert.Equal(t, 400, wire.Of(err).Status)

	// The innermost operation stays.
	again := s.internal(ctx, "outer", fmt.Errorf("wrapped: %w", err))
	assert.Equal(t, "archive channel", wire.Of(again).Op)

	// An unexpected failure is logged and answered as internal, with its
	// operation and cause.
	boom := errors.New("disk on fire")
	err = s.internal(ctx, "flush presence", boom)
	assert.ErrorIs(t, err, boom)
	assert.Equal(t, KindInternal, ErrorKind(err))
	assert.Equal(t, "flush presence: BAD_REQUEST: Internal server error: disk on fire", err.Error())
	assert.True(t, AsError(err).Logged())

	err = s.internal(ctx, "read", fmt.Errorf("query: %w", storage.ErrUnavailable))
	assert.ErrorIs(t, err, storage.ErrUnavailable)
	assert.Equal(t, KindUnavailable, ErrorKind(err))
	assert.Equal(t, 503, wire.Of(err).Status)
	assert.Equal(t, "read", wire.Of(err).Op)
}
