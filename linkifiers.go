package chat

import (
	"context"
	"errors"
	"fmt"
	"regexp/syntax"
	"slices"

	"github.com/yosida95/uritemplate/v3"

	"github.com/teamchat/chat/storage"
)

// Linkifiers: an organization's regular expressions whose matches in
// messages and topics become links, each with an RFC 6570 URL template
// whose variables are the pattern's named groups. Only administrators
// change them; everyone may list them (GET /realm/linkifiers), and
// everyone gets the whole list, in order, in a realm_linkifiers event
// after each change. Register's realm_linkifiers holds the list only for
// clients with the linkifier_url_template capability (older clients
// expected another form), and realm_filters is always empty, as in the
// reference.
//
// The checks and their texts are the reference's
// (zerver/views/realm_linkifiers.py, zerver/models/linkifiers.py,
// zerver/actions/realm_linkifiers.py); validation errors have the shape
// of the playgrounds' (playgroundInvalid). Patterns are compiled by Go's
// regexp, which like the reference's re2 is RE2 syntax; a bad pattern's
// message names the error as RE2 does ("missing ): (abc") where the two
// libraries agree on the error, and as Go does otherwise. Differences
// from the reference: a new linkifier comes after its organization's
// others (the reference takes the largest order of all organizations),
// and the legacy realm_filters event is not sent (the reference 10.2
// no longer sends it either).

// Linkifier is a linkifier as GET /realm/linkifiers, register and the
// realm_linkifiers event show it.
type Linkifier struct {
	Pattern     string `json:"pattern"`
	URLTemplate string `json:"url_template"`
	ID          int64  `json:"id"`
}

// RealmLinkifiersEvent carries the organization's whole linkifier list,
// in order, after a change.
type RealmLinkifiersEvent struct {
	RealmLinkifiers []Linkifier `json:"realm_linkifiers"`
}

// EventType implements EventBody.
func (RealmLinkifiersEvent) EventType() string { return "realm_linkifiers" }

// GetLinkifiersResponse is the success body of GetLinkifiers.
type GetLinkifiersResponse struct {
	Linkifiers []Linkifier `json:"linkifiers"`
}

// AddLinkifierRequest is the input of AddLinkifier (POST /realm/filters).
type AddLinkifierRequest struct {
	// Pattern is a regular expression (RE2 syntax) with named groups.
	Pattern string `json:"pattern"`
	// URLTemplate is an RFC 6570 template whose variables are exactly
	// the pattern's named groups.
	URLTemplate string `json:"url_template"`
}

// AddLinkifierResponse is the success body of AddLinkifier.
type AddLinkifierResponse struct {
	ID int64 `json:"id"`
}

// UpdateLinkifierRequest is the input of UpdateLinkifier (PATCH
// /realm/filters/{filter_id}).
type UpdateLinkifierRequest struct {
	FilterID    int64  `json:"filter_id"`
	Pattern     string `json:"pattern"`
	URLTemplate string `json:"url_template"`
}

// RemoveLinkifierRequest is the input of RemoveLinkifier (DELETE
// /realm/filters/{filter_id}).
type RemoveLinkifierRequest struct {
	FilterID int64 `json:"filter_id"`
}

// ReorderLinkifiersRequest is the input of ReorderLinkifiers (PATCH
// /realm/linkifiers).
type ReorderLinkifiersRequest struct {
	// OrderedLinkifierIDs lists every linkifier of the organization once,
	// in the new order.
	OrderedLinkifierIDs []int64 `json:"ordered_linkifier_ids"`
}

// Texts of the reference's linkifier validation.
const (
	errLinkifierExists   = "Realm filter with this Realm and Pattern already exists."
	errLinkifierNotFound = "Linkifier not found."
)

// GetLinkifiers lists the organization's linkifiers in the order they
// apply. Everyone may.
func (s *Service) GetLinkifiers(ctx context.Context, c Caller) (*GetLinkifiersResponse, error) {
	return s.reads().getLinkifiers(ctx, c)
}

// getLinkifiers is GetLinkifiers reading through r.
func (r reads) getLinkifiers(ctx context.Context, c Caller) (*GetLinkifiersResponse, error) {
	_, realm, err := r.actor(ctx, c)
	if err != nil {
		return nil, err
	}
	list, err := r.realmLinkifiers(ctx, realm.ID)
	if err != nil {
		return nil, r.s.internal(ctx, "list linkifiers", err)
	}
	return &GetLinkifiersResponse{Linkifiers: list}, nil
}

