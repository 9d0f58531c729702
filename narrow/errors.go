package narrow

// Error codes carried by *Error. The caller maps them to its API error:
// both are HTTP 400 except CodeUnauthorized (401, the reference's
// MissingAuthenticationError).
const (
	// CodeBadRequest is a malformed narrow (wire shape, operand type).
	CodeBadRequest = "BAD_REQUEST"
	// CodeBadNarrow is a well-formed narrow the reference refuses
	// (unknown operator or operand, unknown channel or user, conflicting
	// terms). Such errors carry Desc, the API error's extra field `desc`.
	CodeBadNarrow = "BAD_NARROW"
	// CodeUnauthorized is a spectator (unauthenticated) narrow that may
	// not be served: the caller answers with its "Not logged in" 401.
	CodeUnauthorized = "UNAUTHORIZED"
)

// Error is a narrow that the reference rejects, with its exact message.
type Error struct {
	// Code is CodeBadRequest, CodeBadNarrow or CodeUnauthorized.
	Code string
	// Msg is the API error's msg.
	Msg string
	// Desc is set for CodeBadNarrow: the text after "Invalid narrow
	// operator: " (or "Invalid narrow operator combination: ").
	Desc string
}

func (e *Error) Error() string { return e.Msg }

// unauthorizedMsg is the reference's MissingAuthenticationError text.
const unauthorizedMsg = "Not logged in: API authentication or user session required"

func badRequest(msg string) *Error { return &Error{Code: CodeBadRequest, Msg: msg} }

// badNarrow is the reference's BadNarrowOperatorError.
func badNarrow(desc string) *Error {
	return &Error{Code: CodeBadNarrow, Msg: "Invalid narrow operator: " + desc, Desc: desc}
}

// badCombination is the reference's InvalidOperatorCombinationError.
func badCombination(desc string) *Error {
	return &Error{Code: CodeBadNarrow, Msg: "Invalid narrow operator combination: " + desc, Desc: desc}
}

func unauthorized() *Error { return &Error{Code: CodeUnauthorized, Msg: unauthorizedMsg} }
