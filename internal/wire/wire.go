// Package wire is how this module's transports read what a chat.Error
// answers beyond its exported fields: the status the reference answers it
// with (which the error's Kind does not decide: a permission refusal is
// KindForbidden whether the reference answers 403 or 400) and the
// operation that failed, for logs. Package chat registers the reader when
// it is initialized, so that neither is part of its exported API.
package wire

// Answer is what an error answers on the wire beyond its code and message.
type Answer struct {
	// Status is the HTTP status.
	Status int
	// Op names the operation that failed ("" when unknown).
	Op string
}

var reader func(error) Answer

// SetReader registers how errors are read (package chat calls it once,
// from its init).
func SetReader(f func(error) Answer) { reader = f }

// Of returns err's answer. err is an error of package chat's Service (any
// other error answers as an internal one).
func Of(err error) Answer { return reader(err) }
