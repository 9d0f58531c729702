package schemacheck

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/oasdiff/yaml"
)

// rawYAML is Zulip 10.2's zerver/openapi/zulip.yaml, unchanged (see NOTICE).
//
//go:embed zulip.yaml
var rawYAML []byte

// renames are applied to the yaml text before it is parsed. Each one
// matches a whole identifier only (the word-boundary regexes in the comments
// say exactly what matches), so that URLs such as zulip.com and all other
// text stay as they are. They are matched by hand rather than with package
// regexp, which takes about 0.2 s for these five patterns over 1.2 MB.
var renames = []rename{
	{old: "zulip_feature_level", new: "service_feature_level"}, // \bzulip_feature_level\b
	{old: "zulip_version", new: "service_version"},             // \bzulip_version\b
	{old: "zulip_merge_base", new: "service_merge_base"},       // \bzulip_merge_base\b
	{old: "zulip_extra_emoji", new: "service_extra_emoji"},     // \bzulip_extra_emoji\b
	// The path: (^|[^\w./~-])/zulip-outgoing-webhook\b(?!-). Not part of a
	// longer URL or path, and not the operationId "zulip-outgoing-webhooks".
	{old: "/zulip-outgoing-webhook", new: "/chat-outgoing-webhook", path: true},
}

type rename struct {
	old, new string
	path     bool // old is a path: it may not follow '.', '/', '~' or '-', nor be followed by '-'
}

func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func (r rename) apply(src []byte) []byte {
	old := []byte(r.old)
	var out []byte
	last, from := 0, 0
	for {
		i := bytes.Index(src[from:], old)
		if i < 0 {
			break
		}
		i += from
		end := i + len(old)
		from = i + 1
		if i > 0 {
			c := src[i-1]
			if isWordByte(c) || r.path && strings.IndexByte("./~-", c) >= 0 {
				continue
			}
		}
		if end < len(src) {
			c := src[end]
			if isWordByte(c) || r.path && c == '-' {
				continue
			}
		}
		out = append(out, src[last:i]...)
		out = append(out, r.new...)
		last, from = end, end
	}
	if out == nil {
		return src
	}
	return append(out, src[last:]...)
}

// RenamedYAML returns the reference yaml text with the renaming applied,
// exactly as it is handed to the parser.
func RenamedYAML() []byte {
	out := rawYAML
	for _, r := range renames {
		out = r.apply(out)
	}
	return out
}

var (
	loadOnce     sync.Once
	loadedDoc    *openapi3.T
	loadErr      error
	loadDuration time.Duration
)

// Spec returns the parsed, pre-processed reference document (loaded once
// and cached; see the package documentation for what loading changes, e.g.
// descriptions are emptied). Callers must treat it as read-only.
func Spec() (*openapi3.T, error) {
	loadOnce.Do(func() {
		start := time.Now()
		loadedDoc, loadErr = load()
		loadDuration = time.Since(start)
	})
	return loadedDoc, loadErr
}

// LoadDuration reports how long the one-time load (rename, parse, resolve
// references, pre-process) took; it loads the document if that has not
// happened yet.
func LoadDuration() time.Duration {
	_, _ = Spec()
	return loadDuration
}

func load() (*openapi3.T, error) {
	// YAML -> generic value, exactly as kin-openapi's own loader decodes
	// YAML (YAML 1.1 timestamps disabled, so dates stay strings).
	var generic any
	if _, err := yaml.Unmarshal(RenamedYAML(), &generic, yaml.DecodeOpts{DisableTimestamps: true}); err != nil {
		return nil, fmt.Errorf("schemacheck: parsing the reference yaml: %w", err)
	}
	stripDescriptions(generic)
	js, err := json.Marshal(generic)
	if err != nil {
		return nil, fmt.Errorf("schemacheck: re-encoding the reference as JSON: %w", err)
	}
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = false
	doc, err := loader.LoadFromData(js)
	if err != nil {
		return nil, fmt.Errorf("schemacheck: loading the reference OpenAPI document: %w", err)
	}
	if doc.Paths == nil || doc.Paths.Len() == 0 || doc.Components == nil {
		return nil, errors.New("schemacheck: the reference OpenAPI document has no paths or components")
	}
	preprocess(doc)
	return doc, nil
}