// AddLinkifier adds a linkifier after the others (administrators only)
// and tells everyone the new list.
func (s *Service) AddLinkifier(ctx context.Context, c Caller, req AddLinkifierRequest) (*AddLinkifierResponse, error) {
	_, realm, err := s.reads().admin(ctx, c)
	if err != nil {
		return nil, err
	}
	l := storage.Linkifier{RealmID: realm.ID, Pattern: pyStrip(req.Pattern), URLTemplate: pyStrip(req.URLTemplate)}
	// Not keepCallers: the write's new generation drops the organization's
	// compiled linkifiers (linkifierCache).
	err = s.write(ctx, realm.ID, func(w *writeTx) error {
		existing, err := w.ListLinkifiers(ctx, realm.ID)
		if err != nil {
			return err
		}
		if err := checkLinkifier(l, existing); err != nil {
			return err
		}
		if err := w.CreateLinkifier(ctx, &l); errors.Is(err, storage.ErrConflict) {
			return linkifierExists()
		} else if err != nil {
			return err
		}
		return s.emitLinkifiers(ctx, w, realm.ID)
	})
	if err != nil {
		return nil, s.internal(ctx, "add linkifier", err)
	}
	return &AddLinkifierResponse{ID: l.ID}, nil
}

// UpdateLinkifier changes a linkifier's pattern and URL template, keeping
// its place (administrators only), and tells everyone the new list.
func (s *Service) UpdateLinkifier(ctx context.Context, c Caller, req UpdateLinkifierRequest) (*EmptyResponse, error) {
	_, realm, err := s.reads().admin(ctx, c)
	if err != nil {
		return nil, err
	}
	l := storage.Linkifier{ID: req.FilterID, RealmID: realm.ID, Pattern: pyStrip(req.Pattern), URLTemplate: pyStrip(req.URLTemplate)}
	err = s.write(ctx, realm.ID, func(w *writeTx) error {
		existing, err := w.ListLinkifiers(ctx, realm.ID)
		if err != nil {
			return err
		}
		// The reference looks the linkifier up before validating.
		if !slices.ContainsFunc(existing, func(e storage.Linkifier) bool { return e.ID == l.ID }) {
			return BadRequest(errLinkifierNotFound)
		}
		if err := checkLinkifier(l, existing); err != nil {
			return err
		}
		if err := w.UpdateLinkifier(ctx, &l); errors.Is(err, storage.ErrConflict) {
			return linkifierExists()
		} else if errors.Is(err, storage.ErrNotFound) {
			return BadRequest(errLinkifierNotFound)
		} else if err != nil {
			return err
		}
		return s.emitLinkifiers(ctx, w, realm.ID)
	})
	if err != nil {
		return nil, s.internal(ctx, "update linkifier", err)
	}
	return &EmptyResponse{}, nil
}

// RemoveLinkifier removes a linkifier (administrators only) and tells
// everyone the new list.
func (s *Service) RemoveLinkifier(ctx context.Context, c Caller, req RemoveLinkifierRequest) (*EmptyResponse, error) {
	_, realm, err := s.reads().admin(ctx, c)
	if err != nil {
		return nil, err
	}
	err = s.write(ctx, realm.ID, func(w *writeTx) error {
		if err := w.DeleteLinkifier(ctx, realm.ID, req.FilterID); errors.Is(err, storage.ErrNotFound) {
			return BadRequest(errLinkifierNotFound)
		} else if err != nil {
			return err
		}
		return s.emitLinkifiers(ctx, w, realm.ID)
	})
	if err != nil {
		return nil, s.internal(ctx, "remove linkifier", err)
	}
	return &EmptyResponse{}, nil
}

// ReorderLinkifiers sets the order the linkifiers apply in
// (administrators only) and tells everyone the new list. The list must
// name every linkifier exactly once; with no linkifiers, an empty list
// changes nothing and sends no event, as in the reference.
func (s *Service) ReorderLinkifiers(ctx context.Context, c Caller, req ReorderLinkifiersRequest) (*EmptyResponse, error) {
	_, realm, err := s.reads().admin(ctx, c)
	if err != nil {
		return nil, err
	}
	ids := map[int64]bool{}
	for _, id := range req.OrderedLinkifierIDs {
		ids[id] = true
	}
	if len(ids) < len(req.OrderedLinkifierIDs) {
		return nil, BadRequest("The ordered list must not contain duplicated linkifiers")
	}
	err = s.write(ctx, realm.ID, func(w *writeTx) error {
		existing, err := w.ListLinkifiers(ctx, realm.ID)
		if err != nil {
			return err
		}
		same := len(existing) == len(ids)
		for _, l := range existing {
			same = same && ids[l.ID]
		}
		if !same {
			return BadRequest("The ordered list must enumerate all existing linkifiers exactly once")
		}
		if len(existing) == 0 {
			return nil
		}
		if err := w.ReorderLinkifiers(ctx, realm.ID, req.OrderedLinkifierIDs); err != nil {
			return err
		}
		return s.emitLinkifiers(ctx, w, realm.ID)
	})
	if err != nil {
		return nil, s.internal(ctx, "reorder linkifiers", err)
	}
	return &EmptyResponse{}, nil
}

func linkifierExists() error {
	return playgroundInvalid([]string{"__all__"}, map[string][]string{"__all__": {errLinkifierExists}})
}

