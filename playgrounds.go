package chat

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/yosida95/uritemplate/v3"

	"github.com/teamchat/chat/storage"
)

// Code playgrounds: sites an organization configures for opening code
// blocks of a language, each with an RFC 6570 URL template whose one
// variable is code. Only administrators add and remove them; everyone
// gets the whole list in register (realm_playgrounds) and again, in a
// realm_playgrounds event, after each change. There is no GET endpoint
// (nor in the reference).
//
// The checks and their texts are the reference's
// (zerver/views/realm_playgrounds.py, zerver/models/realm_playgrounds.py,
// zerver/actions/realm_playgrounds.py). Errors of the model's validation
// carry, like the reference's ValidationFailureError, the message of the
// first and an "errors" object with all of them by field ("__all__" for
// the model-wide ones). URL templates are parsed by
// github.com/yosida95/uritemplate, which follows RFC 6570 strictly: it
// refuses literal characters the RFC does not allow (a space, a stray
// "%"), which the reference's Python library lets through as it checks
// only the expressions.

// Playground is a code playground as register and the realm_playgrounds
// event show it.
type Playground struct {
	ID               int64  `json:"id"`
	Name             string `json:"name"`
	PygmentsLanguage string `json:"pygments_language"`
	URLTemplate      string `json:"url_template"`
}

// RealmPlaygroundsEvent carries the organization's whole playground list
// after a change.
type RealmPlaygroundsEvent struct {
	RealmPlaygrounds []Playground `json:"realm_playgrounds"`
}

// EventType implements EventBody.
func (RealmPlaygroundsEvent) EventType() string { return "realm_playgrounds" }

// AddPlaygroundRequest is the input of AddPlayground (POST
// /realm/playgrounds). The fields are in the reference's parameter order,
// which decides which missing one is reported.
type AddPlaygroundRequest struct {
	// Name tells the playgrounds of one language apart.
	Name string `json:"name"`
	// URLTemplate is an RFC 6570 template with exactly one variable, code.
	URLTemplate string `json:"url_template"`
	// PygmentsLanguage is the language of the code blocks it opens (any
	// name of letters, digits, spaces and _+,-./#, at most 40 characters).
	PygmentsLanguage string `json:"pygments_language"`
}

// AddPlaygroundResponse is the success body of AddPlayground.
type AddPlaygroundResponse struct {
	ID int64 `json:"id"`
}

// RemovePlaygroundRequest is the input of RemovePlayground (DELETE
// /realm/playgrounds/{playground_id}).
type RemovePlaygroundRequest struct {
	PlaygroundID int64 `json:"playground_id"`
}

const maxPygmentsLanguageLength = 40

// pygmentsLanguageOK is the reference's check_pygments_language (Python's
// "$" also matches before a final newline, which strip() then removes).
var pygmentsLanguageOK = regexp.MustCompile(`^[ a-zA-Z0-9_+-./#]*\n?$`)

// Texts of the reference's playground model validation.
const (
	errFieldBlank          = "This field cannot be blank."
	errInvalidURLTemplate  = "Invalid URL template."
	errMissingCodeVariable = `Missing the required variable "code" in the URL template`
	errOnlyCodeVariable    = `"code" should be the only variable present in the URL template`
	errPlaygroundExists    = "Realm playground with this Realm, Pygments language and Name already exists."
)

// AddPlayground adds a code playground (administrators only) and tells
// everyone the new list.
func (s *Service) AddPlayground(ctx context.Context, c Caller, req AddPlaygroundRequest) (*AddPlaygroundResponse, error) {
	_, realm, err := s.reads().admin(ctx, c)
	if err != nil {
		return nil, err
	}
	if utf8.RuneCountInString(req.PygmentsLanguage) > maxPygmentsLanguageLength {
		return nil, BadRequest("pygments_language is too long (limit: %d characters)", maxPygmentsLanguageLength)
	}
	if !pygmentsLanguageOK.MatchString(req.PygmentsLanguage) {
		return nil, BadRequest("Invalid characters in pygments language")
	}
	p := storage.Playground{RealmID: realm.ID, Name: pyStrip(req.Name),
		PygmentsLanguage: pyStrip(req.PygmentsLanguage), URLTemplate: pyStrip(req.URLTemplate)}
	err = s.write(ctx, realm.ID, func(w *writeTx) error {
		w.keepCallers()
		existing, err := w.ListPlaygrounds(ctx, realm.ID)
		if err != nil {
			return err
		}
		if err := checkPlayground(p, existing); err != nil {
			return err
		}
		if err := w.CreatePlayground(ctx, &p); errors.Is(err, storage.ErrConflict) {
			return playgroundInvalid([]string{"__all__"}, map[string][]string{"__all__": {errPlaygroundExists}})
		} else if err != nil {
			return err
		}
		return s.emitPlaygrounds(ctx, w, realm.ID)
	})
	if err != nil {
		return nil, s.internal(ctx, "add playground", err)
	}
	return &AddPlaygroundResponse{ID: p.ID}, nil
}