// stripDescriptions empties, in place, every "description" member whose
// value is a string (the key stays, as OpenAPI requires it on responses).
// That Markdown prose is two thirds of the document; it has no effect on
// validation, and kin-openapi's JSON decoding re-scans the bytes of each
// nested object, so emptying it makes loading about 40% faster. Values that
// are data rather than OpenAPI structure (example, examples, enum, default,
// discriminator mappings and x- extensions) are left untouched, so an
// example object with a "description" key keeps it. A property that is named
// "description" is a schema (an object), not a string, so it is kept too.
func stripDescriptions(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if k == "description" {
				if _, ok := x.(string); ok {
					v[k] = ""
					continue
				}
			}
			switch {
			case k == "example", k == "examples", k == "enum", k == "default", k == "mapping",
				strings.HasPrefix(k, "x-"):
				continue
			}
			stripDescriptions(x)
		}
	case []any:
		for _, x := range v {
			stripDescriptions(x)
		}
	}
}

// preprocess adapts the loaded schemas to openapi-core's OpenAPI 3.0
// semantics where kin-openapi differs; see the package documentation.
func preprocess(doc *openapi3.T) {
	seen := make(map[*openapi3.Schema]bool)
	var walk func(ref *openapi3.SchemaRef)
	walk = func(ref *openapi3.SchemaRef) {
		if ref == nil || ref.Value == nil || seen[ref.Value] {
			return
		}
		s := ref.Value
		seen[s] = true
		// The server sends a renamed property under both names (the
		// reference's clients read the zulip_* one), so each renamed
		// property is declared under its old name too, with the same
		// schema; additionalProperties: false then admits both.
		for _, r := range renames {
			if p := s.Properties[r.new]; p != nil && !r.path {
				if _, ok := s.Properties[r.old]; !ok {
					s.Properties[r.old] = p
				}
			}
		}
		// openapi-core rejects null only through the "type" keyword of a
		// schema object that is not itself nullable. kin-openapi rejects
		// null for every schema without nullable: true (even {}), except that
		// it hands null on to allOf/oneOf/anyOf subschemas. So a schema
		// without a type (and without enum, not, or subschemas that decide
		// for it) is marked nullable, which makes kin-openapi accept null
		// there as openapi-core does.
		if (s.Type == nil || len(*s.Type) == 0) && !s.Nullable &&
			len(s.AllOf) == 0 && len(s.OneOf) == 0 && len(s.AnyOf) == 0 &&
			len(s.Enum) == 0 && s.Not == nil {
			s.Nullable = true
		}
		// Conversely, for null kin-openapi evaluates only the subschemas of
		// a schema that has allOf/oneOf/anyOf, and skips its own "type". So
		// a non-nullable typed schema with subschemas gets one more allOf
		// branch holding just its type, which rejects null as openapi-core
		// does (and changes nothing for other values).
		if s.Type != nil && len(*s.Type) > 0 && !s.Nullable &&
			len(s.AllOf)+len(s.OneOf)+len(s.AnyOf) > 0 {
			s.AllOf = append(s.AllOf, &openapi3.SchemaRef{Value: &openapi3.Schema{Type: s.Type}})
		}
		for _, sub := range s.AllOf {
			walk(sub)
		}
		for _, sub := range s.OneOf {
			walk(sub)
		}
		for _, sub := range s.AnyOf {
			walk(sub)
		}
		walk(s.Not)
		walk(s.Items)
		for _, name := range sortedKeys(s.Properties) {
			walk(s.Properties[name])
		}
		walk(s.AdditionalProperties.Schema)
	}

	for _, name := range sortedKeys(doc.Components.Schemas) {
		walk(doc.Components.Schemas[name])
	}
	for _, name := range sortedKeys(doc.Components.Responses) {
		walkResponse(doc.Components.Responses[name], walk)
	}
	for _, p := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(p)
		for _, op := range item.Operations() {
			if op.Responses == nil {
				continue
			}
			for _, rr := range op.Responses.Map() {
				walkResponse(rr, walk)
			}
		}
	}
}