// checkLinkifier is the reference's full_clean of a new or changed
// linkifier (existing are the organization's linkifiers, l among them
// when it is changed): the field errors in the model's field order
// (pattern, url_template), then clean()'s one error (a bad pattern; else,
// when the template parses, the first template variable missing from the
// pattern's groups, else the first group missing from the template), then
// a taken pattern (unless the pattern is blank).
func checkLinkifier(l storage.Linkifier, existing []storage.Linkifier) error {
	var keys []string
	errs := map[string][]string{}
	add := func(key, msg string) {
		if _, ok := errs[key]; !ok {
			keys = append(keys, key)
		}
		errs[key] = append(errs[key], msg)
	}
	if l.Pattern == "" {
		add("pattern", errFieldBlank)
	}
	tmpl, tmplErr := uritemplate.New(l.URLTemplate)
	if l.URLTemplate == "" {
		add("url_template", errFieldBlank)
	} else if tmplErr != nil {
		add("url_template", errInvalidURLTemplate)
	}
	if groups, err := linkifierGroups(l.Pattern); err != nil {
		add("__all__", err.Error())
	} else if tmplErr == nil {
		vars := tmpl.Varnames()
		if name, ok := smallestMissing(vars, groups); ok {
			add("__all__", fmt.Sprintf("Group '%s' in URL template is not present in linkifier pattern.", name))
		} else if name, ok := smallestMissing(groups, vars); ok {
			add("__all__", fmt.Sprintf("Group '%s' in linkifier pattern is not present in URL template.", name))
		}
	}
	if l.Pattern != "" && slices.ContainsFunc(existing, func(e storage.Linkifier) bool {
		return e.ID != l.ID && e.Pattern == l.Pattern
	}) {
		add("__all__", errLinkifierExists)
	}
	if len(keys) == 0 {
		return nil
	}
	return playgroundInvalid(keys, errs)
}

// smallestMissing is the smallest of names not in set (Python's min of a set
// difference).
func smallestMissing(names, set []string) (string, bool) {
	var missing []string
	for _, n := range names {
		if !slices.Contains(set, n) {
			missing = append(missing, n)
		}
	}
	if len(missing) == 0 {
		return "", false
	}
	return slices.Min(missing), true
}

// linkifierGroups parses a pattern and returns its named groups, or the
// reference's "Bad regular expression: ..." error.
func linkifierGroups(pattern string) ([]string, error) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, errors.New("Bad regular expression: " + re2ErrorText(err))
	}
	var names []string
	var walk func(*syntax.Regexp)
	walk = func(r *syntax.Regexp) {
		if r.Op == syntax.OpCapture && r.Name != "" && !slices.Contains(names, r.Name) {
			names = append(names, r.Name)
		}
		for _, sub := range r.Sub {
			walk(sub)
		}
	}
	walk(re)
	return names, nil
}

// re2Codes are RE2's texts for the errors Go's parser also reports.
var re2Codes = map[syntax.ErrorCode]string{
	syntax.ErrInternalError:         "unexpected error",
	syntax.ErrInvalidCharClass:      "invalid character class",
	syntax.ErrInvalidCharRange:      "invalid character class range",
	syntax.ErrInvalidEscape:         "invalid escape sequence",
	syntax.ErrInvalidNamedCapture:   "invalid named capture group",
	syntax.ErrInvalidPerlOp:         "invalid perl operator",
	syntax.ErrInvalidRepeatOp:       "bad repetition operator",
	syntax.ErrInvalidRepeatSize:     "bad repetition operator",
	syntax.ErrInvalidUTF8:           "invalid UTF-8",
	syntax.ErrMissingBracket:        "missing ]",
	syntax.ErrMissingParen:          "missing )",
	syntax.ErrMissingRepeatArgument: "no argument for repetition operator",
	syntax.ErrTrailingBackslash:     "trailing \\",
	syntax.ErrUnexpectedParen:       "unexpected )",
}

// re2ErrorText renders a parse error as RE2's "code: argument".
func re2ErrorText(err error) string {
	var se *syntax.Error
	if !errors.As(err, &se) {
		return err.Error()
	}
	code, ok := re2Codes[se.Code]
	if !ok {
		code = se.Code.String()
	}
	return code + ": " + se.Expr
}

// emitLinkifiers tells everyone the organization's new linkifier list.
func (s *Service) emitLinkifiers(ctx context.Context, w *writeTx, realmID int64) error {
	return emitWholeList(ctx, w, realmID, reads.realmLinkifiers, func(l []Linkifier) EventBody { return RealmLinkifiersEvent{RealmLinkifiers: l} })
}

// realmLinkifiers lists the organization's linkifiers in order, as
// GetLinkifiers, register and the event show them.
func (r reads) realmLinkifiers(ctx context.Context, realmID int64) ([]Linkifier, error) {
	rows, err := r.st.ListLinkifiers(ctx, realmID)
	if err != nil {
		return nil, err
	}
	out := make([]Linkifier, len(rows))
	for i, l := range rows {
		out[i] = Linkifier{Pattern: l.Pattern, URLTemplate: l.URLTemplate, ID: l.ID}
	}
	return out, nil
}