// checkPlayground is the reference's full_clean of a new playground:
// field errors in the model's field order (url_template, name,
// pygments_language), then the model-wide ones: the template's variables
// (when it parses), then a duplicate (language, name) pair (when neither
// is blank).
func checkPlayground(p storage.Playground, existing []storage.Playground) error {
	var keys []string
	errs := map[string][]string{}
	add := func(key, msg string) {
		if _, ok := errs[key]; !ok {
			keys = append(keys, key)
		}
		errs[key] = append(errs[key], msg)
	}
	tmpl, tmplErr := uritemplate.New(p.URLTemplate)
	if p.URLTemplate == "" {
		add("url_template", errFieldBlank)
	} else if tmplErr != nil {
		add("url_template", errInvalidURLTemplate)
	}
	if p.Name == "" {
		add("name", errFieldBlank)
	}
	if p.PygmentsLanguage == "" {
		add("pygments_language", errFieldBlank)
	}
	if tmplErr == nil {
		// Varnames lists each variable once, as the reference's set does.
		vars := tmpl.Varnames()
		if !slices.Contains(vars, "code") {
			add("__all__", errMissingCodeVariable)
		} else if len(vars) != 1 {
			add("__all__", errOnlyCodeVariable)
		}
	}
	if p.Name != "" && p.PygmentsLanguage != "" && slices.ContainsFunc(existing, func(e storage.Playground) bool {
		return e.PygmentsLanguage == p.PygmentsLanguage && e.Name == p.Name
	}) {
		add("__all__", errPlaygroundExists)
	}
	if len(keys) == 0 {
		return nil
	}
	return playgroundInvalid(keys, errs)
}

// playgroundInvalid is the reference's ValidationFailureError: the first
// message, and all of them by field.
func playgroundInvalid(keys []string, errs map[string][]string) error {
	return BadRequest("%s", errs[keys[0]][0]).With("errors", errs)
}

// RemovePlayground removes a code playground (administrators only) and
// tells everyone the new list.
func (s *Service) RemovePlayground(ctx context.Context, c Caller, req RemovePlaygroundRequest) (*EmptyResponse, error) {
	_, realm, err := s.reads().admin(ctx, c)
	if err != nil {
		return nil, err
	}
	err = s.write(ctx, realm.ID, func(w *writeTx) error {
		w.keepCallers()
		if err := w.DeletePlayground(ctx, realm.ID, req.PlaygroundID); errors.Is(err, storage.ErrNotFound) {
			return BadRequest("Invalid playground")
		} else if err != nil {
			return err
		}
		return s.emitPlaygrounds(ctx, w, realm.ID)
	})
	if err != nil {
		return nil, s.internal(ctx, "remove playground", err)
	}
	return &EmptyResponse{}, nil
}

// emitPlaygrounds tells everyone the organization's new playground list.
func (s *Service) emitPlaygrounds(ctx context.Context, w *writeTx, realmID int64) error {
	return emitWholeList(ctx, w, realmID, reads.realmPlaygrounds, func(l []Playground) EventBody { return RealmPlaygroundsEvent{RealmPlaygrounds: l} })
}

// realmPlaygrounds lists the organization's playgrounds by ID, as
// register's realm_playgrounds and the event show them.
func (r reads) realmPlaygrounds(ctx context.Context, realmID int64) ([]Playground, error) {
	rows, err := r.st.ListPlaygrounds(ctx, realmID)
	if err != nil {
		return nil, err
	}
	out := make([]Playground, len(rows))
	for i, p := range rows {
		out[i] = Playground{ID: p.ID, Name: p.Name, PygmentsLanguage: p.PygmentsLanguage, URLTemplate: p.URLTemplate}
	}
	return out, nil
}

// pyStrip is Python's str.strip(): it also removes the separators
// U+001C..U+001F, which unicode.IsSpace does not count.
func pyStrip(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f })
}