func walkResponse(rr *openapi3.ResponseRef, walk func(*openapi3.SchemaRef)) {
	if rr == nil || rr.Value == nil {
		return
	}
	for _, mt := range rr.Value.Content {
		if mt != nil {
			walk(mt.Schema)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// validationOptions are the kin-openapi settings used for every check:
// all errors rather than the first (MultiErrors), and response semantics
// for readOnly/writeOnly (readOnly properties are fine in a response; a
// writeOnly property present in a response is an error, and a required
// writeOnly property may be absent), as openapi-core does when it
// validates a response. Formats: kin-openapi only checks formats that have
// a registered validator (date, date-time, byte, int32, int64 by default)
// and ignores any other format name, so unknown formats never fail.
var validationOptions = []openapi3.SchemaValidationOption{
	openapi3.MultiErrors(),
	openapi3.VisitAsResponse(),
}

// operation identifies the declared response that Validate selected.
type operation struct {
	method, path, opID, status string
	schema                     *openapi3.SchemaRef
}

func (o operation) String() string {
	s := fmt.Sprintf("%s %s", o.method, o.path)
	if o.opID != "" {
		s += " (" + o.opID + ")"
	}
	return s + " response " + strconv.Quote(o.status)
}

// lookup finds the JSON response schema declared for (method, path, status).
func lookup(doc *openapi3.T, method, path string, status int) (operation, error) {
	method = strings.ToUpper(strings.TrimSpace(method))
	op := operation{method: method, path: path}
	item := doc.Paths.Value(path)
	if item == nil {
		msg := fmt.Sprintf("schemacheck: unknown path %q: the reference declares no such path template", path)
		if tmpl, ok := matchPath(doc, path); ok {
			msg += fmt.Sprintf(" (did you mean the template %q?)", tmpl)
		}
		return op, errors.New(msg)
	}
	o := item.GetOperation(method)
	if o == nil {
		methods := make([]string, 0, 4)
		for m := range item.Operations() {
			methods = append(methods, m)
		}
		sort.Strings(methods)
		return op, fmt.Errorf("schemacheck: unknown operation %s %s: the reference declares only %s for this path",
			method, path, strings.Join(methods, ", "))
	}
	op.opID = o.OperationID
	if o.Responses == nil {
		return op, fmt.Errorf("schemacheck: %s %s declares no responses", method, path)
	}
	var rr *openapi3.ResponseRef
	op.status = strconv.Itoa(status)
	keys := []string{op.status}
	if 100 <= status && status <= 599 {
		keys = append(keys, strconv.Itoa(status/100)+"XX")
	}
	for _, key := range append(keys, "default") {
		if rr = o.Responses.Value(key); rr != nil {
			op.status = key
			break
		}
	}
	if rr == nil || rr.Value == nil {
		declared := sortedKeys(o.Responses.Map())
		return op, fmt.Errorf("schemacheck: %s: no response declared for status %d (declared: %s)",
			op, status, strings.Join(declared, ", "))
	}
	if rr.Value.Content == nil {
		return op, fmt.Errorf("schemacheck: %s: the declared response has no content, so no JSON schema to validate against", op)
	}
	mt := rr.Value.Content.Get("application/json")
	if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
		return op, fmt.Errorf("schemacheck: %s: the declared response has no application/json schema (content types: %s)",
			op, strings.Join(sortedKeys(rr.Value.Content), ", "))
	}
	op.schema = mt.Schema
	return op, nil
}

// Validate checks body (a full JSON response, envelope included) against the
// response schema that the reference declares for (method, path, status).
// path is the OpenAPI path template as written in the yaml, e.g.
// "/users/{user_id}", "/users/me", "/server_settings". method is "GET",
// "POST", ... status is the HTTP status code (falls back to the "NXX" range
// and then the "default" response, if any). It returns a descriptive error
// (which operation, which JSON pointer, what failed) or nil.
func Validate(method, path string, status int, body []byte) error {
	doc, err := Spec()
	if err != nil {
		return err
	}
	op, err := lookup(doc, method, path, status)
	if err != nil {
		return err
	}
	value, err := decode(body)
	if err != nil {
		return fmt.Errorf("schemacheck: %s: %w", op, err)
	}
	if lines := validateResponse(op.schema.Value, value); len(lines) > 0 {
		return &Error{Subject: op.String(), Problems: lines}
	}
	return nil
}

// validateResponse validates value against a response's schema. A response
// schema that is a bare oneOf is the reference's way to list alternative
// examples (typically several CodedError variants that differ only in their
// example), so it is evaluated as anyOf: the body must match at least one
// alternative. Everywhere else oneOf keeps its standard meaning.
func validateResponse(s *openapi3.Schema, value any) []string {
	if len(s.OneOf) == 0 || !onlyOneOf(s) {
		return problems(s.VisitJSON(value, validationOptions...))
	}
	var alts [][]string
	for _, alt := range s.OneOf {
		lines := problems(alt.Value.VisitJSON(deepCopy(value), validationOptions...))
		if len(lines) == 0 {
			return nil
		}
		alts = append(alts, lines)
	}
	return summarizeAlternatives("/", "oneOf (treated as anyOf for a response)", alts)
}

// onlyOneOf reports whether s is nothing but a oneOf list (plus
// annotations such as description or example).
func onlyOneOf(s *openapi3.Schema) bool {
	c := *s
	c.OneOf = nil
	c.Description = ""
	c.Example = nil
	c.Title = ""
	c.Extensions = nil
	c.Nullable = false
	return c.IsEmpty()
}

// ValidateSchema validates body against a named component schema, e.g.
// "User", "CodedError".
func ValidateSchema(name string, body []byte) error {
	doc, err := Spec()
	if err != nil {
		return err
	}
	ref := doc.Components.Schemas[name]
	if ref == nil || ref.Value == nil {
		msg := fmt.Sprintf("schemacheck: unknown component schema %q", name)
		if similar := similarSchemaNames(doc, name); len(similar) > 0 {
			msg += " (similar: " + strings.Join(similar, ", ") + ")"
		}
		return errors.New(msg)
	}
	value, err := decode(body)
	if err != nil {
		return fmt.Errorf("schemacheck: schema %s: %w", name, err)
	}
	if lines := problems(ref.Value.VisitJSON(value, validationOptions...)); len(lines) > 0 {
		return &Error{Subject: "component schema " + name, Problems: lines}
	}
	return nil
}

// Check is the testing helper: it calls Validate and reports a failure with
// t.Errorf.
func Check(t testing.TB, method, path string, status int, body []byte) {
	t.Helper()
	if err := Validate(method, path, status, body); err != nil {
		t.Errorf("%v\nbody: %s", err, truncate(string(body), 2000))
	}
}

// CheckSchema is the testing helper for ValidateSchema.
func CheckSchema(t testing.TB, name string, body []byte) {
	t.Helper()
	if err := ValidateSchema(name, body); err != nil {
		t.Errorf("%v\nbody: %s", err, truncate(string(body), 2000))
	}
}

// MatchPath maps a concrete request path such as "/users/12" to the path
// template of the reference that serves it, such as "/users/{user_id}".
// Literal segments win over parameters ("/users/me" is its own template);
// parameters named *id match digits only and *email an email address, as in
// the reference's own path matching, so "/users/iago@example.com" maps to
// "/users/{email}".
func MatchPath(concrete string) (template string, ok bool) {
	doc, err := Spec()
	if err != nil {
		return "", false
	}
	return matchPath(doc, concrete)
}

func matchPath(doc *openapi3.T, concrete string) (string, bool) {
	if doc.Paths.Value(concrete) != nil {
		return concrete, true
	}
	segs := strings.Split(strings.Trim(concrete, "/"), "/")
	best, bestScore := "", -1
	for _, tmpl := range doc.Paths.InMatchingOrder() {
		tsegs := strings.Split(strings.Trim(tmpl, "/"), "/")
		if len(tsegs) != len(segs) {
			continue
		}
		score := 0
		for i, ts := range tsegs {
			if strings.HasPrefix(ts, "{") && strings.HasSuffix(ts, "}") {
				if !paramMatches(ts[1:len(ts)-1], segs[i]) {
					score = -1
					break
				}
				continue
			}
			if ts != segs[i] {
				score = -1
				break
			}
			score++
		}
		if score > bestScore || (score == bestScore && score >= 0 && tmpl < best) {
			best, bestScore = tmpl, score
		}
	}
	return best, bestScore >= 0
}

// paramMatches tells whether a concrete path segment can stand for the
// path parameter name, with the reference's own conventions (see
// create_endpoints_dict in zerver/openapi/openapi.py): a parameter whose name
// ends in "id" is numeric, one whose name ends in "email" is an email
// address, any other is any non-empty segment.
func paramMatches(name, seg string) bool {
	switch {
	case seg == "":
		return false
	case strings.HasSuffix(name, "id"):
		for _, c := range seg {
			if c < '0' || c > '9' {
				return false
			}
		}
		return true
	case strings.HasSuffix(name, "email"):
		at := strings.IndexByte(seg, '@')
		return at > 0 && strings.IndexByte(seg[at+1:], '.') > 0
	default:
		return true
	}
}

// Error is the error returned when a body does not match its schema.
type Error struct {
	// Subject names what was validated, e.g. `GET /users/me (get-own-user) response "200"`.
	Subject string
	// Problems lists each failure as "<JSON pointer>: <reason>".
	Problems []string
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "schemacheck: %s: body does not match the reference schema (%d problem", e.Subject, len(e.Problems))
	if len(e.Problems) != 1 {
		b.WriteString("s")
	}
	b.WriteString("):")
	for _, p := range e.Problems {
		b.WriteString("\n  - ")
		b.WriteString(strings.ReplaceAll(p, "\n", "\n    "))
	}
	return b.String()
}

func decode(body []byte) (any, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, errors.New("empty body: expected a JSON document")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("body is not valid JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("body is not valid JSON: trailing data after the first value")
	}
	return v, nil
}

// deepCopy copies a decoded JSON value, so that one validation pass cannot
// affect another through defaults that kin-openapi may inject.
func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = deepCopy(x)
		}
		return m
	case []any:
		s := make([]any, len(v))
		for i, x := range v {
			s[i] = deepCopy(x)
		}
		return s
	default:
		return v
	}
}

// maxAlternatives is how many of the closest alternatives are shown when a
// value matches no alternative of a oneOf/anyOf.
const maxAlternatives = 3

// problems flattens a kin-openapi validation error into "pointer: reason"
// lines, expanding allOf failures into the failures of their branches and
// summarizing oneOf failures by their closest alternatives.
func problems(err error) []string {
	if err == nil {
		return nil
	}
	var out []string
	seen := make(map[string]bool)
	add := func(lines ...string) {
		for _, l := range lines {
			if !seen[l] {
				seen[l] = true
				out = append(out, l)
			}
		}
	}
	var walk func(err error)
	walk = func(err error) {
		var me openapi3.MultiError
		if errors.As(err, &me) && !isSchemaError(err) {
			for _, e := range me {
				walk(e)
			}
			return
		}
		se, ok := err.(*openapi3.SchemaError)
		if !ok {
			add("/: " + err.Error())
			return
		}
		ptr := pointer(se)
		if children, ok := nested(se); ok {
			switch se.SchemaField {
			case "allOf":
				for _, c := range children {
					walk(c)
				}
				return
			case "oneOf", "anyOf":
				var alts [][]string
				for _, c := range children {
					alts = append(alts, problems(c))
				}
				add(summarizeAlternatives(ptr, se.SchemaField, alts)...)
				return
			}
		}
		reason := se.Reason
		if reason == "" {
			reason = fmt.Sprintf("does not match schema keyword %q", se.SchemaField)
		}
		if se.SchemaField != "" && !strings.Contains(reason, se.SchemaField) {
			reason += " [" + se.SchemaField + "]"
		}
		if se.SchemaField != "properties" && se.SchemaField != "required" && se.SchemaField != "allOf" {
			reason += "; got " + describe(se.Value)
		}
		add(ptr + ": " + reason)
	}
	walk(err)
	return out
}

func isSchemaError(err error) bool {
	_, ok := err.(*openapi3.SchemaError)
	return ok
}

// nested returns the per-branch errors that kin-openapi attaches (as the
// Origin) to an allOf/oneOf SchemaError.
func nested(se *openapi3.SchemaError) ([]error, bool) {
	if se.Origin == nil {
		return nil, false
	}
	var me openapi3.MultiError
	if errors.As(se.Origin, &me) {
		return me, true
	}
	return nil, false
}

func pointer(se *openapi3.SchemaError) string {
	p := se.JSONPointer()
	if len(p) == 0 {
		return "/"
	}
	esc := make([]string, len(p))
	for i, s := range p {
		esc[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
	}
	return "/" + strings.Join(esc, "/")
}

func summarizeAlternatives(ptr, keyword string, alts [][]string) []string {
	if len(alts) == 0 {
		return []string{ptr + ": value matches no alternative of " + keyword}
	}
	idx := make([]int, len(alts))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return len(alts[idx[a]]) < len(alts[idx[b]]) })
	var b strings.Builder
	fmt.Fprintf(&b, "%s: value matches none of the %d alternatives of %s", ptr, len(alts), keyword)
	shown := min(len(idx), maxAlternatives)
	if shown < len(idx) {
		fmt.Fprintf(&b, "; the %d closest", shown)
	}
	b.WriteString(":")
	for _, i := range idx[:shown] {
		fmt.Fprintf(&b, "\n  alternative %d:", i)
		for _, l := range alts[i] {
			b.WriteString("\n    " + strings.ReplaceAll(l, "\n", "\n    "))
		}
	}
	return []string{b.String()}
}

func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return fmt.Sprintf("an object with %d keys", len(v))
	case []any:
		return fmt.Sprintf("an array of %d items", len(v))
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return truncate(string(b), 80)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func similarSchemaNames(doc *openapi3.T, name string) []string {
	words := regexp.MustCompile(`[A-Z][a-z0-9]*|[a-z0-9]+`).FindAllString(name, -1)
	var out []string
	for _, n := range sortedKeys(doc.Components.Schemas) {
		ln := strings.ToLower(n)
		for _, w := range words {
			if len(w) >= 4 && strings.Contains(ln, strings.ToLower(w)) {
				out = append(out, n)
				break
			}
		}
	}
	if len(out) > 10 {
		out = append(out[:10], "…")
	}
	return out
}
